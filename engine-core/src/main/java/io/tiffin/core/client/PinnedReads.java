package io.tiffin.core.client;

import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaType;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.hotcache.LocalHotCache;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Zero-copy gets ({@link TiffinClient#getPinned}, {@link TiffinClient#batchGetPinned}): a current copy in
 * the hot cache is returned as its pinned blocks; a remote object the cache admits is received straight
 * into cache blocks reserved for it, which become the cached copy and are returned pinned; anything else is
 * read ({@link ReadPipeline#read}) into a buffer the returned value owns.
 *
 * <p>Thread-safe (no state of its own). Every {@link PinnedValue} it returns owns what it holds (pinned
 * blocks or an arena) and releases it on close; the caller closes it. A call that throws (a failed retry,
 * an off-heap allocation that fails midway) first closes the values it had opened, gives back the cache
 * blocks it had asked for or reserved and frees the buffers no value took.
 */
final class PinnedReads {
    private static final Logger LOG = LogManager.getLogger(PinnedReads.class);

    private final Locator locator;
    private final LocationRetry retry;
    private final ReadPipeline reads;
    private final SameHostSegments sameHost;
    /** Null when disabled. */
    private final LocalHotCache hotCache;
    private final SliceExchange slices;
    private final LeaseClock clock;
    private final ClientLifecycle lifecycle;
    private final Checksums checks;

    PinnedReads(Locator locator, LocationRetry retry, ReadPipeline reads, SameHostSegments sameHost,
                LocalHotCache hotCache, SliceExchange slices, LeaseClock clock, ClientLifecycle lifecycle,
                Checksums checks) {
        this.checks = checks;
        this.locator = locator;
        this.retry = retry;
        this.reads = reads;
        this.sameHost = sameHost;
        this.hotCache = hotCache;
        this.slices = slices;
        this.clock = clock;
        this.lifecycle = lifecycle;
    }

    PinnedValue getPinned(String key) {
        return retry.run(key, (useCache, cached) -> {
            long start = clock.now();
            ObjectLocation loc = locator.locateForRead(key, useCache, cached);
            return pinnedReads(List.of(key), List.of(KeyResult.ok(key, loc)), start, true).getFirst().value();
        });
    }

    /** Whom {@link #pinLocal} asks for a location the location cache does not hold. */
    enum Ask {
        /** Nobody: null at once. */
        NOBODY,
        /** A master of this JVM, directly ({@link Locator#lookUpInThisJvm}); null when the master runs elsewhere. */
        MASTER_IN_THIS_JVM,
        /** The master, wherever it runs (which waits for its answer). */
        MASTER
    }

    /**
     * The key's bytes without a transfer, or null: from a replica in a segment of this JVM (in place, valid for
     * what is left of the lease) or from the hot cache's current copy (pinned). The location comes from the
     * location cache; when it holds none, from whom {@code ask} names (a lease from then on, the location kept
     * for the next reads).
     */
    PinnedValue pinLocal(String key, Ask ask) {
        long start = clock.now();
        ObjectLocation loc = locator.cachedLocation(key, start, new boolean[1]);
        if (loc == null) {
            loc = switch (ask) {
                case NOBODY -> null;
                case MASTER_IN_THIS_JVM -> locator.lookUpInThisJvm(key);
                case MASTER -> locator.lookUp(key);
            };
            if (loc == null) {
                return null;
            }
        }
        for (ReplicaDescriptor d : loc.replicas()) {
            if (d.type() != ReplicaType.MEMORY) {
                continue;
            }
            MemorySegment local = sameHost.inThisJvm(d);
            if (local != null && local.byteSize() >= loc.size()) {
                // re-mounted since the master named it: the bytes may be another mount's (an ordinary read
                // goes to the node, which refuses the descriptor)
                return sameHost.epochMoved(d) ? null : PinnedValue.inPlace(local.asSlice(0, loc.size()), loc.version(), clock,
                        start + TimeUnit.MILLISECONDS.toNanos(loc.leaseTtlMillis()));
            }
        }
        if (hotCache == null || remoteMemoryReplicas(loc) == null) {
            return null;
        }
        try {
            LocalHotCache.Pinned pinned = hotCache.tryPin(loc.key(), loc.version(), loc.size());
            return pinned == null ? null : new PinnedValue(pinned.segments(), loc.size(), loc.version(), true, pinned);
        } catch (IllegalStateException closedArena) {
            return null;
        }
    }

    /**
     * A longer hold on the bytes of {@code held}, an {@link PinnedValue#inPlace()} view of {@code key}: asks the
     * master (a lookup, granting a new lease; this waits) and returns a new in-place view of the same memory, valid
     * for the new lease, when the key still holds the same object (same version and size) with a replica at the
     * same place in this JVM's segment. Null otherwise (replaced, removed, moved, a segment re-mounted): then the
     * bytes of {@code held} stay the object's only for what is left of its own lease.
     *
     * @throws TiffinException as {@link TiffinClient#getInto} for the lookup ({@code OBJECT_NOT_FOUND} when removed)
     */
    PinnedValue renewInPlace(String key, PinnedValue held) {
        if (!held.inPlace()) {
            return null;
        }
        long start = clock.now();
        ObjectLocation loc = locator.lookUp(key);
        if (loc.version() != held.version() || loc.size() != held.size()) {
            return null;
        }
        long address = held.segments().getFirst().address();
        for (ReplicaDescriptor d : loc.replicas()) {
            if (d.type() != ReplicaType.MEMORY) {
                continue;
            }
            MemorySegment local = sameHost.inThisJvm(d);
            if (local != null && local.address() == address && local.byteSize() >= loc.size() && !sameHost.epochMoved(d)) {
                return PinnedValue.inPlace(local.asSlice(0, loc.size()), loc.version(), clock,
                        start + TimeUnit.MILLISECONDS.toNanos(loc.leaseTtlMillis()));
            }
        }
        return null;
    }

    List<KeyResult<PinnedValue>> batchGetPinned(List<String> keys) {
        boolean[] cached = new boolean[keys.size()];
        long start = clock.now();
        List<KeyResult<PinnedValue>> out = pinnedReads(keys, locator.batchLocate(keys, cached), start, false);
        int[] again = retry.refusedCached(out, cached);
        if (again.length > 0) {
            List<String> retried = LocationRetry.pick(keys, again);
            long restart = clock.now();
            try {
                LocationRetry.splice(out, again, pinnedReads(retried, locator.batchLocate(retried, null), restart,
                        false));
            } catch (RuntimeException e) {
                // the caller gets no values to close: close those already opened (pinned cache blocks,
                // owned buffers), or they would be held for good
                for (KeyResult<PinnedValue> r : out) {
                    if (r != null && r.isOk()) {
                        r.value().close();
                    }
                }
                throw e;
            }
        }
        return out;
    }

    /** Pinned reads of located keys; with {@code rethrow} a failed read throws instead of being reported. */
    private List<KeyResult<PinnedValue>> pinnedReads(List<String> keys, List<KeyResult<ObjectLocation>> locs,
                                                     long start, boolean rethrow) {
        int n = keys.size();
        List<KeyResult<PinnedValue>> out = new ArrayList<>(Collections.nCopies(n, null));
        // a slot is cleared once its blocks are taken (asked) or committed or aborted (reserved)
        LocalHotCache.PendingFill[] asked = new LocalHotCache.PendingFill[n];
        LocalHotCache.Reservation[] reserved = new LocalHotCache.Reservation[n];
        try {
            return pinnedReads(keys, locs, start, rethrow, out, asked, reserved);
        } catch (RuntimeException | Error e) {
            // the caller gets no values to close: give back everything this call holds (an off-heap allocation
            // that fails midway is an Error)
            for (int i = 0; i < n; i++) {
                KeyResult<PinnedValue> r = out.get(i);
                if (r != null && r.isOk()) {
                    r.value().close();
                }
                if (asked[i] != null) {
                    asked[i].cancel();
                }
                if (reserved[i] != null) {
                    reserved[i].abort();
                }
            }
            throw e;
        }
    }

    private List<KeyResult<PinnedValue>> pinnedReads(List<String> keys, List<KeyResult<ObjectLocation>> locs,
                                                     long start, boolean rethrow, List<KeyResult<PinnedValue>> out,
                                                     LocalHotCache.PendingFill[] asked,
                                                     LocalHotCache.Reservation[] reserved) {
        int n = keys.size();
        List<Integer> viaCache = new ArrayList<>();
        List<Integer> owned = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            KeyResult<ObjectLocation> r = locs.get(i);
            if (!r.isOk()) {
                out.set(i, KeyResult.failed(keys.get(i), r.code()));
                continue;
            }
            ObjectLocation loc = r.value();
            List<ReplicaDescriptor> remote = remoteMemoryReplicas(loc);
            if (hotCache == null || remote == null) {
                owned.add(i); // no cache, or a replica in this JVM: nothing to cache
                continue;
            }
            try {
                LocalHotCache.Pinned pinned = hotCache.tryPin(loc.key(), loc.version(), loc.size());
                if (pinned != null) {
                    out.set(i, KeyResult.ok(keys.get(i), new PinnedValue(pinned.segments(), loc.size(), loc.version(), true, pinned)));
                    continue;
                }
                asked[i] = remote.isEmpty() ? null : hotCache.requestBlocks(loc.key(), loc.version(), loc.size());
            } catch (IllegalStateException closedArena) {
                LOG.debug("hot cache closed during a read of {}", loc.key(), closedArena);
            }
            if (asked[i] == null) {
                owned.add(i);
            }
        }
        // every key's blocks were asked for above; the maintenance thread answers them in one go
        for (int i = 0; i < n; i++) {
            if (asked[i] != null) {
                reserved[i] = asked[i].await();
                asked[i] = null;
                (reserved[i] != null ? viaCache : owned).add(i);
            }
        }
        if (!viaCache.isEmpty()) {
            readIntoReservations(keys, locs, start, reserved, viaCache, out, owned);
        }
        if (!owned.isEmpty()) {
            readIntoOwnedBuffers(keys, locs, start, rethrow, owned, out);
        }
        return out;
    }

    /**
     * Reads the objects at {@code viaCache} into their reserved cache blocks; those read within their lease
     * become cached copies returned pinned, the others are aborted and added to {@code owned}.
     */
    private void readIntoReservations(List<String> keys, List<KeyResult<ObjectLocation>> locs, long start,
                                      LocalHotCache.Reservation[] reserved, List<Integer> viaCache,
                                      List<KeyResult<PinnedValue>> out, List<Integer> owned) {
        List<ReplicaDescriptor> first = new ArrayList<>();
        List<List<MemorySegment>> targets = new ArrayList<>();
        for (int i : viaCache) {
            first.add(remoteMemoryReplicas(locs.get(i).value()).getFirst());
            targets.add(reserved[i].segments());
        }
        long leaseEnd = Long.MAX_VALUE;
        for (int i : viaCache) {
            leaseEnd = Math.min(leaseEnd, TimeUnit.MILLISECONDS.toNanos(locs.get(i).value().leaseTtlMillis()));
        }
        TiffinException[] failed = slices.readScattered(first, targets, start + leaseEnd);
        for (int j = 0; j < viaCache.size(); j++) {
            int i = viaCache.get(j);
            ObjectLocation loc = locs.get(i).value();
            if (failed[j] == null && checks.wants(loc)) {
                failed[j] = checks.mismatch(loc, first.get(j), reserved[i].crc32c()); // on two threads when large
            }
            LocalHotCache.Reservation blocks = reserved[i];
            reserved[i] = null;
            if (failed[j] == null && clock.withinLease(loc, start)) {
                LocalHotCache.Pinned pinned = blocks.commit();
                out.set(i, KeyResult.ok(keys.get(i), new PinnedValue(pinned.segments(), loc.size(), loc.version(), false, pinned)));
            } else {
                blocks.abort();
                owned.add(i); // read again the ordinary way (other replicas, lease checked)
            }
        }
    }

    /**
     * Reads the objects at {@code owned} into buffers their values own (one shared arena each). Every buffer is
     * allocated before the first read is sent; an arena not handed to a value is closed before this returns or
     * throws.
     */
    private void readIntoOwnedBuffers(List<String> keys, List<KeyResult<ObjectLocation>> locs, long start,
                                      boolean rethrow, List<Integer> owned, List<KeyResult<PinnedValue>> out) {
        int n = keys.size();
        Arena[] arenas = new Arena[n];
        MemorySegment[] buffers = new MemorySegment[n];
        try {
            for (int i : owned) {
                long size = locs.get(i).value().size();
                arenas[i] = Arena.ofShared();
                buffers[i] = arenas[i].allocate(Math.max(1, size), 64).asSlice(0, size);
            }
            List<CompletableFuture<Void>> pending = new ArrayList<>(Collections.nCopies(n, null));
            ReadBatch batch = reads.newBatch(start);
            for (int i : owned) {
                pending.set(i, reads.read(locs.get(i).value(), buffers[i], batch, false));
            }
            batch.flush();
            for (int i : owned) {
                ObjectLocation loc = locs.get(i).value();
                try {
                    pending.get(i).join();
                    clock.checkLease(loc, start);
                    out.set(i, KeyResult.ok(keys.get(i), new PinnedValue(List.of(buffers[i].asReadOnly()),
                            loc.size(), loc.version(), false, arenas[i]::close)));
                    arenas[i] = null; // the value's now
                } catch (RuntimeException e) {
                    TiffinException t = e instanceof CompletionException c ? lifecycle.transferFailure("get "
                            + loc.key(), c.getCause()) : e instanceof TiffinException te ? te
                            : lifecycle.transferFailure("get " + loc.key(), e);
                    if (rethrow) {
                        throw t; // single-key call: nothing else was opened
                    }
                    out.set(i, KeyResult.failed(keys.get(i), t.code()));
                }
            }
        } finally {
            for (Arena a : arenas) {
                if (a != null) {
                    a.close();
                }
            }
        }
    }

    /**
     * The object's memory replicas on other nodes, in the master's order; null when one lives in a
     * segment this client reaches directly (it is copied, not cached).
     */
    private List<ReplicaDescriptor> remoteMemoryReplicas(ObjectLocation loc) {
        List<ReplicaDescriptor> remote = new ArrayList<>();
        for (ReplicaDescriptor d : loc.replicas()) {
            if (d.type() == ReplicaType.MEMORY) {
                if (sameHost.isDirect(d)) {
                    return null;
                }
                remote.add(d);
            }
        }
        return remote;
    }
}
