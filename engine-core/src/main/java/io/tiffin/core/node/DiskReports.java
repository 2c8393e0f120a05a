package io.tiffin.core.node;

import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportClient;
import io.tiffin.core.transport.proto.DiskEvicted;
import io.tiffin.core.transport.proto.DiskObject;
import io.tiffin.core.transport.proto.DiskObjectsReport;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.OffloadResult;
import io.tiffin.core.transport.proto.StorageRegistration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * What a node tells the master about its SSD copies: registration, copies written, offloads that failed,
 * copies gone. Each message is answered before the call returns.
 *
 * <p><b>Order.</b> The master knows an SSD copy only by node and key, so a "gone" notice that arrives
 * after a newer copy of the key was reported would drop the new copy from its listing. Whoever sends
 * holds {@link #lock()} around a whole step (a registration scan with its reports, a write batch with its
 * report, a round of notices), so the steps reach the master one at a time, in the order they ran.
 *
 * <p>Thread-safe. Holds no resources; the master connection belongs to the node.
 */
final class DiskReports {
    private final String nodeId;
    private final Supplier<TransportClient> master;
    private final ReentrantLock lock = new ReentrantLock();

    DiskReports(String nodeId, Supplier<TransportClient> master) {
        this.nodeId = nodeId;
        this.master = master;
    }

    /** Starts a step that must not interleave with another (see the class comment); pair with {@link #unlock()}. */
    void lock() {
        lock.lock();
    }

    void unlock() {
        lock.unlock();
    }

    /** {@code REGISTER_STORAGE}: the node has an SSD tier of {@code capacity} bytes. */
    void register(long capacity) {
        master.get().callSync(Opcode.REGISTER_STORAGE, StorageRegistration.newBuilder().setNodeId(nodeId)
                .setCapacity(capacity).build(), Empty.parser());
    }

    /** {@code REPORT_DISK_OBJECTS}: the backend holds these copies (nothing is sent for none). */
    void held(List<DiskObject> objects) {
        if (!objects.isEmpty()) {
            master.get().callSync(Opcode.REPORT_DISK_OBJECTS, DiskObjectsReport.newBuilder().setNodeId(nodeId)
                    .addAllObjects(objects).build(), Empty.parser());
        }
    }

    /**
     * {@code REPORT_DISK_OBJECTS} of the last copies of a registration's scan (sent even when there are none), marked
     * {@code scan_complete}: the master has then heard of every copy the backend holds.
     */
    void scanned(List<DiskObject> last) {
        master.get().callSync(Opcode.REPORT_DISK_OBJECTS, DiskObjectsReport.newBuilder().setNodeId(nodeId)
                .addAllObjects(last).setScanComplete(true).build(), Empty.parser());
    }

    /**
     * {@code OFFLOAD_DONE}: these offloads, of these versions (parallel), failed; their memory copies stay (nothing is
     * sent for none).
     */
    void offloadsFailed(List<String> keys, List<Long> versions) {
        if (!keys.isEmpty()) {
            master.get().callSync(Opcode.OFFLOAD_DONE, OffloadResult.newBuilder().setNodeId(nodeId)
                    .addAllFailed(keys).addAllFailedVersions(versions).build(), Empty.parser());
        }
    }

    /** {@code EVICT_DISK_REPLICA}: the backend no longer holds these copies. */
    void gone(Collection<String> keys) {
        master.get().callSync(Opcode.EVICT_DISK_REPLICA, DiskEvicted.newBuilder().setNodeId(nodeId)
                .addAllKeys(keys).build(), Empty.parser());
    }
}
