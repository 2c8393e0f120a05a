package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.LocationCache;
import io.tiffin.core.client.PinnedValue;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.client.hotcache.HotCacheSettings;
import io.tiffin.core.plugin.PluginRegistry;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.Test;

/**
 * The hot cache's promise under concurrency: while one client rewrites keys (forced replacement, remove then put,
 * upsert) as fast as it can, threads of another client read them through every read API, with a hot cache too
 * small for the keys (evictions and refills all along) and a location cache. Every value carries its generation
 * and bytes that only that generation of that key has, so a read can tell
 * <ul>
 *   <li>a stale value: older than the last write of the key that had returned before the read started;</li>
 *   <li>a torn value: bytes of two generations, or of another key;</li>
 *   <li>a wrong absence or a wrong generation while no write of the key overlapped the read at all.</li>
 * </ul>
 */
class HotCacheConcurrentStalenessTest {
    private static final long KiB = 1L << 10;
    private static final int KEYS = 10;
    /** Four 64 KiB blocks and a bit: the cache (32 blocks) holds most of the keys, not all. */
    private static final int SIZE = (int) (200 * KiB + 3);
    private static final Duration TRAFFIC = Duration.ofSeconds(4);
    /** What a read racing a forced replacement or outliving its lease on a loaded machine may answer. */
    private static final Set<ErrorCode> TRANSIENT = Set.of(ErrorCode.LEASE_EXPIRED, ErrorCode.REPLICA_IS_GONE,
            ErrorCode.REPLICA_IS_NOT_READY, ErrorCode.OBJECT_NOT_FOUND);

    /** Per key: the last generation whose write returned, and a count that is odd while a write is under way. */
    private final AtomicLongArray completed = new AtomicLongArray(KEYS);
    private final AtomicLongArray writes = new AtomicLongArray(KEYS);
    private final List<String> violations = Collections.synchronizedList(new ArrayList<>());
    private final AtomicLong reads = new AtomicLong();
    private final AtomicLong transientFailures = new AtomicLong();

