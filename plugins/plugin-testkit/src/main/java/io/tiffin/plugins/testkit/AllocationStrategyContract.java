package io.tiffin.plugins.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.spi.allocation.AllocationRequest;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.api.spi.allocation.SegmentStatus;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link AllocationStrategy} must keep. Extend it in a JUnit 5 test and return the
 * strategy under test from {@link #strategy()}:
 *
 * <pre>{@code
 * class MyStrategyContractTest extends AllocationStrategyContract {
 *     @Override
 *     protected AllocationStrategy strategy() {
 *         return new MyStrategy();
 *     }
 * }
 * }</pre>
 *
 * <p>Each check places many random requests on random clusters of {@link SimulatedSegment}s through a
 * {@link RecordingReplicaSink}, which enforces nothing, and checks the record: distinct segments per
 * replica, the preferred segment honoured when it fits, never more replicas than asked, best effort
 * when segments are full (and no exception when nothing fits), and no offer to a segment that is not
 * {@link SegmentStatus#OK}. The seed is printed; replay a failure with {@code -Dtiffin.seed=N}.
 * Outside JUnit, {@link #verify(AllocationStrategy)} runs every check.
 *
 * <p>Thread-safety: each test method uses its own clusters and random source; JUnit may run the
 * methods in parallel if the strategy is thread-safe, as the SPI requires.
 */
public abstract class AllocationStrategyContract {
    private static final long MiB = 1L << 20;
    private static final int CASES = 300;

    /** The strategy under test; may return a new instance or the same one on every call. */
    protected abstract AllocationStrategy strategy();

    @Test
    void replicasGoToDistinctSegments() {
        run("replicasGoToDistinctSegments", strategy(), AllocationStrategyContract::checkDistinctSegments);
    }

    @Test
    void preferredSegmentIsHonouredWhenItFits() {
        run("preferredSegmentIsHonouredWhenItFits", strategy(), AllocationStrategyContract::checkPreferredHonoured);
    }

    @Test
    void neverPlacesMoreReplicasThanAsked() {
        run("neverPlacesMoreReplicasThanAsked", strategy(), AllocationStrategyContract::checkNoMoreThanAsked);
    }

    @Test
    void placesAsManyAsFitWhenSegmentsAreFull() {
        run("placesAsManyAsFitWhenSegmentsAreFull", strategy(), AllocationStrategyContract::checkBestEffort);
    }

    @Test
    void returnsQuietlyWhenNothingFits() {
        run("returnsQuietlyWhenNothingFits", strategy(), AllocationStrategyContract::checkNothingFits);
    }

    @Test
    void neverOffersDrainingOrUnmountingSegments() {
        run("neverOffersDrainingOrUnmountingSegments", strategy(), AllocationStrategyContract::checkOnlyOkOffered);
    }

    /**
     * Runs every check of the contract on {@code strategy} with a fresh seed (or {@code -Dtiffin.seed}).
     *
     * @throws AssertionError naming the check and the seed on the first violation
     */
    public static void verify(AllocationStrategy strategy) {
        run("replicasGoToDistinctSegments", strategy, AllocationStrategyContract::checkDistinctSegments);
        run("preferredSegmentIsHonouredWhenItFits", strategy, AllocationStrategyContract::checkPreferredHonoured);
        run("neverPlacesMoreReplicasThanAsked", strategy, AllocationStrategyContract::checkNoMoreThanAsked);
        run("placesAsManyAsFitWhenSegmentsAreFull", strategy, AllocationStrategyContract::checkBestEffort);
        run("returnsQuietlyWhenNothingFits", strategy, AllocationStrategyContract::checkNothingFits);
        run("neverOffersDrainingOrUnmountingSegments", strategy, AllocationStrategyContract::checkOnlyOkOffered);
    }

    private static void run(String check, AllocationStrategy strategy,
            BiConsumer<AllocationStrategy, SplittableRandom> body) {
        long seed = Long.getLong("tiffin.seed", System.nanoTime());
        System.out.println("AllocationStrategyContract." + check + " on " + strategy.getClass().getName()
                + ": seed = " + seed + " (replay with -Dtiffin.seed=" + seed + ")");
        try {
            body.accept(strategy, new SplittableRandom(seed));
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError(check + " failed for " + strategy.getClass().getName() + " with seed " + seed
                    + " (replay with -Dtiffin.seed=" + seed + "): " + e.getMessage(), e);
        }
    }

    // ------------------------------------------------------------------------------------- checks

    private static void checkDistinctSegments(AllocationStrategy strategy, SplittableRandom rnd) {
        for (int c = 0; c < CASES; c++) {
            List<SimulatedSegment> cluster = randomCluster(rnd, 1 + rnd.nextInt(12), 0.0);
            AllocationRequest request = randomRequest(rnd, 1 + rnd.nextInt(4), List.of());
            RecordingReplicaSink sink = place(strategy, request, cluster, rnd);
            assertThat(new HashSet<>(sink.placed()))
                    .as("segments holding a replica (case %d, %s, cluster %s; offers %s)", c, request, cluster,
                            sink.offers())
                    .hasSameSizeAs(sink.placed());
        }
    }

    private static void checkPreferredHonoured(AllocationStrategy strategy, SplittableRandom rnd) {
        for (int c = 0; c < CASES; c++) {
            List<SimulatedSegment> cluster = randomCluster(rnd, 1 + rnd.nextInt(12), 0.0);
            long size = randomSize(rnd);
            List<SimulatedSegment> fitting = cluster.stream().filter(s -> s.largestFreeRegion() >= size).toList();
            if (fitting.isEmpty()) {
                continue;
            }
            SimulatedSegment preferred = fitting.get(rnd.nextInt(fitting.size()));
            AllocationRequest request = new AllocationRequest(size, 1 + rnd.nextInt(3),
                    List.of("no-such-segment", preferred.name()), "writer");
            RecordingReplicaSink sink = place(strategy, request, cluster, rnd);
            assertThat(sink.offers())
                    .as("offers for %s with preferred %s, which fits (case %d, cluster %s)", request, preferred, c,
                            cluster)
                    .isNotEmpty();
            assertThat(sink.offers().getFirst())
                    .as("first offer for %s (expected: the preferred segment %s, which fits; case %d)", request,
                            preferred.name(), c)
                    .isEqualTo(new RecordingReplicaSink.Offer(preferred.name(), true, request.replicas()));
        }
    }

    private static void checkNoMoreThanAsked(AllocationStrategy strategy, SplittableRandom rnd) {
        for (int c = 0; c < CASES; c++) {
            List<SimulatedSegment> cluster = randomCluster(rnd, 1 + rnd.nextInt(20), 0.0);
            List<String> preferred = rnd.nextBoolean() ? List.of()
                    : List.of(cluster.get(rnd.nextInt(cluster.size())).name(),
                            cluster.get(rnd.nextInt(cluster.size())).name());
            AllocationRequest request = randomRequest(rnd, 1 + rnd.nextInt(3), preferred);
            RecordingReplicaSink sink = place(strategy, request, cluster, rnd);
            assertThat(sink.placed())
                    .as("replicas placed for %s (expected: at most %d; offers %s)", request, request.replicas(),
                            sink.offers())
                    .hasSizeLessThanOrEqualTo(request.replicas());
        }
    }

    private static void checkBestEffort(AllocationStrategy strategy, SplittableRandom rnd) {
        for (int c = 0; c < CASES; c++) {
            int n = 1 + rnd.nextInt(rnd.nextInt(4) == 0 ? 100 : 12);
            long size = randomSize(rnd);
            List<SimulatedSegment> cluster = randomCluster(rnd, n, 0.0);
            // Fill all but a random few segments so that `size` no longer fits there.
            int roomy = rnd.nextInt(Math.min(n, 4) + 1);
            Set<String> withRoom = new HashSet<>();
            for (SimulatedSegment s : cluster) {
                if (withRoom.size() < roomy && s.largestFreeRegion() >= size && rnd.nextInt(n) < 4) {
                    withRoom.add(s.name());
                } else {
                    fillBelow(s, size);
                }
            }
            int replicas = 1 + rnd.nextInt(4);
            AllocationRequest request = new AllocationRequest(size, replicas, List.of(), "writer");
            RecordingReplicaSink sink = place(strategy, request, cluster, rnd);
            String what = String.format("segments given a replica of %s when only %s have room (case %d, %d segments;"
                    + " offers %s)", request, withRoom, c, n, sink.offers());
            if (withRoom.size() <= replicas) {
                assertThat(new HashSet<>(sink.placed())).as(what).isEqualTo(withRoom);
            } else {
                assertThat(sink.placed()).as(what).hasSize(replicas);
                assertThat(withRoom).as(what).containsAll(sink.placed());
            }
        }
    }

    private static void checkNothingFits(AllocationStrategy strategy, SplittableRandom rnd) {
        for (int c = 0; c < CASES; c++) {
            int n = 1 + rnd.nextInt(12);
            long size = randomSize(rnd);
            List<SimulatedSegment> cluster = randomCluster(rnd, n, 0.0);
            cluster.forEach(s -> fillBelow(s, size));
            List<String> preferred = List.of(cluster.getFirst().name());
            AllocationRequest request = new AllocationRequest(size, 1 + rnd.nextInt(3), preferred, "writer");
            RecordingReplicaSink sink = place(strategy, request, cluster, rnd);
            assertThat(sink.placed()).as("replicas placed for %s on full segments %s", request, cluster).isEmpty();
        }
    }

    private static void checkOnlyOkOffered(AllocationStrategy strategy, SplittableRandom rnd) {
        for (int c = 0; c < CASES; c++) {
            List<SimulatedSegment> cluster = randomCluster(rnd, 1 + rnd.nextInt(15), 0.5);
            Set<String> notOk = new HashSet<>();
            for (SimulatedSegment s : cluster) {
                if (s.status() != SegmentStatus.OK) {
                    notOk.add(s.name());
                }
            }
            List<String> preferred = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                preferred.add(cluster.get(rnd.nextInt(cluster.size())).name());
            }
            AllocationRequest request = randomRequest(rnd, 1 + rnd.nextInt(3), preferred);
            RecordingReplicaSink sink = place(strategy, request, cluster, rnd);
            for (RecordingReplicaSink.Offer offer : sink.offers()) {
                assertThat(notOk)
                        .as("segments not OK (draining or unmounting), offered %s for %s (case %d, cluster %s)",
                                offer, request, c, cluster)
                        .doesNotContain(offer.segment());
            }
        }
    }

    // ------------------------------------------------------------------------------------- helpers

    private static RecordingReplicaSink place(AllocationStrategy strategy, AllocationRequest request,
            List<SimulatedSegment> cluster, SplittableRandom rnd) {
        RecordingReplicaSink sink = new RecordingReplicaSink(request, rnd.split());
        strategy.place(request, List.copyOf(cluster), sink);
        return sink;
    }

    private static AllocationRequest randomRequest(SplittableRandom rnd, int replicas, List<String> preferred) {
        return new AllocationRequest(randomSize(rnd), replicas, preferred, "writer-" + rnd.nextInt(4));
    }

    /** Sizes from 64 bytes to 12 MiB, log-uniform. */
    private static long randomSize(SplittableRandom rnd) {
        return Math.max(64, (long) Math.pow(2, 6 + rnd.nextDouble() * 17.6));
    }

    /**
     * {@code n} segments of 1–64 MiB filled to a random level with random sizes and then fragmented by
     * freeing a random part; each is not OK with probability {@code notOkChance}.
     */
    private static List<SimulatedSegment> randomCluster(SplittableRandom rnd, int n, double notOkChance) {
        List<SimulatedSegment> cluster = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            SimulatedSegment s = new SimulatedSegment("seg-" + i, "node-" + (i % 3), (1 + rnd.nextInt(64)) * MiB);
            double fill = rnd.nextDouble();
            List<Long> offsets = new ArrayList<>();
            while ((double) s.used() / s.capacity() < fill) {
                long off = s.allocate(randomSize(rnd));
                if (off < 0) {
                    break;
                }
                offsets.add(off);
            }
            double freeChance = rnd.nextDouble() * 0.5;
            for (long off : offsets) {
                if (rnd.nextDouble() < freeChance) {
                    s.free(off);
                }
            }
            if (rnd.nextDouble() < notOkChance) {
                s.setStatus(rnd.nextBoolean() ? SegmentStatus.DRAINING : SegmentStatus.UNMOUNTING);
            }
            cluster.add(s);
        }
        return cluster;
    }

    /** Allocates until no region of {@code size} bytes is left. */
    private static void fillBelow(SimulatedSegment s, long size) {
        long chunk = Math.max(1, size / 2);
        while (s.largestFreeRegion() >= size) {
            long largest = s.largestFreeRegion();
            s.allocate(Math.min(largest, Math.max(chunk, largest - size + 1)));
        }
    }
}
