package io.tiffin.core.client;

import io.tiffin.core.local.SharedMemoryFiles;
import io.tiffin.core.util.Ticker;
import io.tiffin.core.transport.proto.SegmentInfoReply;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * A client's mappings of segments that nodes on the same host keep in shared memory
 * ({@code node.shared-memory-dir}): a replica in such a segment is read and written with one memory
 * copy, without the node's socket. The first replica seen in a segment costs one SEGMENT_INFO request
 * to its node; the answer (mapped, or "not shareable") is remembered per segment name, which is unique
 * per node run, so a restarted node is never read through the previous run's mapping.
 *
 * <p>A segment is mapped only when the node reports the same host (boot id) and pid namespace as this
 * process, its process runs, and the file opened here is the one the node created (device and inode).
 * Otherwise, and on any failure, the client uses the socket as before.
 *
 * <p>Writes go through a mapping only while the node's process is alive (pid and start time, checked
 * at most every 20 ms): a write into the memory of a node that crashed would "succeed" where the
 * socket fails, and the put would be acknowledged although its bytes die with the master's expiry of
 * that node. Reads need no such check: a replica the master lists holds its object's bytes.
 *
 * <p>The same rules as for the socket path keep reads correct: bytes are copied only under the lease
 * the master granted with the replica list, so the region cannot be freed and reused meanwhile. What
 * the node would check on a socket read — that the descriptor belongs to the segment's current mount —
 * the client checks itself through the mount epoch word the node keeps in the file
 * ({@link #mountEpoch}), after the copy.
 *
 * <p><b>Ownership</b>: every mapping has its own shared {@link Arena}, owned by this object and closed
 * exactly once: when its file is gone (the node stopped; checked at most every {@link #SWEEP_NANOS})
 * or at {@link #close()}. A copy racing with that close fails with {@link IllegalStateException}, which
 * callers treat as a failed local copy and retry through the socket; it never reads unmapped memory.
 *
 * <p>Time (liveness, sweeps, retry pauses) is measured on the injected {@link Ticker#nanos()}.
 *
 * <p>Thread-safe.
 */
final class SharedSegments implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(SharedSegments.class);
    static final long SWEEP_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** After a node could not answer SEGMENT_INFO, its segment is not asked about again for this long. */
    static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(2);
    /** How long a node process seen alive counts as alive for writes through its mapping. */
    static final long LIVENESS_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    /** A mapped segment; {@code memory == null} marks a segment that is not shareable with this process. */
    private record Mapping(Path path, long device, long inode, Liveness owner, Arena arena,
                           MemorySegment memory, MemorySegment epochWord) {
        static final Mapping NONE = new Mapping(null, 0, 0, null, null, null, null);
    }

    private static final java.lang.invoke.VarHandle LONG = java.lang.foreign.ValueLayout.JAVA_LONG.varHandle();

    /**
     * Whether the node's process runs, asked of the OS at most every {@link #LIVENESS_NANOS}: the check
     * (pid and start time, through /proc) costs about 9 µs here, as much as a 64 KiB copy. A write in
     * the moments after a crash may still land and be acknowledged; the socket path has the same window
     * (a node may die just after acknowledging), and either way the master drops that node's objects
     * when it expires.
     */
    private static final class Liveness {
        private final ProcessHandle process;
        private final Ticker ticker;
        private volatile long checkedAt;
        private volatile boolean alive = true;

        Liveness(ProcessHandle process, Ticker ticker) {
            this.process = process;
            this.ticker = ticker;
            this.checkedAt = ticker.nanos();
        }

        boolean isAlive() {
            long now = ticker.nanos();
            if (alive && now - checkedAt < LIVENESS_NANOS) {
                return true;
            }
            boolean result = process.isAlive();
            alive = result; // once dead, always asked again (and dead)
            checkedAt = now;
            return result;
        }

        /** Asks the OS now. */
        boolean isAliveNow() {
            boolean result = process.isAlive();
            alive = result;
            checkedAt = ticker.nanos();
            return result;
        }
    }

    private final BiFunction<String, String, SegmentInfoReply> segmentInfo;
    private final long retryNanos;
    private final Ticker ticker;
    private final ConcurrentHashMap<String, Mapping> bySegment = new ConcurrentHashMap<>();
    /** Segments whose node could not answer, with the moment ({@link Ticker#nanos()}) after which to ask again. */
    private final ConcurrentHashMap<String, Long> retryAt = new ConcurrentHashMap<>();
    private final String hostId = SharedMemoryFiles.hostId();
    private volatile long lastSweep;
    private volatile boolean closed;

    /** On the system clock, with {@link #RETRY_NANOS} between SEGMENT_INFO requests to a node that could not answer. */
    SharedSegments(BiFunction<String, String, SegmentInfoReply> segmentInfo) {
        this(segmentInfo, RETRY_NANOS, Ticker.SYSTEM);
    }

    /**
     * @param segmentInfo asks the node at an endpoint about one of its segments (endpoint, segment);
     *     throws when the node cannot answer
     * @param retryNanos pause between two SEGMENT_INFO requests for a node that could not answer
     * @param ticker the clock of liveness checks, sweeps and retry pauses
     */
    SharedSegments(BiFunction<String, String, SegmentInfoReply> segmentInfo, long retryNanos, Ticker ticker) {
        this.segmentInfo = segmentInfo;
        this.retryNanos = retryNanos;
        this.ticker = ticker;
        this.lastSweep = ticker.nanos();
    }

    /**
     * The bytes [offset, offset + length) of {@code segment} on the node at {@code endpoint}, mapped
     * into this process, or null when that segment is not shared with this process (then use the
     * socket). With {@code forWrite}, also null when the node's process no longer runs. Valid until
     * the mapping is closed (see the class comment).
     */
    MemorySegment slice(String endpoint, String segment, long offset, long length, boolean forWrite) {
        if (closed || hostId.isEmpty()) {
            return null;
        }
        maybeSweep();
        Mapping m = bySegment.get(segment);
        if (m == null) {
            Long retry = retryAt.get(segment);
            if (retry != null && ticker.nanos() - retry < 0) {
                return null; // its node could not answer a moment ago: do not wait on it again yet
            }
            m = map(endpoint, segment);
            if (m == null) {
                // Not remembered for good (the node may come back), but not asked on every read meanwhile:
                // a node that does not answer would otherwise cost a timeout before each socket attempt.
                retryAt.put(segment, ticker.nanos() + retryNanos);
                return null;
            }
            retryAt.remove(segment);
            Mapping raced = bySegment.putIfAbsent(segment, m);
            if (raced != null) {
                if (m.arena() != null) {
                    m.arena().close();
                }
                m = raced;
            } else if (closed) {
                unmap(segment, m);
                return null;
            }
        }
        MemorySegment memory = m.memory();
        if (memory == null || offset < 0 || length < 0 || offset > memory.byteSize() - length) {
            return null;
        }
        if (forWrite && !m.owner().isAlive()) {
            return null; // a crashed node: the socket fails the write instead of acknowledging it
        }
        return memory.asSlice(offset, length);
    }

    /**
     * The node's current mount epoch of a segment mapped here, read from its file (acquire), or -1 when
     * the segment is not mapped or its node publishes no epoch. Read it after copying through
     * {@link #slice}: when it still equals the descriptor's epoch, the copy saw only that mount's bytes
     * (the node moves the word before the master can place anything new in the segment).
     */
    long mountEpoch(String segment) {
        Mapping m = bySegment.get(segment);
        if (m == null || m.epochWord() == null) {
            return -1;
        }
        try {
            java.lang.invoke.VarHandle.loadLoadFence(); // the copy's loads before this one
            return (long) LONG.getAcquire(m.epochWord(), 0L);
        } catch (IllegalStateException unmapped) {
            return -1;
        }
    }

    /** Number of segments whose node is in its retry pause; for tests. */
    int pausedCount() {
        return retryAt.size();
    }

    /** Number of segments mapped now; for tests and stats. */
    int mappedCount() {
        int n = 0;
        for (Mapping m : bySegment.values()) {
            if (m.memory() != null) {
                n++;
            }
        }
        return n;
    }

    private Mapping map(String endpoint, String segment) {
        SegmentInfoReply info;
        try {
            info = segmentInfo.apply(endpoint, segment);
        } catch (RuntimeException e) {
            LOG.debug("segment info of {} from {} failed: {}", segment, endpoint, e.toString());
            return null;
        }
        if (info.getSharedMemoryPath().isEmpty() || !hostId.equals(info.getHostId())
                || SharedMemoryFiles.pidNamespace().isEmpty()
                || !SharedMemoryFiles.pidNamespace().equals(info.getPidNamespace())) {
            return Mapping.NONE;
        }
        ProcessHandle owner = ProcessHandle.of(info.getPid()).orElse(null);
        if (owner == null || !owner.isAlive()) {
            return Mapping.NONE;
        }
        Path path = Path.of(info.getSharedMemoryPath());
        Arena arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long[] id = SharedMemoryFiles.identity(path);
            long fileSize = info.getFileSize() == 0 ? info.getSize() : info.getFileSize();
            long epochAt = info.getMountEpochOffset();
            if (id[0] != info.getDevice() || id[1] != info.getInode() || ch.size() != fileSize
                    || fileSize < info.getSize() || (epochAt != 0 && (epochAt < info.getSize()
                    || epochAt > fileSize - Long.BYTES || epochAt % Long.BYTES != 0))) {
                arena.close();
                LOG.debug("{} is not the file of segment {} (other device, inode or size); using the socket", path,
                        segment);
                return Mapping.NONE;
            }
            MemorySegment whole = ch.map(FileChannel.MapMode.READ_WRITE, 0, fileSize, arena);
            LOG.debug("mapped segment {} of {} from {}", segment, endpoint, path);
            return new Mapping(path, id[0], id[1], new Liveness(owner, ticker), arena, whole.asSlice(0, info.getSize()),
                    epochAt == 0 ? null : whole.asSlice(epochAt, Long.BYTES));
        } catch (IOException | RuntimeException e) {
            arena.close();
            LOG.debug("cannot map segment {} from {} ({}); using the socket", segment, path, e.toString());
            return Mapping.NONE;
        }
    }

    /** Unmaps the segments whose file is gone or replaced or whose node died, at most every SWEEP_NANOS. */
    private void maybeSweep() {
        long now = ticker.nanos();
        if (now - lastSweep < SWEEP_NANOS) {
            return;
        }
        lastSweep = now;
        sweep();
    }

    /**
     * Unmaps the segments whose file is gone or replaced or whose node's process died, and forgets
     * expired retry pauses (of nodes that never answered, so the map does not grow with every dead
     * segment); returns how many segments were unmapped.
     */
    int sweep() {
        long now = ticker.nanos();
        retryAt.values().removeIf(at -> now - at >= 0);
        List<Map.Entry<String, Mapping>> gone = new ArrayList<>();
        for (Map.Entry<String, Mapping> e : bySegment.entrySet()) {
            Mapping m = e.getValue();
            if (m.memory() == null) {
                continue;
            }
            boolean live;
            try {
                long[] id = Files.exists(m.path()) ? SharedMemoryFiles.identity(m.path()) : null;
                live = id != null && id[0] == m.device() && id[1] == m.inode() && m.owner().isAliveNow();
            } catch (IOException | RuntimeException ex) {
                live = false;
            }
            if (!live) {
                gone.add(e);
            }
        }
        for (Map.Entry<String, Mapping> e : gone) {
            unmap(e.getKey(), e.getValue());
        }
        return gone.size();
    }

    private void unmap(String segment, Mapping m) {
        if (bySegment.remove(segment, m) && m.arena() != null) {
            try {
                m.arena().close();
            } catch (IllegalStateException inUse) {
                LOG.warn("segment {} is still in use by a native operation; it stays mapped until this process exits", segment);
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        for (Map.Entry<String, Mapping> e : List.copyOf(bySegment.entrySet())) {
            unmap(e.getKey(), e.getValue());
        }
    }
}
