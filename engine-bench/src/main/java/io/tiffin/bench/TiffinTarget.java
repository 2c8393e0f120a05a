package io.tiffin.bench;

import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaType;
import io.tiffin.core.client.LocationCache;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.transport.BlockingConnectionPool;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.transport.proto.Empty;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.SplittableRandom;

/**
 * A Tiffin client as a target of {@code tiffin bench kv}: {@code tiffin-remote}, {@code tiffin-shm},
 * {@code tiffin-local}, {@code tiffin-uncached} or {@code tiffin-unhinted} (see the factories). Each size's
 * case stores {@link KvWorkload#keyCount} values, checks one reads back, measures the workload's
 * operations (puts upsert a small ring of keys per thread, so long runs do not fill the pool) and removes
 * its keys. With the data-plane baseline, {@code tiffin-remote}'s get is followed by
 * {@code tiffin-data-plane}: the node read alone.
 *
 * <p>Not thread-safe (see {@link KvTarget}). Does not own the client.
 */
final class TiffinTarget implements KvTarget {
    private final String name;
    private final TiffinClient client;
    private final KvLoad load;
    private final KvWorkload workload;
    private final PrintStream out;
    /** Whether the put and batch-put cases are measured (the workload's operations permitting). */
    private final boolean withPut;
    /** With a location cache: print how many reads it answered, and fail if none. */
    private final boolean checkLocationCache;
    private final boolean dataPlane;
    /** Where the nodes' shared segments are, for tiffin-shm (which fails if it mapped none); else null. */
    private final Path sharedMemoryDir;

    private TiffinTarget(String name, TiffinClient client, KvLoad load, KvWorkload workload, PrintStream out,
                         boolean withPut, boolean checkLocationCache, boolean dataPlane, Path sharedMemoryDir) {
        this.name = name;
        this.client = client;
        this.load = load;
        this.workload = workload;
        this.out = out;
        this.withPut = withPut;
        this.checkLocationCache = checkLocationCache;
        this.dataPlane = dataPlane;
        this.sharedMemoryDir = sharedMemoryDir;
    }

    /** {@code tiffin-remote}: a client of another process, over the socket; with {@code dataPlane}, also tiffin-data-plane. */
    static TiffinTarget remote(TiffinClient client, KvLoad load, KvWorkload workload, PrintStream out,
                               boolean dataPlane) {
        return new TiffinTarget("tiffin-remote", client, load, workload, out, true, true, dataPlane, null);
    }

    /** {@code tiffin-remote-tls}: {@link #remote} over TLS, a client of the bench's TLS cluster. */
    static TiffinTarget remoteTls(TiffinClient client, KvLoad load, KvWorkload workload, PrintStream out) {
        return new TiffinTarget("tiffin-remote-tls", client, load, workload, out, true, true, false, null);
    }

    /** {@code tiffin-shm}: a client that maps the nodes' segments in {@code sharedMemoryDir}. */
    static TiffinTarget shm(TiffinClient client, KvLoad load, KvWorkload workload, PrintStream out,
                            Path sharedMemoryDir) {
        return new TiffinTarget("tiffin-shm", client, load, workload, out, true, true, false, sharedMemoryDir);
    }

    /** {@code tiffin-uncached}: a remote client without location cache; gets and batch gets only. */
    static TiffinTarget uncached(TiffinClient client, KvLoad load, KvWorkload workload, PrintStream out) {
        return new TiffinTarget("tiffin-uncached", client, load, workload, out, false, false, false, null);
    }

    /** {@code tiffin-unhinted}: a remote client without read hints; the get case only. */
    static TiffinTarget unhinted(TiffinClient client, KvLoad load, KvWorkload workload, PrintStream out) {
        return new TiffinTarget("tiffin-unhinted", client, load, workload.withOperations(List.of("get")), out,
                false, false, false, null);
    }

    /** {@code tiffin-local}: the client of an embedded Tiffin, in the same JVM as its node. */
    static TiffinTarget local(TiffinClient client, KvLoad load, KvWorkload workload, PrintStream out) {
        return new TiffinTarget("tiffin-local", client, load, workload, out, true, false, false, null);
    }

