package io.tiffin.core.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.PluginContext;
import io.tiffin.api.spi.storage.StorageBackend;
import io.tiffin.api.spi.storage.StorageBackendFactory;
import io.tiffin.api.spi.storage.StorageListener;
import io.tiffin.api.spi.storage.StorageStats;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportServer;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.PingReply;
import io.tiffin.core.transport.proto.TaskPollReply;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A storage backend whose start-up listing ({@code scan}) fails, as a broken plugin's does (an exception, or an Error
 * such as the {@code NoClassDefFoundError} of a jar left out of its folder): the node does not start, its error names
 * the backend, its plugin and the cause, and it leaves nothing behind: not its mount at the master, its port, or the
 * backend open.
 *
 * <p>The master is a scripted {@link TransportServer} that takes the node's mount and registration and counts its
 * unmounts.
 */
class NodeStartScanFailureTest {
    private static final long MiB = 1L << 20;

    private final AtomicInteger mounts = new AtomicInteger();
    private final AtomicInteger unmounts = new AtomicInteger();
    private final AtomicBoolean refuseReports = new AtomicBoolean();
    private TransportServer master;

    @BeforeEach
    void setUp() {
        master = new TransportServer("scripted-master", TransportSettings.defaults());
        Empty empty = Empty.getDefaultInstance();
        master.register(Opcode.MOUNT_SEGMENT, (r, out) -> {
            mounts.incrementAndGet();
            out.ok(empty);
        }, null);
        master.register(Opcode.UNMOUNT_SEGMENT, (r, out) -> {
            unmounts.incrementAndGet();
            out.ok(empty);
        }, null);
        master.register(Opcode.REGISTER_STORAGE, (r, out) -> out.ok(empty), null);
        master.register(Opcode.REPORT_DISK_OBJECTS, (r, out) -> {
            if (refuseReports.get()) {
                out.fail(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, "the test's master takes no reports now");
            } else {
                out.ok(empty);
            }
        }, null);
        master.register(Opcode.PING, (r, out) -> out.ok(PingReply.getDefaultInstance()), null);
        master.register(Opcode.POLL_TASKS, (r, out) -> out.ok(TaskPollReply.getDefaultInstance()), null);
        master.start("127.0.0.1", 0);
    }

    @AfterEach
    void tearDown() {
        master.close();
    }

