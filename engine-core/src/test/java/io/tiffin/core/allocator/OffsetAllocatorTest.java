package io.tiffin.core.allocator;

import static io.tiffin.core.allocator.OffsetAllocator.NO_SPACE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class OffsetAllocatorTest {

    private static final long KiB = 1L << 10;
    private static final long MiB = 1L << 20;
    private static final long GiB = 1L << 30;

    /** Size of one KV-cache object in Mooncake's allocator benchmark. */
    private static final long KV_OBJECT = 3_274_752L;
    /** {@link #KV_OBJECT} rounded up to its size class. */
    private static final long KV_OBJECT_ROUNDED = 3_407_872L;

    /** Runs a seeded randomised check and names the seed if it fails. */
    private static void withSeed(long seed, Consumer<SplittableRandom> body) {
        try {
            body.accept(new SplittableRandom(seed));
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("failed with seed " + seed + ": " + e.getMessage(), e);
        }
    }

    /** A fresh seed per run; pass {@code -Dtiffin.seed=N} to replay a reported failure. */
    private static long seed() {
        return Long.getLong("tiffin.seed", System.nanoTime());
    }

    private static int totalFreeRegions(OffsetAllocator allocator) {
        int total = 0;
        for (int bin = 0; bin < OffsetAllocator.NUM_BINS; bin++) {
            total += allocator.freeRegionsInBin(bin);
        }
        return total;
    }

    @Test
    void basicAllocateAndFree() {
        OffsetAllocator allocator = new OffsetAllocator(1 * MiB);
        assertThat(allocator.capacity()).isEqualTo(1 * MiB);
        assertThat(allocator.granularity()).isEqualTo(1);
        assertThat(allocator.freeBytes()).isEqualTo(1 * MiB);

        long a = allocator.allocate(1000);
        long b = allocator.allocate(4096);
        assertThat(a).isNotNegative();
        assertThat(b).isNotNegative().isNotEqualTo(a);
        assertThat(allocator.offset(a)).isZero();
        assertThat(allocator.allocatedSize(a)).isEqualTo(1024); // 1000 rounds up to the 1024 class
        assertThat(allocator.offset(b)).isEqualTo(1024);
        assertThat(allocator.allocatedSize(b)).isEqualTo(4096);
        assertThat(allocator.allocationCount()).isEqualTo(2);
        assertThat(allocator.usedBytes()).isEqualTo(1024 + 4096);
        assertThat(allocator.freeBytes()).isEqualTo(1 * MiB - 1024 - 4096);
        allocator.verifyInvariants();

        allocator.free(a);
        assertThat(allocator.allocationCount()).isEqualTo(1);
        assertThat(allocator.usedBytes()).isEqualTo(4096);
        long c = allocator.allocate(1000);
        assertThat(allocator.offset(c)).isZero(); // the freed block is found again
        allocator.free(b);
        allocator.free(c);
        assertThat(allocator.allocationCount()).isZero();
        assertThat(allocator.usedBytes()).isZero();
        assertThat(allocator.largestFreeRegion()).isEqualTo(1 * MiB);
        assertThat(totalFreeRegions(allocator)).isEqualTo(1);
        allocator.verifyInvariants();
    }

    @Test
    void allocationFailsWhenFull() {
        OffsetAllocator allocator = new OffsetAllocator(64 * KiB);
        List<Long> handles = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            long h = allocator.allocate(4 * KiB);
            assertThat(h).isNotNegative();
            handles.add(h);
        }
        assertThat(allocator.freeBytes()).isZero();
        assertThat(allocator.largestFreeRegion()).isZero();
        assertThat(allocator.allocate(1)).isEqualTo(NO_SPACE);
        assertThat(allocator.allocate(4 * KiB)).isEqualTo(NO_SPACE);

        allocator.free(handles.get(7));
        assertThat(allocator.allocate(8 * KiB)).isEqualTo(NO_SPACE);
        assertThat(allocator.allocate(4 * KiB)).isNotNegative();
        allocator.verifyInvariants();
    }

    @Test
    void randomAllocFreeCyclesNeverOverlap() {
        long seed = seed();
        withSeed(seed, random -> {
            long capacity = 16 * MiB + 12_345;
            OffsetAllocator allocator = new OffsetAllocator(capacity);
            Map<Long, Long> live = new HashMap<>();
            for (int step = 0; step < 50_000; step++) {
                boolean doAlloc = live.isEmpty() || random.nextInt(100) < 55;
                if (doAlloc) {
                    long size = randomSize(random);
                    long h = allocator.allocate(size);
                    if (h == NO_SPACE) {
                        assertThat(size).isGreaterThan(allocator.largestFreeRegion());
                        continue;
                    }
                    assertThat(live).doesNotContainKey(h);
                    assertThat(allocator.allocatedSize(h)).isGreaterThanOrEqualTo(size);
                    live.put(h, size);
                } else {
                    Long h = live.keySet().iterator().next();
                    if (random.nextBoolean()) {
                        h = live.keySet().stream()
                                .skip(random.nextInt(live.size()))
                                .findFirst()
                                .orElseThrow();
                    }
                    allocator.free(h);
                    live.remove(h);
                }
                if (step % 1000 == 0) {
                    assertDisjoint(allocator, live.keySet());
                    allocator.verifyInvariants();
                }
            }
            assertDisjoint(allocator, live.keySet());
            allocator.verifyInvariants();
        });
    }

    private static long randomSize(SplittableRandom random) {
        return switch (random.nextInt(4)) {
            case 0 -> 1 + random.nextInt(64);
            case 1 -> 1 + random.nextInt(4096);
            case 2 -> 1 + random.nextInt(256 * 1024);
            default -> 1 + random.nextInt(2 * 1024 * 1024);
        };
    }

    private static void assertDisjoint(OffsetAllocator allocator, Iterable<Long> handles) {
        TreeMap<Long, Long> intervals = new TreeMap<>();
        long used = 0;
        int count = 0;
        for (long h : handles) {
            long start = allocator.offset(h);
            long size = allocator.allocatedSize(h);
            assertThat(start).isNotNegative();
            assertThat(start + size).isLessThanOrEqualTo(allocator.capacity());
            assertThat(intervals.put(start, start + size))
                    .as("two allocations at offset %d", start)
                    .isNull();
            used += size;
            count++;
        }
        long previousEnd = 0;
        for (Map.Entry<Long, Long> e : intervals.entrySet()) {
            assertThat(e.getKey())
                    .as("overlap at offset %d", e.getKey())
                    .isGreaterThanOrEqualTo(previousEnd);
            previousEnd = e.getValue();
        }
        assertThat(allocator.usedBytes()).isEqualTo(used);
        assertThat(allocator.allocationCount()).isEqualTo(count);
        assertThat(allocator.freeBytes()).isEqualTo(allocator.capacity() - used);
    }

    @Test
    void freeingEverythingInRandomOrderCoalescesToOneRegion() {
        long seed = seed();
        withSeed(seed, random -> {
            OffsetAllocator allocator = new OffsetAllocator(256 * MiB);
            for (int round = 0; round < 5; round++) {
                List<Long> handles = new ArrayList<>();
                long h;
                while ((h = allocator.allocate(randomSize(random))) != NO_SPACE) {
                    handles.add(h);
                }
                assertThat(handles.size()).isGreaterThan(100);
                for (int i = handles.size() - 1; i > 0; i--) {
                    int j = random.nextInt(i + 1);
                    Long tmp = handles.get(i);
                    handles.set(i, handles.get(j));
                    handles.set(j, tmp);
                }
                for (long handle : handles) {
                    allocator.free(handle);
                }
                allocator.verifyInvariants();
                assertThat(allocator.allocationCount()).isZero();
                assertThat(allocator.usedBytes()).isZero();
                assertThat(allocator.largestFreeRegion()).isEqualTo(allocator.capacity());
                assertThat(totalFreeRegions(allocator)).isEqualTo(1);
            }
        });
    }

    @Test
    void uniformKvObjectsReachUtilisationIn1GiB() {
        OffsetAllocator allocator = new OffsetAllocator(1 * GiB);
        int count = fillWith(allocator, KV_OBJECT);
        double utilisation = (double) count * KV_OBJECT / allocator.capacity();
        assertThat(count).isEqualTo((int) (1 * GiB / KV_OBJECT_ROUNDED));
        assertThat(utilisation).isGreaterThanOrEqualTo(0.96);
        allocator.verifyInvariants();
    }

    @Test
    void uniformKvObjectsFillA64MiBAllocatorAsFarAsTheSizeClassAllows() {
        OffsetAllocator allocator = new OffsetAllocator(64 * MiB);
        int count = fillWith(allocator, KV_OBJECT);
        // 19 rounded objects fit; a 20th needs 64.75 MiB. Reserved space is ~96.5% of capacity and
        // each object uses 96.09% of its reservation, so payload utilisation is bounded by 19/20.
        assertThat(count).isEqualTo((int) (64 * MiB / KV_OBJECT_ROUNDED)).isEqualTo(19);
        assertThat((double) allocator.usedBytes() / allocator.capacity()).isGreaterThanOrEqualTo(0.96);
        assertThat((double) KV_OBJECT / KV_OBJECT_ROUNDED).isGreaterThanOrEqualTo(0.96);
        allocator.verifyInvariants();
    }

    /** Allocates until failure, then checks that churn keeps the same count. Returns the count. */
    private static int fillWith(OffsetAllocator allocator, long size) {
        List<Long> handles = new ArrayList<>();
        long h;
        while ((h = allocator.allocate(size)) != NO_SPACE) {
            assertThat(allocator.allocatedSize(h)).isEqualTo(KV_OBJECT_ROUNDED);
            handles.add(h);
        }
        int count = handles.size();
        // Free every other object and refill: freed blocks land in exactly the searched bin.
        SplittableRandom random = new SplittableRandom(42);
        for (int round = 0; round < 20; round++) {
            for (int i = 0; i < handles.size(); i++) {
                if (random.nextBoolean()) {
                    allocator.free(handles.get(i));
                    handles.set(i, NO_SPACE);
                }
            }
            for (int i = 0; i < handles.size(); i++) {
                if (handles.get(i) == NO_SPACE) {
                    long again = allocator.allocate(size);
                    assertThat(again).as("refill after churn round %d", round).isNotNegative();
                    handles.set(i, again);
                }
            }
            assertThat(allocator.allocate(size)).isEqualTo(NO_SPACE);
        }
        assertThat(allocator.allocationCount()).isEqualTo(count);
        return count;
    }

    @Test
    void multiplierBitsScaleLargeCapacities() {
        OffsetAllocator allocator = new OffsetAllocator(64 * GiB);
        assertThat(allocator.granularity()).isEqualTo(32);
        assertThat(allocator.capacity()).isEqualTo(64 * GiB);

        long one = allocator.allocate(1);
        assertThat(allocator.allocatedSize(one)).isEqualTo(32);
        long odd = allocator.allocate(33);
        assertThat(allocator.allocatedSize(odd)).isEqualTo(64);
        assertThat(allocator.offset(odd) % 32).isZero();
        assertThat(allocator.allocatedSize(allocator.allocate(KV_OBJECT))).isEqualTo(KV_OBJECT_ROUNDED);
        allocator.reset();

        assertThat(allocator.largestFreeRegion()).isEqualTo(64 * GiB);
        assertThat(allocator.allocate(64 * GiB + 1)).isEqualTo(NO_SPACE);
        long whole = allocator.allocate(64 * GiB);
        assertThat(whole).isNotNegative();
        assertThat(allocator.offset(whole)).isZero();
        assertThat(allocator.allocatedSize(whole)).isEqualTo(64 * GiB);
        assertThat(allocator.allocate(1)).isEqualTo(NO_SPACE);
        allocator.free(whole);

        // Offsets beyond 2^31 units round-trip through the unsigned node fields.
        long first = allocator.allocate(48 * GiB);
        long second = allocator.allocate(8 * GiB);
        assertThat(allocator.offset(second)).isEqualTo(48 * GiB);
        assertThat(allocator.allocatedSize(second)).isEqualTo(8 * GiB);
        allocator.free(first);
        allocator.free(second);
        allocator.verifyInvariants();

        assertThat(new OffsetAllocator(OffsetAllocator.MAX_BIN_SIZE).granularity()).isEqualTo(1);
        assertThat(new OffsetAllocator(OffsetAllocator.MAX_BIN_SIZE + 1).granularity()).isEqualTo(2);
        assertThat(new OffsetAllocator(4 * GiB).granularity()).isEqualTo(2);
        // A capacity that is not a multiple of the unit loses its tail.
        assertThat(new OffsetAllocator(64 * GiB + 31).capacity()).isEqualTo(64 * GiB);
    }

    @Test
    void largestUnscaledCapacityUsesTheTopUnsignedRange() {
        OffsetAllocator allocator = new OffsetAllocator(OffsetAllocator.MAX_BIN_SIZE);
        assertThat(allocator.largestFreeRegion()).isEqualTo(OffsetAllocator.MAX_BIN_SIZE);
        long low = allocator.allocate(3 * GiB);
        long high = allocator.allocate(GiB / 2);
        assertThat(allocator.offset(high)).isEqualTo(3 * GiB);
        long top = allocator.allocate(GiB / 4);
        assertThat(allocator.offset(top)).isEqualTo(3 * GiB + GiB / 2);
        assertThat(allocator.freeBytes()).isZero();
        allocator.free(high);
        allocator.free(low);
        allocator.free(top);
        assertThat(allocator.largestFreeRegion()).isEqualTo(OffsetAllocator.MAX_BIN_SIZE);
        allocator.verifyInvariants();
    }

    @Test
    void binEdgeCases() {
        OffsetAllocator allocator = new OffsetAllocator(1 * GiB);
        long[] sizes = {1, 2, 3, 5, 7, 8, 9, 13, 17, 31, 127, 1009, 4099, 65_521, 1_000_003, 16_777_259};
        for (long size : sizes) {
            long h = allocator.allocate(size);
            assertThat(h).as("size %d", size).isNotNegative();
            long reserved = allocator.allocatedSize(h);
            int bin = SizeClasses.roundUp(size);
            assertThat(reserved).as("size %d", size).isEqualTo(OffsetAllocator.binSize(bin));
            assertThat(reserved).as("size %d", size).isBetween(size, size + size / 8);
            allocator.free(h);
        }
        allocator.verifyInvariants();

        long exact = allocator.allocate(1 * GiB);
        assertThat(allocator.allocatedSize(exact)).isEqualTo(1 * GiB);
        allocator.free(exact);
        long almost = allocator.allocate(1 * GiB - 1);
        assertThat(allocator.allocatedSize(almost)).isEqualTo(1 * GiB);
        allocator.free(almost);
        assertThat(allocator.allocate(1 * GiB + 1)).isEqualTo(NO_SPACE);
        assertThat(allocator.allocate(Long.MAX_VALUE)).isEqualTo(NO_SPACE);

        assertThatThrownBy(() -> allocator.allocate(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("0");
        assertThatThrownBy(() -> allocator.allocate(-17))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-17");
        assertThatThrownBy(() -> allocator.freeRegionsInBin(OffsetAllocator.NUM_BINS))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> OffsetAllocator.binSize(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new OffsetAllocator(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new OffsetAllocator(1 * MiB, 0))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void capacityThatIsNotABinSizeIsLimitedByItsSizeClass() {
        OffsetAllocator allocator = new OffsetAllocator(1000);
        // 1000 lies in the [960, 1024) class: requests above 960 round up to 1024 and cannot fit.
        assertThat(allocator.largestFreeRegion()).isEqualTo(960);
        assertThat(allocator.freeRegionsInBin(SizeClasses.roundDown(1000))).isEqualTo(1);
        assertThat(allocator.allocate(1000)).isEqualTo(NO_SPACE);
        assertThat(allocator.allocate(999)).isEqualTo(NO_SPACE);
        assertThat(allocator.allocate(961)).isEqualTo(NO_SPACE);
        long h = allocator.allocate(960);
        assertThat(h).isNotNegative();
        assertThat(allocator.allocatedSize(h)).isEqualTo(960);
        assertThat(allocator.freeBytes()).isEqualTo(40);
        assertThat(allocator.largestFreeRegion()).isEqualTo(40);
        assertThat(allocator.allocate(40)).isNotNegative();
        assertThat(allocator.freeBytes()).isZero();
        allocator.verifyInvariants();
    }

    @Test
    void smallFloatBinsRoundTrip() {
        for (int bin = 0; bin < OffsetAllocator.NUM_BINS; bin++) {
            long size = OffsetAllocator.binSize(bin);
            assertThat(SizeClasses.roundUp(size)).isEqualTo(bin);
            assertThat(SizeClasses.roundDown(size)).isEqualTo(bin);
            if (bin > 0) {
                assertThat(size).isGreaterThan(OffsetAllocator.binSize(bin - 1));
            }
        }
        assertThat(OffsetAllocator.binSize(7)).isEqualTo(7);
        assertThat(OffsetAllocator.binSize(8)).isEqualTo(8);
        assertThat(OffsetAllocator.binSize(239)).isEqualTo(OffsetAllocator.MAX_BIN_SIZE);
        long seed = seed();
        withSeed(seed, random -> {
            for (int i = 0; i < 100_000; i++) {
                long size = 1 + random.nextLong(OffsetAllocator.MAX_BIN_SIZE);
                int up = SizeClasses.roundUp(size);
                int down = SizeClasses.roundDown(size);
                assertThat(OffsetAllocator.binSize(up)).isGreaterThanOrEqualTo(size);
                assertThat(OffsetAllocator.binSize(up - 1)).isLessThan(size);
                assertThat(OffsetAllocator.binSize(down)).isLessThanOrEqualTo(size);
                assertThat(OffsetAllocator.binSize(down + 1)).isGreaterThan(size);
            }
        });
        OffsetAllocator scaled = new OffsetAllocator(64 * GiB);
        assertThat(scaled.binSizeBytes(8)).isEqualTo(8 * 32);
        assertThat(scaled.binSizeBytes(255)).isEqualTo(OffsetAllocator.binSize(255) * 32);
    }

    @Test
    void doubleFreeAndInvalidHandlesThrow() {
        OffsetAllocator allocator = new OffsetAllocator(1 * MiB);
        long h = allocator.allocate(100);
        long other = allocator.allocate(100);
        allocator.free(h);
        assertThatThrownBy(() -> allocator.free(h))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining(Long.toString(h));
        assertThatThrownBy(() -> allocator.free(-1)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> allocator.free(1L << 40)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> allocator.free(500)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> allocator.offset(h)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> allocator.allocatedSize(h)).isInstanceOf(IllegalStateException.class);
        // The failed calls changed nothing.
        assertThat(allocator.allocationCount()).isEqualTo(1);
        assertThat(allocator.allocatedSize(other)).isEqualTo(100 + 4); // 100 rounds up to 104
        allocator.verifyInvariants();
        allocator.free(other);
        assertThatThrownBy(() -> allocator.free(other)).isInstanceOf(IllegalStateException.class);
        allocator.verifyInvariants();
    }

    @Test
    void largestFreeRegionIsAnExactFastFailHint() {
        long seed = seed();
        withSeed(seed, random -> {
            OffsetAllocator allocator = new OffsetAllocator(32 * MiB + 777);
            List<Long> live = new ArrayList<>();
            for (int step = 0; step < 3000; step++) {
                if (live.isEmpty() || random.nextInt(100) < 60) {
                    long h = allocator.allocate(randomSize(random));
                    if (h != NO_SPACE) {
                        live.add(h);
                    }
                } else {
                    allocator.free(live.remove(random.nextInt(live.size())));
                }
                long largest = allocator.largestFreeRegion();
                assertThat(largest).isLessThanOrEqualTo(allocator.freeBytes());
                assertThat(allocator.allocate(largest + 1)).as("step %d", step).isEqualTo(NO_SPACE);
                if (largest > 0) {
                    long h = allocator.allocate(largest);
                    assertThat(h).as("step %d", step).isNotNegative();
                    allocator.free(h);
                }
            }
            allocator.verifyInvariants();
        });
    }

    @Test
    void nodeExhaustionFailsCleanly() {
        OffsetAllocator allocator = new OffsetAllocator(1 * MiB, 4);
        List<Long> handles = new ArrayList<>();
        // Each split needs a node for the remainder: 4 nodes hold 3 allocations plus the tail.
        for (int i = 0; i < 3; i++) {
            long h = allocator.allocate(1 * KiB);
            assertThat(h).isNotNegative();
            handles.add(h);
        }
        assertThat(allocator.allocate(1 * KiB)).isEqualTo(NO_SPACE);
        assertThat(allocator.allocate(1)).isEqualTo(NO_SPACE);
        assertThat(allocator.allocationCount()).isEqualTo(3);
        allocator.verifyInvariants();

        // Freeing a block makes its node reusable; reusing the exact block needs no split.
        allocator.free(handles.get(1));
        long again = allocator.allocate(1 * KiB);
        assertThat(again).isNotNegative();
        assertThat(allocator.offset(again)).isEqualTo(1 * KiB);
        allocator.verifyInvariants();

        // Once a neighbour merge releases a node, splitting works again.
        allocator.free(handles.get(2));
        assertThat(allocator.allocate(2 * KiB)).isNotNegative();
        allocator.verifyInvariants();

        OffsetAllocator single = new OffsetAllocator(4096, 1);
        assertThat(single.allocate(1)).isEqualTo(NO_SPACE);
        long whole = single.allocate(4096);
        assertThat(whole).isNotNegative();
        single.free(whole);
        single.verifyInvariants();
    }

    @Test
    void largeAllocatorStartsSmallAndGrowsByHalvesAsAllocationsCome() {
        // A master holds one allocator per mounted 64 GiB segment: empty, it must not cost megabytes.
        OffsetAllocator allocator = new OffsetAllocator(64L << 30);
        assertThat(allocator.nodeCapacity()).isEqualTo(OffsetAllocator.INITIAL_NODES);
        List<Long> handles = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            handles.add(allocator.allocate(4096));
        }
        assertThat(handles).allMatch(h -> h >= 0);
        // 1000 used + the free rest: 64 grown by half and one, seven times (97, 146, 220, 331, 497, 746, 1120)
        assertThat(allocator.nodeCapacity()).isEqualTo(1120);
        assertDisjoint(allocator, handles);
        handles.forEach(allocator::free);
        assertThat(totalFreeRegions(allocator)).isEqualTo(1); // merged back into one region
        assertThat(allocator.allocationCount()).isZero();
        allocator.verifyInvariants();
    }

    @Test
    void restoreGrowsNodeStorageForEveryRecord() {
        // A master taking over restores a node's records into an allocator that starts with 64 nodes.
        OffsetAllocator allocator = new OffsetAllocator(64L << 30);
        int n = 1000;
        long[] offsets = new long[n];
        long[] sizes = new long[n];
        for (int i = 0; i < n; i++) {
            offsets[i] = (long) i * 8192;
            sizes[i] = 4096;
        }
        long[] handles = allocator.restore(offsets, sizes);
        assertThat(java.util.Arrays.stream(handles).filter(h -> h < 0).count()).as("records dropped").isZero();
        assertThat(allocator.allocationCount()).isEqualTo(n);
        allocator.verifyInvariants();
    }

    @Test
    void nodeStorageGrowsOnDemand() {
        // 1 MiB starts with 64 nodes; 20 000 tiny allocations need far more.
        OffsetAllocator allocator = new OffsetAllocator(1 * MiB);
        List<Long> handles = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) {
            long h = allocator.allocate(16);
            assertThat(h).isNotNegative();
            handles.add(h);
        }
        assertDisjoint(allocator, handles);
        allocator.verifyInvariants();
        for (long h : handles) {
            allocator.free(h);
        }
        assertThat(allocator.largestFreeRegion()).isEqualTo(1 * MiB);
        assertThat(totalFreeRegions(allocator)).isEqualTo(1);
        allocator.verifyInvariants();
    }

    @Test
    void resetFreesEverything() {
        OffsetAllocator allocator = new OffsetAllocator(8 * MiB);
        long h = allocator.allocate(3 * MiB);
        allocator.allocate(1234);
        allocator.reset();
        assertThat(allocator.allocationCount()).isZero();
        assertThat(allocator.usedBytes()).isZero();
        assertThat(allocator.freeBytes()).isEqualTo(8 * MiB);
        assertThat(allocator.largestFreeRegion()).isEqualTo(8 * MiB);
        assertThat(totalFreeRegions(allocator)).isEqualTo(1);
        assertThatThrownBy(() -> allocator.free(h)).isInstanceOf(IllegalStateException.class);
        allocator.verifyInvariants();
        assertThat(allocator.allocate(8 * MiB)).isNotNegative();
    }

    @Test
    void restoreHoldsExactlyTheReportedAllocationsAndRefusesOverlaps() {
        OffsetAllocator original = new OffsetAllocator(1L << 20);
        long[] offsets = new long[40];
        long[] sizes = new long[40];
        java.util.SplittableRandom r = new java.util.SplittableRandom(7);
        for (int i = 0; i < 40; i++) {
            sizes[i] = 64 + r.nextInt(8000);
            offsets[i] = original.offset(original.allocate(sizes[i]));
        }
        OffsetAllocator restored = new OffsetAllocator(1L << 20);
        long[] handles = restored.restore(offsets, sizes);
        restored.verifyInvariants();
        assertThat(restored.usedBytes()).isEqualTo(original.usedBytes());
        for (int i = 0; i < 40; i++) {
            assertThat(handles[i]).isNotNegative();
            assertThat(restored.offset(handles[i])).isEqualTo(offsets[i]);
            assertThat(restored.allocatedSize(handles[i])).isEqualTo(original.allocatedSize(i));
        }
        // freeing what was restored gives the whole range back
        for (long h : handles) {
            restored.free(h);
        }
        restored.verifyInvariants();
        assertThat(restored.usedBytes()).isZero();
        // a second allocation over the same bytes, and one past the end, are refused
        long[] clash = restored.restore(new long[] {0, 64, 1L << 20}, new long[] {128, 64, 64});
        assertThat(clash[0]).isNotNegative();
        assertThat(clash[1]).isEqualTo(OffsetAllocator.NO_SPACE);
        assertThat(clash[2]).isEqualTo(OffsetAllocator.NO_SPACE);
        restored.verifyInvariants();
    }
}