    @Test
    void noReadReturnsAnOlderGenerationThanTheLastReturnedWriteOrTornBytes() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of("master.lease-ttl", "60ms"), 2, 64L << 20);
             PluginRegistry plugins = PluginRegistry.classPathOnly();
             ExecutorService threads = Executors.newFixedThreadPool(4)) {
            TiffinClient writer = cluster.remoteClient();
            TiffinClient reader = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress())
                    .hotCache(new HotCacheSettings(32 * 64 * KiB, 64 * KiB, 0.5, 1024, plugins.hotCachePolicy("lru")))
                    .locationCache(new LocationCache.Settings(Duration.ofSeconds(30), 1000)).build());
            cluster.clients.add(reader);
            for (int k = 0; k < KEYS; k++) {
                writer.put(key(k), value(k, 1));
                completed.set(k, 1);
            }
            AtomicBoolean stop = new AtomicBoolean();
            List<Future<?>> readers = new ArrayList<>();
            for (int t = 0; t < 3; t++) {
                long seed = t;
                readers.add(threads.submit(() -> readLoop(reader, new SplittableRandom(seed), stop)));
            }
            long generations = writeLoop(writer, new SplittableRandom(42), System.nanoTime() + TRAFFIC.toNanos());
            stop.set(true);
            for (Future<?> f : readers) {
                f.get();
            }

            assertThat(violations).as("stale, torn or wrongly missing reads").isEmpty();
            assertThat(generations).as("writes done").isGreaterThan(KEYS);
            assertThat(reads.get()).as("reads checked").isGreaterThan(100);
            assertThat(transientFailures.get()).as("reads that failed without a wrong answer")
                    .isLessThan(reads.get() / 2);
            assertThat(reader.hotCacheStats().orElseThrow().hits()).as("reads served by the cache").isPositive();
        }
    }

    /** Rewrites random keys until {@code endNanos}; returns the writes done. */
    private long writeLoop(TiffinClient writer, SplittableRandom random, long endNanos) {
        long generation = 1;
        long done = 0;
        PutOptions forced = PutOptions.DEFAULT.withUpsert(true).withReplaceLeased(true);
        PutOptions upsert = PutOptions.DEFAULT.withUpsert(true);
        while (System.nanoTime() < endNanos) {
            int k = random.nextInt(KEYS);
            byte[] v = value(k, ++generation);
            writes.incrementAndGet(k);
            try {
                switch (random.nextInt(3)) {
                    case 0 -> writer.put(key(k), v, forced);
                    case 1 -> {
                        writer.remove(key(k), true);
                        writer.put(key(k), v);
                    }
                    default -> {
                        try {
                            writer.put(key(k), v, upsert);
                        } catch (TiffinException e) {
                            if (e.code() != ErrorCode.OBJECT_HAS_LEASE) {
                                throw e;
                            }
                            writer.put(key(k), v, forced); // a reader holds a lease: replace it anyway
                        }
                    }
                }
                completed.set(k, generation);
                done++;
            } finally {
                writes.incrementAndGet(k);
            }
        }
        return done;
    }

    private void readLoop(TiffinClient reader, SplittableRandom random, AtomicBoolean stop) {
        try (Arena arena = Arena.ofConfined()) {
            List<MemorySegment> buffers = List.of(arena.allocate(SIZE), arena.allocate(SIZE));
            while (!stop.get()) {
                int k = random.nextInt(KEYS);
                int other = (k + 1 + random.nextInt(KEYS - 1)) % KEYS;
                int[] ks = {k, other};
                // the write counts first: when they show no write under way, the generations read next are current
                long[] writesBefore = {writes.get(k), writes.get(other)};
                long[] before = {completed.get(k), completed.get(other)};
                List<Answer> answers = new ArrayList<>(2);
                int api = random.nextInt(6);
                switch (api) {
                    case 0 -> answers.add(single(() -> reader.get(key(k))));
                    case 1 -> answers.add(single(() -> {
                        long n = reader.getInto(key(k), buffers.getFirst());
                        return bytes(buffers.getFirst(), n);
                    }));
                    case 2 -> answers.add(single(() -> {
                        try (PinnedValue v = reader.getPinned(key(k))) {
                            byte[] out = new byte[(int) v.size()];
                            v.copyTo(MemorySegment.ofArray(out));
                            return out;
                        }
                    }));
                    case 3 -> reader.batchGet(List.of(key(k), key(other)))
                            .forEach(r -> answers.add(new Answer(r.code(), r.isOk() ? r.value() : null)));
                    case 4 -> {
                        List<KeyResult<Long>> rs = reader.batchGetInto(List.of(key(k), key(other)), buffers);
                        for (int i = 0; i < 2; i++) {
                            KeyResult<Long> r = rs.get(i);
                            answers.add(new Answer(r.code(), r.isOk() ? bytes(buffers.get(i), r.value()) : null));
                        }
                    }
                    default -> {
                        for (KeyResult<PinnedValue> r : reader.batchGetPinned(List.of(key(k), key(other)))) {
                            if (!r.isOk()) {
                                answers.add(new Answer(r.code(), null));
                                continue;
                            }
                            try (PinnedValue v = r.value()) {
                                byte[] out = new byte[(int) v.size()];
                                v.copyTo(MemorySegment.ofArray(out));
                                answers.add(new Answer(ErrorCode.OK, out));
                            }
                        }
                    }
                }
                for (int i = 0; i < answers.size(); i++) {
                    boolean quiet = writesBefore[i] % 2 == 0 && writes.get(ks[i]) == writesBefore[i];
                    check(ks[i], before[i], quiet, answers.get(i), api);
                }
            }
        } catch (RuntimeException | Error e) {
            violations.add("reader failed: " + e);
        }
    }

    private record Answer(ErrorCode code, byte[] value) {
    }

    private interface Read {
        byte[] run();
    }

    private static Answer single(Read read) {
        try {
            return new Answer(ErrorCode.OK, read.run());
        } catch (TiffinException e) {
            return new Answer(e.code(), null);
        }
    }

    /**
     * @param before the generation of the key's last write that had returned when the read started
     * @param quiet  whether no write of the key was under way at any moment of the read
     */
    private void check(int k, long before, boolean quiet, Answer a, int api) {
        reads.incrementAndGet();
        if (a.code() != ErrorCode.OK) {
            if (!TRANSIENT.contains(a.code()) || (quiet && a.code() == ErrorCode.OBJECT_NOT_FOUND)) {
                violations.add(key(k) + " (api " + api + "): " + a.code() + (quiet ? " with no write under way" : ""));
            }
            transientFailures.incrementAndGet();
            return;
        }
        if (a.value().length != SIZE) {
            violations.add(key(k) + " (api " + api + "): " + a.value().length + " bytes");
            return;
        }
        ByteBuffer head = ByteBuffer.wrap(a.value());
        long generation = head.getLong();
        int owner = head.getInt();
        if (owner != k || !java.util.Arrays.equals(a.value(), value(k, generation))) {
            violations.add(key(k) + " (api " + api + "): torn or foreign bytes (header: key " + owner
                    + ", generation " + generation + ")");
        } else if (generation < before) {
            violations.add(key(k) + " (api " + api + "): stale generation " + generation + " after " + before
                    + " had returned");
        } else if (quiet && generation != before) {
            violations.add(key(k) + " (api " + api + "): generation " + generation + " while " + before
                    + " was the last written and no write was under way");
        }
    }

    private static String key(int k) {
        return "stress-" + k;
    }

    /** Key {@code k}'s value of {@code generation}: the generation, the key, then bytes only they give. */
    private static byte[] value(int k, long generation) {
        byte[] v = new byte[SIZE];
        new SplittableRandom(generation * 1_000 + k).nextBytes(v);
        ByteBuffer.wrap(v).putLong(generation).putInt(k);
        return v;
    }

    private static byte[] bytes(MemorySegment segment, long n) {
        return segment.asSlice(0, n).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
    }
}
