package io.tiffin.core.client;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaType;
import io.tiffin.api.TiffinException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * Reads of a byte range of an object ({@link TiffinClient#getRangeInto}): only the range's bytes are moved —
 * copied from a replica in this JVM or a same-host mapping, else received from the first remote memory replica
 * whose node answers (one {@code DATA_READ} per slice of the range). An object on the SSD tier alone is read
 * whole into a staging buffer and the range copied from it (rare). The hot cache is not consulted, and a range
 * is not checked against the object's CRC32C (which covers the whole object). Every read ends within the lease
 * of its lookup, as a whole read does.
 *
 * <p>Thread-safe (no state of its own).
 */
final class RangeReads {
    private final Locator locator;
    private final LocationRetry retry;
    private final ReadPipeline reads;
    private final SameHostSegments sameHost;
    private final SliceExchange slices;
    private final LeaseClock clock;
    private final ClientLifecycle lifecycle;

    RangeReads(Locator locator, LocationRetry retry, ReadPipeline reads, SameHostSegments sameHost,
               SliceExchange slices, LeaseClock clock, ClientLifecycle lifecycle) {
        this.locator = locator;
        this.retry = retry;
        this.reads = reads;
        this.sameHost = sameHost;
        this.slices = slices;
        this.clock = clock;
        this.lifecycle = lifecycle;
    }

    long getRangeInto(String key, long offset, MemorySegment destination) {
        return retry.run(key, (useCache, cached) -> {
            long start = clock.now();
            ObjectLocation loc = useCache ? locator.cachedLocation(key, start, cached) : null;
            if (loc == null) {
                loc = locator.lookUp(key);
            }
            if (offset > loc.size()) {
                throw new TiffinException(ErrorCode.INVALID_PARAMS, "offset " + offset + " is past the end of " + key
                        + " (" + loc.size() + " bytes)");
            }
            long n = Math.min(destination.byteSize(), loc.size() - offset);
            if (n == 0) {
                return 0L;
            }
            MemorySegment target = destination.asSlice(0, n);
            if (ConfinedSegments.isThreadConfined(target)) {
                MemorySegment staging = Arena.ofAuto().allocate(n);
                read(loc, offset, staging, start);
                MemorySegment.copy(staging, 0, target, 0, n);
            } else {
                read(loc, offset, target, start);
            }
            clock.checkLease(loc, start);
            return n;
        });
    }

    private void read(ObjectLocation loc, long offset, MemorySegment target, long start) {
        TiffinException last = null;
        boolean memory = false;
        for (ReplicaDescriptor d : loc.replicas()) {
            if (d.type() != ReplicaType.MEMORY) {
                continue;
            }
            memory = true;
            if (copiedHere(d, offset, target)) {
                return;
            }
            TiffinException failed = slices.readScattered(List.of(d), new long[] {offset}, List.of(List.of(target)),
                    start + TimeUnit.MILLISECONDS.toNanos(loc.leaseTtlMillis()))[0];
            if (failed == null) {
                return;
            }
            last = failed;
            if (failed.code() == ErrorCode.LEASE_EXPIRED) {
                break; // after the lease no replica's bytes can be trusted
            }
        }
        if (memory) {
            throw last;
        }
        readWhole(loc, offset, target, start);
    }

    /** Copies the range from a replica mapped into this process; false when there is none (or it moved). */
    private boolean copiedHere(ReplicaDescriptor d, long offset, MemorySegment target) {
        MemorySegment local;
        try {
            local = sameHost.slice(d, false);
            if (local == null) {
                return false;
            }
            MemorySegment.copy(local, offset, target, 0, target.byteSize());
        } catch (RuntimeException unmapped) {
            return false; // unmapped meanwhile: the node answers instead
        }
        return !sameHost.epochMoved(d); // re-mounted since the master named it: the node refuses it instead
    }

    /** No memory replica: the whole object (from the SSD tier) into a staging buffer, then the range. */
    private void readWhole(ObjectLocation loc, long offset, MemorySegment target, long start) {
        try (Arena arena = Arena.ofShared()) { // shared: an SSD read is answered on a Netty thread
            MemorySegment whole = arena.allocate(Math.max(1, loc.size()));
            ReadBatch batch = reads.newBatch(start);
            CompletableFuture<Void> f = reads.read(loc, whole.asSlice(0, loc.size()), batch, false);
            batch.flush();
            f.join();
            MemorySegment.copy(whole, offset, target, 0, target.byteSize());
        } catch (CompletionException e) {
            throw lifecycle.transferFailure("get a range of " + loc.key(), e.getCause());
        }
    }
}
