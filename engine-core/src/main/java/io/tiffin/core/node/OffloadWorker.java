package io.tiffin.core.node;

import io.tiffin.api.spi.storage.ObjectStamp;
import io.tiffin.api.spi.storage.StorageBackend;
import io.tiffin.core.local.LocalSegment;
import io.tiffin.core.transport.proto.DiskObject;
import io.tiffin.core.transport.proto.OffloadTask;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Copies objects from the node's memory segment to its SSD backend, as the master asks (offload tasks):
 * its ring takes the tasks, its thread writes them in batches of up to {@value #BATCH} objects straight
 * from the segment, reports the SSD copies and the failures to the master ({@link DiskReports}), and then
 * sends the eviction notices the writes caused ({@link EvictionNotices#deliver}). The same thread sends
 * the notices whenever the heartbeat ring asks ({@link #requestNoticeDelivery}), after the offloads
 * taken before.
 *
 * <p>A write batch and its report hold {@link DiskReports#lock()}, and the write first drops the
 * notices queued for the keys it writes, so no notice about an older copy reaches the master after the
 * report of the new one.
 *
 * <p>Thread-safe: {@link #offer} and {@link #requestNoticeDelivery} from any thread (never blocking);
 * the tasks run on the ring's thread. Owns its ring, stopped by {@link #close()}; borrows the backend and
 * the segment from its {@link NodeStorageTier}.
 */
final class OffloadWorker implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(OffloadWorker.class);
    static final int BATCH = 32;
    private static final int RING_SIZE = 1024;

    /** A reusable ring slot: an offload, or "send the eviction notices". */
    private static final class Slot {
        OffloadTask task;
        boolean deliverNotices;
    }

    private final String nodeId;
    private final StorageBackend backend;
    private final LocalSegment segment;
    private final DiskReports reports;
    private final EvictionNotices notices;
    private final TaskRing<Slot> ring;
    private final AtomicInteger inRing = new AtomicInteger();
    /** Whether a "send the notices" slot is in the ring. */
    private final AtomicBoolean noticeDeliveryQueued = new AtomicBoolean();
    /** Ring thread only: offloads taken and not yet written. */
    private final List<OffloadTask> batch = new ArrayList<>();

    final LongAdder offloaded = new LongAdder();
    final LongAdder failures = new LongAdder();

    /** What the node knows of the copies written (see {@code NodeStorageTier}); shared with the tier. */
    private final DiskCopies copies;

    OffloadWorker(String nodeId, StorageBackend backend, LocalSegment segment, DiskReports reports,
                  EvictionNotices notices, DiskCopies copies) {
        this.nodeId = nodeId;
        this.copies = copies;
        this.backend = backend;
        this.segment = segment;
        this.reports = reports;
        this.notices = notices;
        this.ring = new TaskRing<>("tiffin-node-offload", RING_SIZE, Slot::new, (slot, seq, end) -> onSlot(slot, end));
    }

    /** How many more offloads to ask the master for: up to half the ring's slots hold offloads. */
    int room() {
        return Math.max(0, RING_SIZE / 2 - inRing.get());
    }

    /** Queues {@code task}; drops it with a WARN line when the ring is full (the master times it out). */
    void offer(OffloadTask task) {
        inRing.incrementAndGet();
        if (!ring.tryPublish((slot, seq, t) -> {
            slot.task = t;
            slot.deliverNotices = false;
        }, task)) {
            inRing.decrementAndGet();
            LOG.warn("Node {} offload ring full; dropped the offload of {}", nodeId, task.getKey());
        }
    }

    /** Asks the worker to send the queued eviction notices, unless it is already asked. Never blocks. */
    void requestNoticeDelivery() {
        if (!noticeDeliveryQueued.compareAndSet(false, true)) {
            return;
        }
        if (!ring.tryPublish((slot, seq) -> {
            slot.deliverNotices = true;
            slot.task = null;
        })) {
            noticeDeliveryQueued.set(false); // the ring is full; the next tick asks again
        }
    }

    private void onSlot(Slot slot, boolean endOfBatch) {
        if (slot.deliverNotices) {
            slot.deliverNotices = false;
            noticeDeliveryQueued.set(false);
            writeCollected(); // offloads taken before this request go first
            notices.deliver();
            return;
        }
        OffloadTask task = slot.task;
        slot.task = null;
        inRing.decrementAndGet();
        batch.add(task);
        if (endOfBatch || batch.size() >= BATCH) {
            writeCollected();
            notices.deliver(); // the write may have evicted: tell the master now, not at the next tick
        }
    }

    private void writeCollected() {
        if (batch.isEmpty()) {
            return;
        }
        List<OffloadTask> tasks = List.copyOf(batch);
        batch.clear();
        reports.lock();
        try {
            writeAndReport(tasks);
        } finally {
            reports.unlock();
        }
    }

    private void writeAndReport(List<OffloadTask> tasks) {
        Map<String, MemorySegment> objects = new LinkedHashMap<>();
        Map<String, ObjectStamp> stamps = new HashMap<>();
        // per key, the task whose bytes are written: the last good one (a later task of a key replaces an earlier)
        Map<String, OffloadTask> chosen = new HashMap<>();
        List<String> failed = new ArrayList<>();
        List<Long> failedVersions = new ArrayList<>();
        for (OffloadTask t : tasks) {
            if (!t.getSegment().equals(segment.name())) {
                failed.add(t.getKey());
                failedVersions.add(t.getVersion());
                continue;
            }
            MemorySegment bytes = segment.slice(t.getOffset(), t.getSize());
            int crc = t.getCrc32C() == 0 ? 0 : io.tiffin.core.util.Crc32c.of(bytes);
            if (crc != t.getCrc32C()) {
                // a corrupt memory replica must not become a clean-looking SSD copy (the tier's own CRC would pass)
                LOG.warn("Node {} refuses to offload {}: its bytes in segment {} at offset {} have CRC32C {}, the"
                        + " object's is {}; that memory replica is corrupt", nodeId, t.getKey(), t.getSegment(),
                        t.getOffset(), io.tiffin.core.util.Crc32c.hex(crc), io.tiffin.core.util.Crc32c.hex(t.getCrc32C()));
                failed.add(t.getKey());
                failedVersions.add(t.getVersion());
                continue;
            }
            objects.put(t.getKey(), bytes);
            stamps.put(t.getKey(), new ObjectStamp(Math.max(0, t.getVersion()), Math.max(0, t.getExpireAtMs())));
            chosen.put(t.getKey(), t);
        }
        List<DiskObject> written = new ArrayList<>();
        try {
            if (!objects.isEmpty()) {
                backend.writeBatch(objects, stamps); // the stamps bring version and deadline back after a restart
                // The backend now holds these keys: notices queued for them were about the copies this
                // write replaced (evicted or lost before it), and must not reach the master after the
                // report of the new copies below.
                notices.forget(objects.keySet());
                // only the tasks whose bytes went to the disk: not one that failed its check beside another task of
                // its key, nor one a later task of its key replaced (the master compares the versions it is told)
                for (String key : objects.keySet()) {
                    OffloadTask t = chosen.get(key);
                    DiskObject copy = DiskObject.newBuilder().setKey(t.getKey()).setSize(t.getSize())
                            .setVersion(t.getVersion()).setExpireAtMs(t.getExpireAtMs()).build();
                    copies.written(copy);
                    written.add(copy);
                }
            }
        } catch (RuntimeException | LinkageError | StackOverflowError e) {
            // the backend is plugin code: an Error of a missing or corrupt jar of its is a failed offload too, reported
            // as one (else the master waited for these offloads until master.put-start-release-timeout)
            LOG.warn("Node {} could not offload {} objects to SSD ({}); their memory copies stay", nodeId,
                    objects.size(), e.toString());
            for (String key : objects.keySet()) {
                failed.add(key);
                failedVersions.add(chosen.get(key).getVersion());
            }
        }
        offloaded.add(written.size());
        failures.add(failed.size());
        reports.held(written);
        reports.offloadsFailed(failed, failedVersions);
    }

    /** Lets the thread finish the tasks it has taken (up to 5 s), then stops it. */
    @Override
    public void close() {
        ring.close();
    }
}