    @Override
    public void measure(long size, MemorySegment value, Arena arena) throws Exception {
        Optional<LocationCache.Stats> before = checkLocationCache ? client.locationCacheStats() : Optional.empty();
        measureCases(size, value, arena);
        if (before.isPresent() && (workload.measures("get") || workload.measures("batch_get"))) {
            LocationCache.Stats s = client.locationCacheStats().orElseThrow();
            long hits = s.hits() - before.get().hits();
            long misses = s.misses() - before.get().misses();
            out.printf("  (%s location cache: %d reads without a lookup, %d looked up)%n", name, hits, misses);
            if (hits == 0) {
                throw new IllegalStateException(name + ": the location cache answered no lookup: " + s);
            }
        }
        if (sharedMemoryDir != null && client.sharedSegmentsMapped() == 0) {
            throw new IllegalStateException(name + ": the client mapped no segment of the nodes;"
                    + " is " + sharedMemoryDir + " on this host and readable?");
        }
    }

    private void measureCases(long size, MemorySegment value, Arena arena) throws Exception {
        String prefix = name + "-" + Long.toHexString(System.nanoTime()) + "-" + size + "-";
        int keys = KvWorkload.keyCount(size);
        List<String> names = new ArrayList<>(keys);
        for (int k = 0; k < keys; k++) {
            names.add(prefix + k);
            client.putFrom(prefix + k, value, workload.putOptions(false));
        }
        verify(names.getFirst(), value, arena);
        int batch = workload.batchOf(size, keys);
        if (withPut && workload.measures("put")) {
            PutOptions upsert = workload.putOptions(true);
            load.measure(name, "put", size, 1,
                    t -> i -> client.putFrom(KvWorkload.putKey(prefix, t, i & 3), value, upsert));
        }
        if (withPut && workload.measures("batch_put")) {
            PutOptions upsert = workload.putOptions(true);
            load.measure(name, "batch_put", size, batch, t -> {
                List<String> batchKeys = new ArrayList<>(batch);
                for (int b = 0; b < batch; b++) {
                    batchKeys.add(KvWorkload.batchPutKey(prefix, t, b));
                }
                List<MemorySegment> values = Collections.nCopies(batch, value);
                return i -> {
                    for (KeyResult<Void> res : client.batchPutFrom(batchKeys, values, upsert)) {
                        if (!res.isOk()) {
                            throw new IllegalStateException("batch put of " + res.key() + " failed: " + res.code());
                        }
                    }
                };
            });
        }
        if (workload.measures("get")) {
            measureGet(names, size, arena);
        }
        if (workload.measures("batch_get")) {
            load.measure(name, "batch_get", size, batch, t -> {
                List<MemorySegment> dsts = new ArrayList<>(batch);
                for (int b = 0; b < batch; b++) {
                    dsts.add(arena.allocate(size, 64));
                }
                SplittableRandom r = new SplittableRandom(t);
                List<String> chosen = new ArrayList<>(batch);
                return i -> {
                    chosen.clear();
                    int first = r.nextInt(keys);
                    for (int b = 0; b < batch; b++) {
                        chosen.add(names.get((first + b) % keys));
                    }
                    for (KeyResult<Long> res : client.batchGetInto(chosen, dsts)) {
                        if (!res.isOk()) {
                            throw new IllegalStateException("batch get of " + res.key() + " failed: " + res.code());
                        }
                    }
                };
            });
        }
        // the case's keys, its puts' and batch puts' included (the prefix holds no regex metacharacter)
        client.removeByRegex("^" + prefix, true);
    }

    private void measureGet(List<String> names, long size, Arena arena) throws Exception {
        int keys = names.size();
        var hintsBefore = client.readHintStats();
        load.measure(name, "get", size, 1, t -> {
            MemorySegment dst = arena.allocate(size, 64);
            SplittableRandom r = new SplittableRandom(t);
            return i -> client.getInto(names.get(r.nextInt(keys)), dst);
        });
        if (hintsBefore.isPresent()) {
            var after = client.readHintStats().orElseThrow();
            out.printf(Locale.ROOT, "    (read hints: %d gets read while looked up, %d hints refuted)%n",
                    after.confirmed() - hintsBefore.get().confirmed(), after.refuted() - hintsBefore.get().refuted());
        }
        if (dataPlane) {
            measureDataPlane(names, size, arena);
        }
    }

