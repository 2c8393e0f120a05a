package io.tiffin.core.client;

import io.tiffin.core.node.SharedMemoryFiles;
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
 * <p>A segment is mapped only when the node reports the same host (boot id) as this process and the
 * file opened here is the one the node created (device and inode). Otherwise, and on any failure, the
 * client uses the socket as before.
 *
 * <p>The same rules as for the socket path keep reads correct: bytes are copied only under the lease
 * the master granted with the replica list, so the region cannot be freed and reused meanwhile.
 *
 * <p><b>Ownership</b>: every mapping has its own shared {@link Arena}, owned by this object and closed
 * exactly once: when its file is gone (the node stopped; checked at most every {@link #SWEEP_NANOS})
 * or at {@link #close()}. A copy racing with that close fails with {@link IllegalStateException}, which
 * callers treat as a failed local copy and retry through the socket; it never reads unmapped memory.
 *
 * <p>Thread-safe.
 */
final class SharedSegments implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(SharedSegments.class);
    static final long SWEEP_NANOS = TimeUnit.SECONDS.toNanos(5);

    /** A mapped segment; {@code memory == null} marks a segment that is not shareable with this process. */
    private record Mapping(Path path, long device, long inode, Arena arena, MemorySegment memory) {
        static final Mapping NONE = new Mapping(null, 0, 0, null, null);
    }

    private final BiFunction<String, String, SegmentInfoReply> segmentInfo;
    private final ConcurrentHashMap<String, Mapping> bySegment = new ConcurrentHashMap<>();
    private final String hostId = SharedMemoryFiles.hostId();
    private volatile long lastSweep = System.nanoTime();
    private volatile boolean closed;

    /**
     * @param segmentInfo asks the node at an endpoint about one of its segments (endpoint, segment);
     *     throws when the node cannot answer
     */
    SharedSegments(BiFunction<String, String, SegmentInfoReply> segmentInfo) {
        this.segmentInfo = segmentInfo;
    }

    /**
     * The bytes [offset, offset + length) of {@code segment} on the node at {@code endpoint}, mapped
     * into this process, or null when that segment is not shared with this process (then use the
     * socket). Valid until the mapping is closed (see the class comment).
     */
    MemorySegment slice(String endpoint, String segment, long offset, long length) {
        if (closed || hostId.isEmpty()) {
            return null;
        }
        maybeSweep();
        Mapping m = bySegment.get(segment);
        if (m == null) {
            m = map(endpoint, segment);
            if (m == null) {
                return null; // the node could not answer: not remembered, asked again next time
            }
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
        return memory.asSlice(offset, length);
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
        if (info.getSharedMemoryPath().isEmpty() || !hostId.equals(info.getHostId())) {
            return Mapping.NONE;
        }
        Path path = Path.of(info.getSharedMemoryPath());
        Arena arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long[] id = SharedMemoryFiles.identity(path);
            if (id[0] != info.getDevice() || id[1] != info.getInode() || ch.size() != info.getSize()) {
                arena.close();
                LOG.debug("{} is not the file of segment {} (other device, inode or size); using the socket", path,
                        segment);
                return Mapping.NONE;
            }
            MemorySegment memory = ch.map(FileChannel.MapMode.READ_WRITE, 0, info.getSize(), arena);
            LOG.debug("mapped segment {} of {} from {}", segment, endpoint, path);
            return new Mapping(path, id[0], id[1], arena, memory);
        } catch (IOException | RuntimeException e) {
            arena.close();
            LOG.debug("cannot map segment {} from {} ({}); using the socket", segment, path, e.toString());
            return Mapping.NONE;
        }
    }

    /** Unmaps the segments whose file is gone or replaced (their node stopped), at most every SWEEP_NANOS. */
    private void maybeSweep() {
        long now = System.nanoTime();
        if (now - lastSweep < SWEEP_NANOS) {
            return;
        }
        lastSweep = now;
        sweep();
    }

    /** Unmaps the segments whose file is gone or replaced; returns how many. */
    int sweep() {
        List<Map.Entry<String, Mapping>> gone = new ArrayList<>();
        for (Map.Entry<String, Mapping> e : bySegment.entrySet()) {
            Mapping m = e.getValue();
            if (m.memory() == null) {
                continue;
            }
            boolean live;
            try {
                long[] id = Files.exists(m.path()) ? SharedMemoryFiles.identity(m.path()) : null;
                live = id != null && id[0] == m.device() && id[1] == m.inode();
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
