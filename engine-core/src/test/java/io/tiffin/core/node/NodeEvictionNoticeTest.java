package io.tiffin.core.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.spi.PluginContext;
import io.tiffin.api.spi.storage.StorageBackend;
import io.tiffin.api.spi.storage.StorageBackendFactory;
import io.tiffin.api.spi.storage.StorageListener;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportClientPool;
import io.tiffin.core.transport.TransportServer;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.DiskEvicted;
import io.tiffin.core.transport.proto.DiskObject;
import io.tiffin.core.transport.proto.DiskObjectsReport;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.ForgetRequest;
import io.tiffin.core.transport.proto.OffloadTask;
import io.tiffin.core.transport.proto.PingReply;
import io.tiffin.core.transport.proto.TaskPollReply;
import io.tiffin.core.transport.proto.TaskPollRequest;
import io.tiffin.core.util.ManualTicker;
import io.tiffin.plugins.testkit.storage.InMemoryStorageBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a node reports of an SSD copy it wrote (its object's version and deadline, as the offload task gave them),
 * and that a FORGET's deadline changes for its copies are checked. And how a node tells the master about SSD copies
 * its backend dropped ({@code EVICT_DISK_REPLICA}): later,
 * from its own thread, retried until the master takes them, and never after a newer copy of the same key
 * was reported (the master knows a copy only by node and key, so such a notice would drop the new copy).
 *
 * <p>The master is a scripted {@link TransportServer} that logs what the node tells it and can refuse the
 * notices; the backend is the testkit's in-memory one, whose listener the test calls as a backend would.
 * The node runs on a {@link ManualTicker}: a refused notice is retried only when the test moves it past
 * the back-off.
 */
class NodeEvictionNoticeTest {
    private static final long MiB = 1L << 20;

    private final InMemoryStorageBackend backend = new InMemoryStorageBackend(new ConcurrentHashMap<>(), 64 * MiB);
    /** What the node told the master, in order: "report k", "evict k". */
    private final List<String> told = java.util.Collections.synchronizedList(new ArrayList<>());
    private final List<Integer> noticeSizes = java.util.Collections.synchronizedList(new ArrayList<>());
    private final ConcurrentLinkedQueue<OffloadTask> offloads = new ConcurrentLinkedQueue<>();
    /** Deletes the next task poll hands out: key and version. */
    private final ConcurrentLinkedQueue<Map.Entry<String, Long>> deletes = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean refuseNotices = new AtomicBoolean();
    private final AtomicInteger refusedNotices = new AtomicInteger();
    private final AtomicLong markers = new AtomicLong();
    private final ManualTicker ticker = new ManualTicker();
    /** The last report of each key. */
    private final Map<String, DiskObject> reported = new ConcurrentHashMap<>();
    /** Offloads the node reported failed: "key vVERSION". */
    private final List<String> failedOffloads = java.util.Collections.synchronizedList(new ArrayList<>());
    private TransportServer master;
    private NodeServer node;

    @BeforeEach
    void setUp() {
        master = new TransportServer("scripted-master", TransportSettings.defaults());
        Empty empty = Empty.getDefaultInstance();
        master.register(Opcode.MOUNT_SEGMENT, (r, out) -> out.ok(empty), null);
        master.register(Opcode.UNMOUNT_SEGMENT, (r, out) -> out.ok(empty), null);
        master.register(Opcode.REGISTER_STORAGE, (r, out) -> out.ok(empty), null);
        master.register(Opcode.OFFLOAD_DONE, (r, out) -> {
            var done = r.parseControl(io.tiffin.core.transport.proto.OffloadResult.parser());
            for (int i = 0; i < done.getFailedCount(); i++) {
                failedOffloads.add(done.getFailed(i) + " v" + done.getFailedVersions(i));
            }
            out.ok(empty);
        }, null);
        master.register(Opcode.PING, (r, out) -> out.ok(PingReply.getDefaultInstance()), null);
        master.register(Opcode.POLL_TASKS, (r, out) -> {
            int max = r.parseControl(TaskPollRequest.parser()).getMaxOffloads();
            TaskPollReply.Builder reply = TaskPollReply.newBuilder();
            for (OffloadTask t; reply.getOffloadsCount() < max && (t = offloads.poll()) != null; ) {
                reply.addOffloads(t);
            }
            for (Map.Entry<String, Long> d; (d = deletes.poll()) != null; ) {
                reply.addDeletes(d.getKey()).addDeleteVersions(d.getValue());
            }
            out.ok(reply.build());
        }, null);
        master.register(Opcode.REPORT_DISK_OBJECTS, (r, out) -> {
            r.parseControl(DiskObjectsReport.parser()).getObjectsList().forEach(o -> {
                told.add("report " + o.getKey());
                reported.put(o.getKey(), o);
            });
            out.ok(empty);
        }, null);
        master.register(Opcode.EVICT_DISK_REPLICA, (r, out) -> {
            if (refuseNotices.get()) {
                refusedNotices.incrementAndGet();
                out.fail(ErrorCode.RPC_FAIL, "the test's master does not take notices now");
                return;
            }
            List<String> keys = r.parseControl(DiskEvicted.parser()).getKeysList();
            noticeSizes.add(keys.size());
            keys.forEach(k -> told.add("evict " + k));
            out.ok(empty);
        }, null);
        master.start("127.0.0.1", 0);
        StorageBackendFactory factory = new StorageBackendFactory() {
            @Override
            public String name() {
                return "in-memory";
            }

            @Override
            public StorageBackend create(PluginContext context) {
                return backend;
            }
        };
        node = NodeServer.start(NodeOptions.builder("127.0.0.1:" + master.localAddress().getPort())
                .nodeId("scripted-node").segmentSize(MiB)
                .pingInterval(Duration.ofMillis(200)).build()
                .withStorage(new NodeOptions.Storage(factory, new PluginContext(Map.of(), "scripted-node")),
                        Duration.ofMillis(20)).withTicker(ticker));
    }

    @AfterEach
    void tearDown() {
        node.close();
        master.close();
    }

    /** As a backend evicts: tells the listener first (ignoring its failures), then drops the keys. */
    private void evict(String... keys) {
        try {
            backend.listener().evicting(List.of(keys));
        } catch (RuntimeException e) {
            // A backend logs it and evicts anyway.
        }
        backend.removeAll(List.of(keys));
    }

    /** As a backend reports a corrupt copy: drops it, then tells the listener (ignoring its failures). */
    private void lose(String key) {
        backend.remove(key);
        tellLost(key);
    }

    private void tellLost(String key) {
        try {
            backend.listener().lost(List.of(key));
        } catch (RuntimeException e) {
            // A backend logs it and goes on.
        }
    }

    /** Has the master hand the node an offload of {@code key} (100 bytes of its segment) and waits for the report. */
    private void offload(String key) {
        long before = reports(key);
        offloads.add(OffloadTask.newBuilder().setKey(key).setSize(100).setSegment(node.segmentName()).setOffset(0)
                .setVersion(1).build());
        await("the report of " + key).atMost(Duration.ofSeconds(20)).until(() -> reports(key) > before);
    }

    private long reports(String key) {
        return toldNow().stream().filter(("report " + key)::equals).count();
    }

    /** Ends any back-off of the notices: the next POLL tick sends what waits. */
    private void endBackOff() {
        ticker.advanceMillis(EvictionNotices.RETRY_MAX_MILLIS);
    }

    /**
     * Waits until the master has heard every notice queued so far: one node thread sends the notices, in
     * queue order, so once a marker evicted now is told, everything queued before it has been told (or
     * dropped for good).
     */
    private void awaitNoticesQueuedSoFar() {
        String marker = "marker-" + markers.incrementAndGet();
        evict(marker);
        await("the notice of " + marker).atMost(Duration.ofSeconds(20))
                .until(() -> toldNow().contains("evict " + marker));
    }

    /** What the master heard, without the markers of {@link #awaitNoticesQueuedSoFar}. */
    private List<String> toldWithoutMarkers() {
        return toldNow().stream().filter(s -> !s.startsWith("evict marker-")).toList();
    }

    private List<String> toldNow() {
        synchronized (told) {
            return List.copyOf(told);
        }
    }

    /**
     * Two offloads of one key handed out together (a replacement's and the object's it replaced): the later one's
     * bytes fail their checksum, so the earlier one's are written. The node reports the copy with the version of the
     * task whose bytes it wrote, and the other task as failed with its own version; it never reports the failed
     * version as written (the master would take the earlier bytes for that version's).
     */
    @Test
    void ofTwoOffloadsOfAKeyOnlyTheTaskWhoseBytesWereWrittenIsReportedWritten() {
        offloads.add(OffloadTask.newBuilder().setKey("twice").setSize(100).setSegment(node.segmentName()).setOffset(0)
                .setVersion(3).build()); // no checksum to check: written
        offloads.add(OffloadTask.newBuilder().setKey("twice").setSize(100).setSegment(node.segmentName()).setOffset(0)
                .setVersion(4).setCrc32C(12345).build()); // not the bytes' checksum: refused
        await("both answers").atMost(Duration.ofSeconds(20))
                .until(() -> reported.containsKey("twice") && !failedOffloads.isEmpty());
        awaitNoticesQueuedSoFar(); // the node's thread has told the master all it will about both tasks
        assertThat(reported.get("twice").getVersion()).isEqualTo(3);
        assertThat(toldWithoutMarkers()).containsExactly("report twice");
        assertThat(failedOffloads).containsExactly("twice v4");
    }

    @Test
    void aCopyIsReportedWithTheVersionAndDeadlineOfItsTaskAndAForgetMustNameADeadlinePerCopy() {
        offloads.add(OffloadTask.newBuilder().setKey("ttl").setSize(100).setSegment(node.segmentName()).setOffset(0)
                .setVersion(7).setExpireAtMs(1_900_000_000_000L).build());
        await("the report of ttl").atMost(Duration.ofSeconds(20)).until(() -> reported.containsKey("ttl"));
        assertThat(reported.get("ttl")).isEqualTo(DiskObject.newBuilder().setKey("ttl").setSize(100).setVersion(7)
                .setExpireAtMs(1_900_000_000_000L).build());
        try (TransportClientPool pool = new TransportClientPool("forget-test", TransportSettings.defaults(),
                "forget-test")) {
            Throwable refused = org.assertj.core.api.Assertions.catchThrowable(() -> pool.get(node.endpoint())
                    .callSync(Opcode.FORGET, ForgetRequest.newBuilder().setTerm(0).setSegment(node.segmentName())
                            .addDiskDeadlineKeys("ttl").addDiskDeadlineKeys("other").addDiskDeadlines(5).build(),
                            Empty.parser()));
            assertThat(refused).isInstanceOfSatisfying(io.tiffin.api.TiffinException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS);
                assertThat(e.getMessage()).contains("FORGET names 2 SSD copies and 1 deadlines");
            });
        }
    }

    /**
     * A FORGET's deletion of an SSD copy (a removed object's) is done when the node answers, and leaves a copy the
     * node knows to be of a later version than the removed object's (a later put's, offloaded before the FORGET
     * arrived).
     */
    @Test
    void aForgetDeletesTheRemovedObjectsCopyBeforeItAnswersAndLeavesALaterPutsCopy() {
        offloads.add(OffloadTask.newBuilder().setKey("old").setSize(100).setSegment(node.segmentName()).setOffset(0)
                .setVersion(3).build());
        offloads.add(OffloadTask.newBuilder().setKey("newer").setSize(100).setSegment(node.segmentName())
                .setOffset(0).setVersion(9).build());
        await("the reports").atMost(Duration.ofSeconds(20))
                .until(() -> reported.containsKey("old") && reported.containsKey("newer"));
        try (TransportClientPool pool = new TransportClientPool("forget-test", TransportSettings.defaults(),
                "forget-test")) {
            pool.get(node.endpoint()).callSync(Opcode.FORGET, ForgetRequest.newBuilder().setTerm(0)
                    .setSegment(node.segmentName()).addDiskKeys("old").addDiskKeyVersions(3)
                    .addDiskKeys("newer").addDiskKeyVersions(8).build(), Empty.parser());

            assertThat(backend.size("old")).as("the removed object's copy, once the FORGET is answered").isEmpty();
            assertThat(backend.size("newer")).as("a later put's copy").isPresent();

            Throwable refused = org.assertj.core.api.Assertions.catchThrowable(() -> pool.get(node.endpoint())
                    .callSync(Opcode.FORGET, ForgetRequest.newBuilder().setTerm(0).setSegment(node.segmentName())
                            .addDiskKeys("newer").addDiskKeys("x").addDiskKeyVersions(9).build(), Empty.parser()));
            assertThat(refused).isInstanceOfSatisfying(io.tiffin.api.TiffinException.class,
                    e -> assertThat(e.getMessage()).contains("FORGET names 2 SSD copies to delete and 1 versions"));
            assertThat(backend.size("newer")).isPresent();
        }
    }

    /**
     * A task poll's delete of a stale copy (the object of the version it names was removed) leaves a copy the node
     * wrote since for a later put of the key: the delete may wait on the node's I/O pool behind SSD reads while the
     * offload of the new object runs.
     */
    @Test
    void aPolledDeleteLeavesALaterPutsCopy() {
        offloads.add(OffloadTask.newBuilder().setKey("again").setSize(100).setSegment(node.segmentName())
                .setOffset(0).setVersion(9).build());
        offloads.add(OffloadTask.newBuilder().setKey("gone").setSize(100).setSegment(node.segmentName())
                .setOffset(0).setVersion(4).build());
        await("the reports").atMost(Duration.ofSeconds(20))
                .until(() -> reported.containsKey("again") && reported.containsKey("gone"));

        deletes.add(Map.entry("again", 3L));
        deletes.add(Map.entry("gone", 4L));

        await("the delete of gone's copy").atMost(Duration.ofSeconds(20)).until(() -> backend.size("gone").isEmpty());
        assertThat(backend.size("again")).as("the copy of version 9, after a delete of version 3").isPresent();
    }

    @Test
    void aKeyTheNodeWritesAgainIsNotReportedGoneAfterItsNewCopy() {
        offload("k");
        refuseNotices.set(true);
        evict("k", "other");
        await("a refused notice").atMost(Duration.ofSeconds(20)).until(() -> refusedNotices.get() > 0);

        offload("k"); // a new copy, written and reported while the old one's notice waits
        refuseNotices.set(false);
        endBackOff();

        await("the notice of the other key").atMost(Duration.ofSeconds(20))
                .until(() -> toldNow().contains("evict other"));
        awaitNoticesQueuedSoFar(); // nothing about k may follow
        List<String> log = toldNow();
        assertThat(log).as("what the master heard").doesNotContain("evict k");
        assertThat(log.lastIndexOf("report k")).isGreaterThan(log.indexOf("report k"));
        assertThat(backend.size("k")).isPresent();
    }

    /**
     * A read of a copy the node does not hold (the master still lists it: a notice lost in a crash)
     * makes the node tell the master, so the listing does not stay wrong until the node expires.
     */
    @Test
    void aReadOfACopyTheNodeDoesNotHoldTellsTheMaster() {
        offload("held");
        try (io.tiffin.core.transport.BlockingConnectionPool pool = new io.tiffin.core.transport.BlockingConnectionPool(
                "reader", TransportSettings.defaults(), "reader");
             java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            io.tiffin.core.transport.proto.SsdReadReply reply = pool.call(node.endpoint(), Opcode.DATA_READ_SSD,
                    io.tiffin.core.transport.proto.SsdReadRequest.newBuilder().addKeys("never-here").addKeys("held")
                            .build(), null, io.tiffin.core.transport.proto.SsdReadReply.parser(), arena.allocate(100));
            assertThat(reply.getSizesList()).containsExactly(-1L, 100L);
        }

        await("the notice of the missing copy").atMost(Duration.ofSeconds(20))
                .until(() -> toldNow().contains("evict never-here"));
        awaitNoticesQueuedSoFar();
        assertThat(toldNow()).doesNotContain("evict held");
    }

    @Test
    void aLossToldAfterTheKeyWasWrittenAgainIsNotSent() {
        offload("k");
        offload("gone");
        // A reader dropped the old copy of k, then the node wrote k again, then the reader's news arrives.
        tellLost("k");
        lose("gone");

        await("the notice of the lost key").atMost(Duration.ofSeconds(20))
                .until(() -> toldNow().contains("evict gone"));
        awaitNoticesQueuedSoFar();
        assertThat(toldNow()).doesNotContain("evict k");
    }

    @Test
    void everyNoticeArrivesInBatchesTheMasterCanTake() {
        String[] keys = IntStream.range(0, 2 * EvictionNotices.BATCH + 500).mapToObj(i -> "key-" + i)
                .toArray(String[]::new);

        refuseNotices.set(true);
        evict(keys);
        evict("key-7"); // told twice while the master refuses: sent once
        await("a refused notice").atMost(Duration.ofSeconds(20)).until(() -> refusedNotices.get() > 0);
        refuseNotices.set(false);
        endBackOff();

        await("every notice").atMost(Duration.ofSeconds(20))
                .until(() -> toldNow().stream().filter(s -> s.startsWith("evict ")).count() >= keys.length);
        awaitNoticesQueuedSoFar();
        assertThat(toldWithoutMarkers()).hasSize(keys.length).doesNotHaveDuplicates();
        assertThat(noticeSizes).allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(EvictionNotices.BATCH));
    }

    @Test
    void aRefusedNoticeIsRetriedAfterItsBackOffUntilTheNodeCloses() {
        refuseNotices.set(true);
        evict("x");
        await("a refused notice").atMost(Duration.ofSeconds(20)).until(() -> refusedNotices.get() == 1);
        // Awaitility's during(): the count must hold for this long, over a dozen POLL ticks.
        await("no retry before the back-off ends").during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5))
                .until(() -> refusedNotices.get() == 1);

        ticker.advanceMillis(EvictionNotices.RETRY_MIN_MILLIS);
        await("the retry").atMost(Duration.ofSeconds(20)).until(() -> refusedNotices.get() == 2);

        node.close();
        int attempts = refusedNotices.get();
        endBackOff();
        await("no retry after close").during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5))
                .until(() -> refusedNotices.get() == attempts);
    }
}
