package io.tiffin.core.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.spi.storage.StorageBackend;
import io.tiffin.api.spi.storage.StorageListener;
import io.tiffin.api.spi.storage.StorageStats;
import io.tiffin.core.local.LocalSegment;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportClientPool;
import io.tiffin.core.transport.TransportServer;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.DiskObjectsReport;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.OffloadResult;
import io.tiffin.core.transport.proto.OffloadTask;
import io.tiffin.core.util.ManualTicker;
import io.tiffin.plugins.testkit.storage.InMemoryStorageBackend;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The offload worker when the backend, plugin code, fails a write with an Error (a plugin whose dependency jar is
 * missing): the offload is reported failed to the master (which keeps the object in memory and does not wait for it
 * until {@code master.put-start-release-timeout}), the memory copy is left as it was, nothing is reported written,
 * and the worker goes on with later offloads. The read path's counterpart is {@link
 * SsdReadLimitsTest#aBackendReadThatThrowsAnErrorIsAnsweredAndItsMemoryFreed}.
 *
 * <p>The master is a scripted {@link TransportServer} that records the reports and failed offloads it is told of.
 */
class OffloadWorkerTest {
    private static final long MiB = 1L << 20;

    private final InMemoryStorageBackend disk = new InMemoryStorageBackend(new ConcurrentHashMap<>(), 64 * MiB);
    /** {@link #disk}, but a write batch holding the key "broken" fails as a plugin missing a jar does. */
    private final StorageBackend backend = new StorageBackend() {
        @Override
        public void writeBatch(Map<String, MemorySegment> objects) {
            if (objects.containsKey("broken")) {
                throw new NoClassDefFoundError("p/MissingCodec");
            }
            disk.writeBatch(objects);
        }

        @Override
        public OptionalLong size(String key) {
            return disk.size(key);
        }

        @Override
        public long read(String key, MemorySegment destination) {
            return disk.read(key, destination);
        }

        @Override
        public boolean remove(String key) {
            return disk.remove(key);
        }

        @Override
        public void scan(BiConsumer<String, Long> visitor) {
            disk.scan(visitor);
        }

        @Override
        public long usedBytes() {
            return disk.usedBytes();
        }

        @Override
        public long capacityBytes() {
            return disk.capacityBytes();
        }

        @Override
        public void listener(StorageListener listener) {
            disk.listener(listener);
        }

        @Override
        public StorageStats stats() {
            return disk.stats();
        }

        @Override
        public void close() {
            disk.close();
        }
    };

    /** Offloads the node reported failed: "key vVERSION". */
    private final List<String> failed = Collections.synchronizedList(new ArrayList<>());
    /** Copies the node reported written: "key vVERSION". */
    private final List<String> written = Collections.synchronizedList(new ArrayList<>());
    private final ExecutorService io = Executors.newSingleThreadExecutor();
    private TransportServer master;
    private TransportClientPool pool;
    private LocalSegment segment;
    private OffloadWorker worker;

    @BeforeEach
    void setUp() {
        master = new TransportServer("scripted-master", TransportSettings.defaults());
        Empty empty = Empty.getDefaultInstance();
        master.register(Opcode.OFFLOAD_DONE, (r, out) -> {
            OffloadResult done = r.parseControl(OffloadResult.parser());
            for (int i = 0; i < done.getFailedCount(); i++) {
                failed.add(done.getFailed(i) + " v" + done.getFailedVersions(i));
            }
            out.ok(empty);
        }, null);
        master.register(Opcode.REPORT_DISK_OBJECTS, (r, out) -> {
            r.parseControl(DiskObjectsReport.parser()).getObjectsList()
                    .forEach(o -> written.add(o.getKey() + " v" + o.getVersion()));
            out.ok(empty);
        }, null);
        master.register(Opcode.EVICT_DISK_REPLICA, (r, out) -> out.ok(empty), null);
        master.start("127.0.0.1", freePort());
        pool = new TransportClientPool("offload-test", TransportSettings.defaults(), "offload-node");
        String address = "127.0.0.1:" + master.localAddress().getPort();
        segment = new LocalSegment("offload-node-seg0", MiB);
        ManualTicker ticker = new ManualTicker();
        DiskReports reports = new DiskReports("offload-node", () -> pool.get(address));
        EvictionNotices notices = new EvictionNotices("offload-node", backend, reports, ticker);
        DiskCopies copies = new DiskCopies(backend, io,
                new FailedDiskChanges("offload-node", FailedDiskChanges.Kind.DEADLINES), ticker);
        worker = new OffloadWorker("offload-node", backend, segment, reports, notices, copies);
    }

    @AfterEach
    void tearDown() {
        worker.close();
        pool.close();
        master.close();
        segment.close();
        io.shutdownNow();
        backend.close();
    }

    /** A port of 44000-44999 that is free now. */
    private static int freePort() {
        for (int i = 0; i < 500; i++) {
            int port = 44000 + ThreadLocalRandom.current().nextInt(1000);
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress("127.0.0.1", port));
                return port;
            } catch (IOException taken) {
                // another one
            }
        }
        throw new IllegalStateException("no free port in 44000-44999");
    }

    private OffloadTask task(String key, long offset, long version) {
        return OffloadTask.newBuilder().setKey(key).setSize(100).setSegment(segment.name()).setOffset(offset)
                .setVersion(version).build();
    }

    private List<String> reportedWritten() {
        synchronized (written) {
            return List.copyOf(written);
        }
    }

    @Test
    void aWriteThatThrowsALinkageErrorIsReportedFailedAndTheWorkerGoesOn() {
        segment.slice(0, 100).fill((byte) 7);
        segment.slice(100, 100).fill((byte) 9);

        worker.offer(task("broken", 0, 5));

        await("the failed offload's report").atMost(Duration.ofSeconds(20)).until(() -> !failed.isEmpty());
        assertThat(failed).containsExactly("broken v5");
        assertThat(reportedWritten()).as("reported written").isEmpty();
        assertThat(disk.size("broken")).as("on the disk").isEmpty();
        assertThat(worker.failures.sum()).isEqualTo(1);
        assertThat(worker.offloaded.sum()).isZero();
        byte[] kept = segment.slice(0, 100).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        assertThat(kept).as("the memory copy, as it was").containsOnly((byte) 7);

        worker.offer(task("good", 100, 6)); // the same worker thread, after the Error

        await("the next offload's report").atMost(Duration.ofSeconds(20))
                .until(() -> reportedWritten().contains("good v6"));
        assertThat(failed).containsExactly("broken v5");
        assertThat(worker.offloaded.sum()).isEqualTo(1);
        assertThat(worker.failures.sum()).isEqualTo(1);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment back = arena.allocate(100);
            assertThat(disk.read("good", back)).isEqualTo(100);
            assertThat(back.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)).containsOnly((byte) 9);
        }
    }
}