    /**
     * Target {@code tiffin-data-plane}: each get is only the node read of a remote get, a {@code DATA_READ}
     * over a pooled blocking connection to the first memory replica that one lookup per key (before the
     * case) named, looked up again once half its lease passed (the node refuses the descriptor's grant after the
     * lease). No lease is held, which is safe here only because nothing else writes or removes the bench's keys
     * during the case.
     */
    /** A key's first memory replica and when to look it up again (half its lease after the lookup). */
    private record Located(ReplicaDescriptor replica, long renewAtNanos) {
    }

    private Located locateMemory(String key) {
        long at = System.nanoTime();
        ObjectLocation loc = client.locate(key).orElseThrow(
                () -> new IllegalStateException(key + " vanished before the data-plane case"));
        return new Located(loc.replicas().stream().filter(d -> d.type() == ReplicaType.MEMORY).findFirst()
                .orElseThrow(() -> new IllegalStateException(key + " has no memory replica")),
                at + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(loc.leaseTtlMillis() / 2));
    }

    private void measureDataPlane(List<String> names, long size, Arena arena) throws Exception {
        java.util.concurrent.atomic.AtomicReferenceArray<Located> replicas =
                new java.util.concurrent.atomic.AtomicReferenceArray<>(names.size());
        for (int i = 0; i < names.size(); i++) {
            replicas.set(i, locateMemory(names.get(i)));
        }
        try (BlockingConnectionPool pool = new BlockingConnectionPool("bench-data-plane", TransportSettings.defaults(),
                "bench-kv")) {
            load.measure("tiffin-data-plane", "get", size, 1, t -> {
                MemorySegment dst = arena.allocate(size, 64);
                SplittableRandom r = new SplittableRandom(t);
                return i -> {
                    int k = r.nextInt(replicas.length());
                    Located at = replicas.get(k);
                    if (System.nanoTime() - at.renewAtNanos() > 0) {
                        at = locateMemory(names.get(k));
                        replicas.set(k, at);
                    }
                    ReplicaDescriptor d = at.replica();
                    pool.call(d.endpoint(), Opcode.DATA_READ, io.tiffin.core.transport.Messages.withGrant(
                            DataRequest.newBuilder().setSegment(d.segment()).setMountEpoch(d.mountEpoch())
                            .setOffset(d.offset()).setLength(d.size()), d).build(), null, Empty.parser(), dst);
                };
            });
        }
    }

    private void verify(String key, MemorySegment value, Arena arena) {
        MemorySegment dst = arena.allocate(value.byteSize(), 64);
        client.getInto(key, dst);
        if (dst.mismatch(value) != -1) {
            throw new IllegalStateException("get of " + key + " returned other bytes than were put");
        }
    }

    /**
     * Puts and gets values of every measured size (at most 16 MiB) from every load thread for {@code
     * seconds} in all, unmeasured, so the JIT of the bench JVM and of the node processes has compiled the
     * data path and every client thread's connections exist before the first case runs (without it the
     * first case of a run measured about half of the later ones).
     */
    static void warmCluster(TiffinClient client, KvLoad load, long[] valueSizes, double seconds, Arena arena)
            throws Exception {
        if (seconds <= 0) {
            return;
        }
        PutOptions upsert = PutOptions.DEFAULT.withUpsert(true);
        double perSize = seconds / valueSizes.length;
        for (long wanted : valueSizes) {
            long size = Math.min(wanted, 16L << 20);
            MemorySegment value = KvWorkload.randomValue(arena, size);
            String prefix = "bench-kv-warm-" + size + "-";
            for (int k = 0; k < 8; k++) {
                client.putFrom(prefix + k, value, PutOptions.DEFAULT);
            }
            KvLoad.Op[] ops = new KvLoad.Op[load.clients()];
            for (int t = 0; t < ops.length; t++) {
                int thread = t;
                MemorySegment dst = arena.allocate(size, 64);
                // Puts go to keys that are never read: an upsert of a key read moments ago would meet its
                // read lease (OBJECT_HAS_LEASE), as in the measured put case.
                ops[t] = i -> {
                    if ((i & 3) == 0) {
                        client.putFrom(prefix + "put-" + thread, value, upsert);
                    } else {
                        client.getInto(prefix + (i & 7), dst);
                    }
                };
            }
            load.run(ops, perSize);
        }
        client.removeByRegex("^bench-kv-warm-", true);
    }
}