    /** A loopback port that is free now (the system's choice). */
    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static boolean portFree(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress("127.0.0.1", port));
            return true;
        } catch (IOException taken) {
            return false;
        }
    }

    /** The backend the factory hands out: every listing fails with {@code failure}, or lists {@code objects} keys. */
    private static final class Backend implements StorageBackend {
        final Supplier<Throwable> failure;
        final int objects;
        final AtomicBoolean closed = new AtomicBoolean();
        /** What {@code listener} throws (null: nothing). */
        volatile Supplier<Throwable> listenerFailure;

        Backend(Supplier<Throwable> failure, int objects) {
            this.failure = failure;
            this.objects = objects;
        }

        private static void sneakyThrow(Throwable t) {
            if (t instanceof RuntimeException r) {
                throw r;
            }
            throw (Error) t;
        }

        @Override
        public void scan(BiConsumer<String, Long> visitor) {
            if (failure != null) {
                sneakyThrow(failure.get());
            }
            for (int i = 0; i < objects; i++) {
                visitor.accept("k" + i, 10L);
            }
        }

        @Override
        public void writeBatch(Map<String, MemorySegment> objects) {
        }

        @Override
        public OptionalLong size(String key) {
            return OptionalLong.empty();
        }

        @Override
        public long read(String key, MemorySegment destination) {
            return -1;
        }

        @Override
        public boolean remove(String key) {
            return false;
        }

        @Override
        public long usedBytes() {
            return 0;
        }

        @Override
        public long capacityBytes() {
            return 1L << 30;
        }

        @Override
        public void listener(StorageListener listener) {
            if (listenerFailure != null) {
                sneakyThrow(listenerFailure.get());
            }
        }

        @Override
        public StorageStats stats() {
            return new StorageStats(0, 0, 0, 0, 0, 0, 0);
        }

        @Override
        public void close() {
            closed.set(true);
        }
    }

    /** A factory of the "broken-scan" backend, as a plugin would offer it. */
    private static final class BrokenScanFactory implements StorageBackendFactory {
        final Backend backend;

        BrokenScanFactory(Backend backend) {
            this.backend = backend;
        }

        @Override
        public String name() {
            return "broken-scan";
        }

        @Override
        public StorageBackend create(PluginContext context) {
            return backend;
        }
    }

    private static long nodeThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("tiffin-node-")).count();
    }

    /** Starts a node on {@code port} with {@code backend}; returns what the start threw. */
    private Throwable startFails(Backend backend, int port) {
        NodeOptions options = NodeOptions.builder("127.0.0.1:" + master.localAddress().getPort())
                .nodeId("scan-node").segmentSize(MiB).port(port).pingInterval(Duration.ofMillis(200)).build()
                .withStorage(new NodeOptions.Storage(new BrokenScanFactory(backend),
                        new PluginContext(Map.of(), "scan-node")), Duration.ofMillis(20));
        Throwable thrown = catchThrowable(() -> NodeServer.start(options).close());
        assertThat(thrown).as("the start of a node whose backend's listing fails").isNotNull();
        return thrown;
    }

    private void assertNothingStays(Backend backend, int port, long threadsBefore) {
        assertThat(mounts.get()).as("mounted at the master first").isEqualTo(1);
        assertThat(unmounts.get()).as("the node's mount is taken back").isEqualTo(1);
        assertThat(backend.closed).as("the backend is closed").isTrue();
        assertThat(portFree(port)).as("the node's port is free").isTrue();
        await("the node's threads end").atMost(Duration.ofSeconds(10)).until(() -> nodeThreads() <= threadsBefore);
    }

    private void failsNamingTheBackendAndItsPlugin(Supplier<Throwable> failure, String cause) {
        Backend backend = new Backend(failure, 0);
        int port = freePort();
        long threadsBefore = nodeThreads();

        Throwable thrown = startFails(backend, port);

        assertThat(thrown).isInstanceOfSatisfying(TiffinException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.FILE_READ_FAIL);
            assertThat(e.getMessage())
                    .startsWith("node.storage-backend broken-scan of plugin " + BrokenScanFactory.class.getName() + " (")
                    .contains("failed to list the objects it holds")
                    .contains(cause)
                    .contains("node.storage-backend empty");
        });
        assertNothingStays(backend, port, threadsBefore);
    }

    @Test
    void aScanThatThrowsALinkageErrorStopsTheStartNamingThePlugin() {
        failsNamingTheBackendAndItsPlugin(() -> new NoClassDefFoundError("p/MissingIndexReader"),
                "java.lang.NoClassDefFoundError: p/MissingIndexReader");
    }

    @Test
    void aScanThatOverflowsTheStackStopsTheStartNamingThePlugin() {
        failsNamingTheBackendAndItsPlugin(StackOverflowError::new, "java.lang.StackOverflowError");
    }

    @Test
    void aScanThatThrowsAnExceptionStopsTheStartNamingThePlugin() {
        failsNamingTheBackendAndItsPlugin(() -> new IllegalStateException("index header unreadable"),
                "java.lang.IllegalStateException: index header unreadable");
    }

    /** A backend's own TiffinException keeps its code; its message follows the backend's name. */
    @Test
    void aScanThatThrowsATiffinExceptionKeepsItsCode() {
        Backend backend = new Backend(() -> new TiffinException(ErrorCode.FILE_OPEN_FAIL, "index.db: Permission denied"),
                0);
        int port = freePort();
        long threadsBefore = nodeThreads();

        Throwable thrown = startFails(backend, port);

        assertThat(thrown).isInstanceOfSatisfying(TiffinException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.FILE_OPEN_FAIL);
            assertThat(e.getMessage()).startsWith("node.storage-backend broken-scan of plugin ")
                    .contains("index.db: Permission denied");
        });
        assertNothingStays(backend, port, threadsBefore);
    }

    /**
     * A backend that fails when the node hands it its listener (before the node mounts): the start fails naming the
     * backend, and the tier's threads, started before, end with it.
     */
    @Test
    void aBackendThatRefusesItsListenerStopsTheStartAndLeavesNoThreads() {
        Backend backend = new Backend(null, 0);
        backend.listenerFailure = () -> new NoClassDefFoundError("p/ListenerSupport");
        int port = freePort();
        long threadsBefore = nodeThreads();

        Throwable thrown = startFails(backend, port);

        assertThat(thrown).isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.getMessage())
                .startsWith("node.storage-backend broken-scan of plugin ").contains("failed to take the node's listener")
                .contains("java.lang.NoClassDefFoundError: p/ListenerSupport"));
        assertThat(backend.closed).as("the backend is closed").isTrue();
        assertThat(portFree(port)).as("the node's port is free").isTrue();
        await("the tier's threads end").atMost(Duration.ofSeconds(10)).until(() -> nodeThreads() <= threadsBefore);
    }

    /**
     * The master refusing a report sent from within the scan (every 1000 objects) is the master's failure, not the
     * backend's: the start fails with the master's answer.
     */
    @Test
    void aReportTheMasterRefusesDuringTheScanIsNotBlamedOnTheBackend() {
        refuseReports.set(true);
        Backend backend = new Backend(null, 1001);
        int port = freePort();
        long threadsBefore = nodeThreads();

        Throwable thrown = startFails(backend, port);

        assertThat(thrown).isInstanceOfSatisfying(TiffinException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS);
            assertThat(e.getMessage()).contains("the test's master takes no reports now")
                    .doesNotContain("broken-scan");
        });
        assertNothingStays(backend, port, threadsBefore);
    }
}
