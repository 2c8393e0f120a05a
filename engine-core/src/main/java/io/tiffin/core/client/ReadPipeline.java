package io.tiffin.core.client;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaType;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.hotcache.LocalHotCache;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Reads into the caller's memory (get, getInto and their batch forms): the location ({@link Locator}; a
 * hinted get reads while it looks up, {@link HintedReads}), then a replica this client reaches directly
 * ({@link SameHostSegments}) with a memory copy, else the hot cache's copy, else remote memory replicas in
 * the master's order (those on nodes that lately left a read unanswered last, {@link SuspectNodes}) or the SSD copy
 * ({@link ReadBatch}). Every read must end within the lease its lookup
 * granted, counted from before the lookup ({@link ErrorCode#LEASE_EXPIRED} otherwise); a read that fails
 * through a cached location is retried once with a fresh lookup ({@link LocationRetry}). Bytes copied or received
 * from a replica are checked against the object's CRC32C ({@link Checksums}); a copy that fails it is skipped for
 * the next replica, and the read fails {@code CHECKSUM_MISMATCH} naming it when none is left.
 *
 * <p>Thread-safe (its one state, the suspected nodes, is). Arguments are checked by the caller ({@link
 * TiffinClient}).
 */
final class ReadPipeline {
    private static final Logger LOG = LogManager.getLogger(ReadPipeline.class);

    private final Locator locator;
    private final LocationRetry retry;
    private final HintedReads hinted;
    private final SameHostSegments sameHost;
    /** Null when disabled. */
    private final LocalHotCache hotCache;
    private final SliceExchange slices;
    private final AsyncNodeReads async;
    private final LeaseClock clock;
    private final ClientLifecycle lifecycle;
    private final Checksums checks;
    /** The nodes whose replicas this client's reads try last for a while ({@link SuspectNodes}). */
    private final SuspectNodes suspects = new SuspectNodes();

    ReadPipeline(Locator locator, LocationRetry retry, HintedReads hinted, SameHostSegments sameHost,
                 LocalHotCache hotCache, SliceExchange slices, AsyncNodeReads async, LeaseClock clock,
                 ClientLifecycle lifecycle, Checksums checks) {
        this.checks = checks;
        this.locator = locator;
        this.retry = retry;
        this.hinted = hinted;
        this.sameHost = sameHost;
        this.hotCache = hotCache;
        this.slices = slices;
        this.async = async;
        this.clock = clock;
        this.lifecycle = lifecycle;
    }

    /** A batch for the reads of one call that began at {@code startNanos}, into destinations maybe in the caches. */
    ReadBatch newBatch(long startNanos) {
        return newBatch(startNanos, 0);
    }

    /** A batch for the reads of one call that began at {@code startNanos}, into {@code destinationBytes} in all. */
    ReadBatch newBatch(long startNanos, long destinationBytes) {
        return new ReadBatch(slices, async, hotCache, clock, lifecycle, checks, startNanos, destinationBytes, suspects);
    }

    byte[] get(String key) {
        return retry.run(key, (useCache, cached) -> get(key, useCache, cached));
    }

    /** {@code cached[0]} tells the caller whether the location came from the location cache. */
    private byte[] get(String key, boolean useCache, boolean[] cached) {
        long start = clock.now();
        ObjectLocation loc = useCache ? locator.cachedLocation(key, start, cached) : null;
        if (loc == null) {
            ReadHints.Hint hint = hinted.hintFor(key);
            if (hint != null && hint.size() <= Integer.MAX_VALUE - 16) {
                HintedReads.Speculation s = hinted.speculate(key, hint);
                loc = s.location();
                if (s.confirmed()) {
                    byte[] out = new byte[(int) hint.size()];
                    if (s.receiveInto(MemorySegment.ofArray(out), start)) {
                        return out;
                    }
                }
            } else {
                loc = locator.lookUp(key);
            }
        }
        if (loc.size() > Integer.MAX_VALUE - 16) {
            throw new TiffinException(ErrorCode.BUFFER_OVERFLOW, key + " is " + loc.size()
                    + " bytes, too large for a byte[]; use getInto with a MemorySegment");
        }
        byte[] out = new byte[(int) loc.size()];
        readAndCheckLease(loc, MemorySegment.ofArray(out), start);
        return out;
    }

    long getInto(String key, MemorySegment destination) {
        return retry.run(key, (useCache, cached) -> getInto(key, destination, useCache, cached));
    }

    private long getInto(String key, MemorySegment destination, boolean useCache, boolean[] cached) {
        long start = clock.now();
        ObjectLocation loc = useCache ? locator.cachedLocation(key, start, cached) : null;
        if (loc == null) {
            ReadHints.Hint hint = hinted.hintFor(key);
            if (hint != null && destination.byteSize() >= hint.size()
                    && !ConfinedSegments.isThreadConfined(destination)) {
                HintedReads.Speculation s = hinted.speculate(key, hint);
                loc = s.location();
                if (s.confirmed() && s.receiveInto(destination.asSlice(0, hint.size()), start)) {
                    return hint.size();
                }
            } else {
                loc = locator.lookUp(key);
            }
        }
        if (destination.byteSize() < loc.size()) {
            throw new TiffinException(ErrorCode.BUFFER_OVERFLOW, key + " is " + loc.size() + " bytes but the destination holds "
                    + destination.byteSize());
        }
        MemorySegment target = destination.asSlice(0, loc.size());
        if (ConfinedSegments.isThreadConfined(target)) {
            MemorySegment staging = Arena.ofAuto().allocate(loc.size());
            readAndCheckLease(loc, staging, start);
            MemorySegment.copy(staging, 0, target, 0, loc.size());
        } else {
            readAndCheckLease(loc, target, start);
        }
        return loc.size();
    }

    private void readAndCheckLease(ObjectLocation loc, MemorySegment dst, long startNanos) {
        try {
            ReadBatch batch = newBatch(startNanos, loc.size());
            CompletableFuture<Void> f = read(loc, dst, batch, true);
            batch.flush();
            f.join();
        } catch (CompletionException e) {
            throw lifecycle.transferFailure("get " + loc.key(), e.getCause());
        }
        clock.checkLease(loc, startNanos);
    }

    /**
     * Reads the object into {@code dst}: a replica this client reaches directly first, then (with {@code
     * lookInCache}; false when the caller already missed in the hot cache) the hot cache, then remote
     * replicas or the SSD copy through {@code batch} (sent when the caller flushes it).
     */
    CompletableFuture<Void> read(ObjectLocation loc, MemorySegment dst, ReadBatch batch, boolean lookInCache) {
        List<ReplicaDescriptor> memory = new ArrayList<>();
        TiffinException corrupt = null;
        for (ReplicaDescriptor d : loc.replicas()) {
            if (d.type() == ReplicaType.MEMORY) {
                MemorySegment local;
                try {
                    local = sameHost.slice(d, false);
                } catch (RuntimeException e) {
                    local = null;
                }
                if (local != null) {
                    try {
                        MemorySegment.copy(local, 0, dst, 0, d.size());
                        if (sameHost.epochMoved(d)) {
                            // Re-mounted since the master named it: leave it to the node, which refuses it.
                            memory.add(d);
                            continue;
                        }
                        TiffinException bad = checks.mismatch(loc, d, dst.asSlice(0, d.size()));
                        if (bad == null) {
                            return CompletableFuture.completedFuture(null);
                        }
                        LOG.warn("{}; trying another replica", bad.getMessage());
                        corrupt = bad;
                    } catch (RuntimeException e) {
                        LOG.debug("local read of {} failed, trying the socket", loc.key(), e);
                        memory.add(d);
                    }
                } else {
                    memory.add(d);
                }
            }
        }
        // Only objects read from remote nodes (or SSD) are cached: a local replica is already local.
        if (hotCache != null && lookInCache) {
            try {
                if (hotCache.tryRead(loc.key(), loc.version(), loc.size(), dst, batch.destinationsOutOfCaches())) {
                    return CompletableFuture.completedFuture(null);
                }
            } catch (IllegalStateException closedArena) {
                LOG.debug("hot cache closed during a read of {}", loc.key(), closedArena);
            }
        }
        if (memory.isEmpty()) {
            for (ReplicaDescriptor d : loc.replicas()) {
                if (d.type() == ReplicaType.LOCAL_DISK) {
                    return batch.addSsd(d.endpoint(), loc, dst);
                }
            }
            return CompletableFuture.failedFuture(corrupt != null ? corrupt
                    : new TiffinException(ErrorCode.REPLICA_IS_NOT_READY, loc.key() + ": no readable replica"));
        }
        batch.noteLease(loc);
        if (hotCache != null && hotCache.accepts(loc.size())) {
            return batch.addMemoryFill(memory, dst, loc);
        }
        return batch.addMemory(memory, dst, loc);
    }

    List<KeyResult<byte[]>> batchGet(List<String> keys) {
        boolean[] cached = new boolean[keys.size()];
        List<KeyResult<byte[]>> out = batchGet(keys, cached);
        int[] again = retry.refusedCached(out, cached);
        if (again.length > 0) {
            LocationRetry.splice(out, again, batchGet(LocationRetry.pick(keys, again), null));
        }
        return out;
    }

    /** {@code cached}: null = ask the master for every key, else set where the location cache answered. */
    private List<KeyResult<byte[]>> batchGet(List<String> keys, boolean[] cached) {
        long start = clock.now();
        List<KeyResult<ObjectLocation>> locs = locator.batchLocate(keys, cached);
        List<CompletableFuture<Void>> reads = new ArrayList<>(keys.size());
        byte[][] bufs = new byte[keys.size()][];
        ReadBatch batch = newBatch(start); // each array is read into right after the JVM zeroed it: still cached
        for (int i = 0; i < keys.size(); i++) {
            KeyResult<ObjectLocation> r = locs.get(i);
            if (r.isOk() && r.value().size() <= Integer.MAX_VALUE - 16) {
                bufs[i] = new byte[(int) r.value().size()];
                reads.add(read(r.value(), MemorySegment.ofArray(bufs[i]), batch, true));
            } else {
                reads.add(null);
            }
        }
        batch.flush();
        List<KeyResult<byte[]>> out = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            out.add(finishRead(locs.get(i), reads.get(i), start, bufs[i]));
        }
        return out;
    }

    List<KeyResult<Long>> batchGetInto(List<String> keys, List<MemorySegment> destinations) {
        if (destinations.stream().anyMatch(ConfinedSegments::isThreadConfined)) {
            List<MemorySegment> staging = destinations.stream().map(d -> ConfinedSegments.isThreadConfined(d)
                    ? Arena.ofAuto().allocate(Math.max(1, d.byteSize())) : d).toList();
            List<KeyResult<Long>> results = batchGetInto(keys, staging);
            for (int i = 0; i < keys.size(); i++) {
                if (staging.get(i) != destinations.get(i) && results.get(i).isOk()) {
                    MemorySegment.copy(staging.get(i), 0, destinations.get(i), 0, results.get(i).value());
                }
            }
            return results;
        }
        boolean[] cached = new boolean[keys.size()];
        List<KeyResult<Long>> out = batchGetIntoLocated(keys, destinations, cached);
        int[] again = retry.refusedCached(out, cached);
        if (again.length > 0) {
            LocationRetry.splice(out, again, batchGetIntoLocated(LocationRetry.pick(keys, again),
                    LocationRetry.pick(destinations, again), null));
        }
        return out;
    }

    /** {@code cached}: null = ask the master for every key, else set where the location cache answered. */
    private List<KeyResult<Long>> batchGetIntoLocated(List<String> keys, List<MemorySegment> destinations,
                                                      boolean[] cached) {
        long start = clock.now();
        List<KeyResult<ObjectLocation>> locs = locator.batchLocate(keys, cached);
        List<CompletableFuture<Void>> reads = new ArrayList<>(keys.size());
        ReadBatch batch = newBatch(start, locatedBytes(locs));
        ErrorCode[] early = new ErrorCode[keys.size()];
        for (int i = 0; i < keys.size(); i++) {
            KeyResult<ObjectLocation> r = locs.get(i);
            if (!r.isOk()) {
                reads.add(null);
            } else if (destinations.get(i).byteSize() < r.value().size()) {
                early[i] = ErrorCode.BUFFER_OVERFLOW;
                reads.add(null);
            } else {
                reads.add(read(r.value(), destinations.get(i).asSlice(0, r.value().size()), batch, true));
            }
        }
        batch.flush();
        List<KeyResult<Long>> out = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            KeyResult<ObjectLocation> r = locs.get(i);
            if (early[i] != null) {
                out.add(KeyResult.failed(keys.get(i), early[i]));
            } else {
                out.add(finishRead(r, reads.get(i), start, r.isOk() ? r.value().size() : null));
            }
        }
        return out;
    }

    /** The bytes of the objects located: what a batch's reads write into its destinations at most. */
    private static long locatedBytes(List<KeyResult<ObjectLocation>> locs) {
        long bytes = 0;
        for (KeyResult<ObjectLocation> r : locs) {
            if (r.isOk()) {
                bytes += r.value().size();
            }
        }
        return bytes;
    }

    private <T> KeyResult<T> finishRead(KeyResult<ObjectLocation> r, CompletableFuture<Void> read, long start, T value) {
        if (!r.isOk()) {
            return KeyResult.failed(r.key(), r.code());
        }
        if (read == null) {
            return KeyResult.failed(r.key(), ErrorCode.BUFFER_OVERFLOW);
        }
        try {
            read.join();
            clock.checkLease(r.value(), start);
            return KeyResult.ok(r.key(), value);
        } catch (TiffinException e) {
            return KeyResult.failed(r.key(), e.code());
        } catch (CompletionException e) {
            return KeyResult.failed(r.key(), e.getCause() instanceof TiffinException t ? t.code() : ErrorCode.TRANSFER_FAIL);
        }
    }
}
