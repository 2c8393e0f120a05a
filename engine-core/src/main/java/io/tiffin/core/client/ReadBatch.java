package io.tiffin.core.client;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.hotcache.LocalHotCache;
import io.tiffin.core.util.CpuCaches;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Reads gathered during one call. Reads of SSD-only objects are sent as one {@code DATA_READ_SSD} per node
 * (in chunks that fit a frame), so a batch get costs one SSD round trip per node. Reads of remote memory
 * replicas go over pooled blocking connections ({@link SliceExchange}): every slice request to every node is
 * written first, then the calling thread receives the answers straight into the destinations (one copy, no
 * event-loop hand-off); a read that fails there falls back to the object's other replicas ({@link
 * AsyncNodeReads#readRemote}). Received bytes are checked against the object's CRC32C ({@link Checksums})
 * before they are used or cached; a replica that fails it counts as a failed read (the others are tried). For
 * an object the hot cache may keep, blocks are asked of the cache's ring before the read is sent; the bytes
 * are received into the destination and then copied into those blocks (one copy, shared with the cache's copy
 * helper, while the ring did the admission meanwhile); the copy also takes the checksum (each chunk right after it
 * is copied), so a fill reads the received bytes once, as a read without a fill does to check them.
 *
 * <p>Not thread-safe: used by the calling thread only. The block requests it makes are completed or
 * cancelled by {@link #flush()}.
 */
final class ReadBatch {
    private static final Logger LOG = LogManager.getLogger(ReadBatch.class);

    /**
     * A read of a remote memory replica into {@code dst}. With {@code fill} set, {@code blocks} were asked
     * of the hot cache for it (null when refused at once); once received, the bytes are copied into them.
     */
    private record MemoryRead(List<ReplicaDescriptor> replicas, MemorySegment dst, CompletableFuture<Void> done,
                              ObjectLocation loc, ObjectLocation fill, LocalHotCache.PendingFill blocks) {
    }

    private final SliceExchange slices;
    private final AsyncNodeReads async;
    /** Null when disabled. */
    private final LocalHotCache hotCache;
    private final LeaseClock clock;
    private final ClientLifecycle lifecycle;
    private final Checksums checks;
    /** Null when none are kept. */
    private final SuspectNodes suspects;
    private final Map<String, List<AsyncNodeReads.SsdRead>> ssdByEndpoint = new LinkedHashMap<>();
    private final List<MemoryRead> memoryReads = new ArrayList<>();
    /** When the call began, before its lookups: the leases they granted started later. */
    private final long startNanos;
    /** Whether the call's destinations together exceed the last-level CPU cache ({@link #destinationsOutOfCaches}). */
    private final boolean destinationsOutOfCaches;
    /** The shortest lease of the memory reads added (ns); their answers are awaited no longer. */
    private long leaseNanos = Long.MAX_VALUE / 4;

    ReadBatch(SliceExchange slices, AsyncNodeReads async, LocalHotCache hotCache, LeaseClock clock,
              ClientLifecycle lifecycle, Checksums checks, long startNanos, long destinationBytes) {
        this(slices, async, hotCache, clock, lifecycle, checks, startNanos, destinationBytes, null);
    }

    /** {@code suspects}: the nodes read last and noted when a first read of them goes unanswered (null = none). */
    ReadBatch(SliceExchange slices, AsyncNodeReads async, LocalHotCache hotCache, LeaseClock clock,
              ClientLifecycle lifecycle, Checksums checks, long startNanos, long destinationBytes,
              SuspectNodes suspects) {
        this.suspects = suspects;
        this.destinationsOutOfCaches = destinationBytes > CpuCaches.lastLevelBytes();
        this.checks = checks;
        this.slices = slices;
        this.async = async;
        this.hotCache = hotCache;
        this.clock = clock;
        this.lifecycle = lifecycle;
        this.startNanos = startNanos;
    }

    /**
     * Whether the call's destinations together exceed the last-level CPU cache, so that most of them cannot be in it
     * when their bytes arrive: hot-cache hits then copy into them around the caches ({@link
     * LocalHotCache#tryRead(String, long, long, java.lang.foreign.MemorySegment, boolean)}).
     */
    boolean destinationsOutOfCaches() {
        return destinationsOutOfCaches;
    }

    /** A memory read of {@code loc} is about to be added: its lease bounds the batch's wait. */
    void noteLease(ObjectLocation loc) {
        leaseNanos = Math.min(leaseNanos, TimeUnit.MILLISECONDS.toNanos(loc.leaseTtlMillis()));
    }

    /**
     * Whether bytes just received for {@code loc} were read under its lease and may be cached. After
     * the lease the master may have freed the replica and given its memory to another object, whose
     * bytes the read may have received: such a read fails ({@code LEASE_EXPIRED}) and must not leave
     * them in the cache under this object's version.
     */
    private boolean withinLease(ObjectLocation loc) {
        return clock.withinLease(loc, startNanos);
    }

    /** A read of {@code loc}'s {@code replicas} (in order: the next is tried if one fails) into {@code dst}. */
    CompletableFuture<Void> addMemory(List<ReplicaDescriptor> replicas, MemorySegment dst, ObjectLocation loc) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        memoryReads.add(new MemoryRead(ordered(replicas), dst, done, loc, null, null));
        return done;
    }

    /** A memory read whose bytes are also offered to the hot cache (see {@link MemoryRead}). */
    CompletableFuture<Void> addMemoryFill(List<ReplicaDescriptor> replicas, MemorySegment dst, ObjectLocation loc) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        memoryReads.add(new MemoryRead(ordered(replicas), dst, done, loc, loc,
                hotCache.requestBlocks(loc.key(), loc.version(), loc.size())));
        return done;
    }

    /** {@code replicas} with those on suspected nodes last ({@link SuspectNodes}). */
    private List<ReplicaDescriptor> ordered(List<ReplicaDescriptor> replicas) {
        return suspects == null ? replicas : suspects.order(replicas);
    }

    /** Notes how the first replica's node answered: silence (or a dead connection) makes it suspected. */
    private void noteAnswer(ReplicaDescriptor first, TiffinException failure) {
        if (suspects == null) {
            return;
        }
        if (failure == null) {
            suspects.answered(first.endpoint());
        } else if (failure.code() == ErrorCode.LEASE_EXPIRED || failure.code() == ErrorCode.RPC_TIMEOUT
                || failure.code() == ErrorCode.RPC_FAIL) {
            suspects.note(first.endpoint());
        }
    }

    /** A read of {@code loc} from the SSD of the node at {@code endpoint} into {@code dst}. */
    CompletableFuture<Void> addSsd(String endpoint, ObjectLocation loc, MemorySegment dst) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        ssdByEndpoint.computeIfAbsent(endpoint, e -> new ArrayList<>()).add(new AsyncNodeReads.SsdRead(loc, dst, done));
        return done;
    }

    /** Sends the SSD reads (answered asynchronously), then performs the memory reads. */
    void flush() {
        flushSsd();
        flushMemory();
    }

    private void flushMemory() {
        if (memoryReads.isEmpty()) {
            return;
        }
        List<ReplicaDescriptor> first = new ArrayList<>(memoryReads.size());
        List<List<MemorySegment>> targets = new ArrayList<>(memoryReads.size());
        for (MemoryRead r : memoryReads) {
            first.add(r.replicas().getFirst());
            targets.add(List.of(r.dst()));
        }
        TiffinException[] failed = slices.readScattered(first, targets, startNanos + leaseNanos);
        for (int k = 0; k < failed.length; k++) {
            MemoryRead r = memoryReads.get(k);
            noteAnswer(r.replicas().getFirst(), failed[k]);
            if (failed[k] == null) {
                failed[k] = r.blocks() != null ? checkAndFill(r) : checks.mismatch(r.loc(), r.replicas().getFirst(), r.dst());
                if (failed[k] != null) {
                    LOG.warn("{}; trying another replica", failed[k].getMessage());
                }
            } else if (r.blocks() != null) {
                try {
                    r.blocks().cancel();
                } catch (RuntimeException e) {
                    LOG.debug("hot cache fill of {} could not be cancelled", r.fill().key(), e);
                }
            }
            if (failed[k] == null) {
                r.done().complete(null);
            } else if (r.replicas().size() > 1 && failed[k].code() != ErrorCode.LEASE_EXPIRED) {
                // (after the lease, no replica's bytes can be trusted: the read fails as it is)
                LOG.debug("read of replica 0 failed ({}), trying the others", failed[k].getMessage());
                TiffinException firstFailure = failed[k];
                async.readRemote(r.replicas(), 1, r.dst(), r.loc(), r.fill() != null, startNanos).whenComplete((v, err) -> {
                    if (err == null) {
                        r.done().complete(null);
                    } else {
                        // a corrupt first replica is what a user should hear of, unless another one is too
                        r.done().completeExceptionally(firstFailure.code() == ErrorCode.CHECKSUM_MISMATCH
                                && !(unwrap(err) instanceof TiffinException t && t.code() == ErrorCode.CHECKSUM_MISMATCH)
                                ? firstFailure : err);
                    }
                });
            } else {
                r.done().completeExceptionally(failed[k]);
            }
        }
        memoryReads.clear();
    }

    /**
     * Checks the bytes received into {@code r.dst()} and, when the cache granted blocks, copies them in: the copy
     * takes the checksum on the way (one pass over the bytes). The copy becomes visible only if the bytes match
     * and were read within the lease; else its blocks go back. Returns null or the mismatch, as {@link
     * Checksums#mismatch}; a fill that fails otherwise (the cache closed) leaves the read itself as it is.
     */
    private TiffinException checkAndFill(MemoryRead r) {
        ReplicaDescriptor from = r.replicas().getFirst();
        LocalHotCache.Reservation blocks;
        try {
            blocks = r.blocks().await();
        } catch (RuntimeException e) {
            LOG.debug("hot cache blocks for {} not granted", r.fill().key(), e);
            blocks = null;
        }
        if (blocks == null) {
            return checks.mismatch(r.loc(), from, r.dst());
        }
        boolean check = checks.wants(r.loc());
        int crc;
        try {
            crc = blocks.copyIn(r.dst(), check);
        } catch (RuntimeException e) {
            LOG.debug("hot cache fill of {} failed (the read itself succeeded)", r.fill().key(), e);
            abort(blocks, r);
            return checks.mismatch(r.loc(), from, r.dst());
        }
        TiffinException bad = check ? checks.mismatch(r.loc(), from, crc) : null;
        if (bad == null && withinLease(r.fill())) {
            try {
                blocks.publish();
            } catch (RuntimeException e) {
                LOG.debug("hot cache fill of {} could not be published", r.fill().key(), e);
            }
        } else {
            abort(blocks, r);
        }
        return bad;
    }

    private static void abort(LocalHotCache.Reservation blocks, MemoryRead r) {
        try {
            blocks.abort();
        } catch (RuntimeException e) {
            LOG.debug("hot cache blocks for {} could not be given back", r.fill().key(), e);
        }
    }

    private static Throwable unwrap(Throwable t) {
        return t instanceof java.util.concurrent.CompletionException && t.getCause() != null ? t.getCause() : t;
    }

    private void flushSsd() {
        long budget = async.ssdRequestBudget();
        for (Map.Entry<String, List<AsyncNodeReads.SsdRead>> e : ssdByEndpoint.entrySet()) {
            List<AsyncNodeReads.SsdRead> chunk = new ArrayList<>();
            long bytes = 0;
            for (AsyncNodeReads.SsdRead p : e.getValue()) {
                if (!chunk.isEmpty() && bytes + p.loc().size() > budget) {
                    async.readSsd(e.getKey(), chunk, startNanos);
                    chunk = new ArrayList<>();
                    bytes = 0;
                }
                chunk.add(p);
                bytes += p.loc().size();
            }
            if (!chunk.isEmpty()) {
                async.readSsd(e.getKey(), chunk, startNanos);
            }
        }
        ssdByEndpoint.clear();
    }
}
