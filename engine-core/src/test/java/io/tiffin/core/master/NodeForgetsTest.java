package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.netty.channel.ConnectTimeoutException;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportClientPool;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.ForgetRequest;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.ServerSocket;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * When a FORGET may count as done without its node's answer: only when nothing listens on the node's port (the
 * records died with its process). A connect that timed out or a host out of reach may hide a live node that still
 * holds the records; freeing the space then would leave a record naming bytes another object overwrites.
 */
class NodeForgetsTest {
    @Test
    void aRefusedConnectionMeansNoProcessHoldsTheRecords() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        try (TransportClientPool pool = new TransportClientPool("forgets-test", TransportSettings.defaults()
                .withHandshakeTimeout(Duration.ofSeconds(1)).withRpcTimeout(Duration.ofSeconds(1)).withIoThreads(1),
                "forgets-test")) {
            Throwable e = catchThrowable(() -> pool.get("127.0.0.1:" + port).callSync(Opcode.FORGET,
                    ForgetRequest.newBuilder().setTerm(1).setSegment("s").build(), Empty.parser()));
            assertThat(e).isInstanceOf(TiffinException.class);
            assertThat(NodeForgets.refused(e)).as("%s", e).isTrue();
        }
    }

    @Test
    void aConnectThatTimedOutOrAnUnreachableHostIsNoRefusal() {
        assertThat(NodeForgets.refused(new TiffinException(ErrorCode.RPC_FAIL, "cannot connect",
                new ConnectTimeoutException("connection timed out: /10.0.0.9:7000")))).isFalse();
        assertThat(NodeForgets.refused(new TiffinException(ErrorCode.RPC_FAIL, "cannot connect",
                new NoRouteToHostException("No route to host")))).isFalse();
        assertThat(NodeForgets.refused(new TiffinException(ErrorCode.RPC_TIMEOUT, "no answer in 1 s"))).isFalse();
        assertThat(NodeForgets.refused(new TiffinException(ErrorCode.RPC_FAIL, "cannot connect",
                new ConnectException("Connection refused")))).isTrue();
    }

    /**
     * A node that takes long over a FORGET of SSD copies (it deletes them between its offload batches) does not hold
     * up the frees of its segment's memory: those go in FORGETs of their own.
     */
    @Test
    void freesDoNotWaitForAForgetOfSsdCopies() throws Exception {
        java.util.concurrent.CompletableFuture<io.tiffin.core.transport.Responder> heldDiskForget =
                new java.util.concurrent.CompletableFuture<>();
        io.tiffin.core.transport.TransportServer node = new io.tiffin.core.transport.TransportServer("slow-disk-node",
                TransportSettings.defaults());
        node.register(Opcode.FORGET, (request, responder) -> {
            if (request.parseControl(ForgetRequest.parser()).getDiskKeysCount() > 0) {
                heldDiskForget.complete(responder); // answered when the test lets it
            } else {
                responder.ok(Empty.getDefaultInstance());
            }
        }, null);
        node.start("127.0.0.1", 0);
        try (TransportClientPool pool = new TransportClientPool("forgets-test", TransportSettings.defaults(),
                "forgets-test"); NodeForgets forgets = new NodeForgets(pool, () -> 1, (n, k, v) -> { })) {
            MountedSegment segment = new MountedSegment("s", "n", "127.0.0.1:" + node.localAddress().getPort(),
                    1 << 20, 1, 0);
            var disk = forgets.collect(() -> forgets.forgetDiskCopy(segment, "k", 3));
            heldDiskForget.get(10, java.util.concurrent.TimeUnit.SECONDS);
            long handle = segment.allocate(4096, "a");

            var frees = forgets.collect(() -> forgets.forget(segment, handle, 0, 1));

            frees.get(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(disk).as("the FORGET of the SSD copy, still held by the node").isNotDone();
            heldDiskForget.get().ok(Empty.getDefaultInstance());
            disk.get(10, java.util.concurrent.TimeUnit.SECONDS);
        } finally {
            node.close();
        }
    }

    /**
     * Deletions of SSD copies sent to a node whose process is gone (the connection refused) count as done only once
     * they are recorded ({@link DiskFloors}): the removal completes after the record, and fails when the record
     * cannot be written (a deposed master), instead of answering as if the copy were gone.
     */
    @Test
    void ssdDeletionsRefusedByAGoneNodeAreRecordedBeforeTheyCountAsDone() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // nothing listens there any more: refused
        }
        java.util.List<String> recorded = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicBoolean deposed = new java.util.concurrent.atomic.AtomicBoolean();
        try (TransportClientPool pool = new TransportClientPool("forgets-test", TransportSettings.defaults()
                .withHandshakeTimeout(Duration.ofSeconds(1)).withRpcTimeout(Duration.ofSeconds(1)).withIoThreads(1),
                "forgets-test"); NodeForgets forgets = new NodeForgets(pool, () -> 1, (node, keys, versions) -> {
                    if (deposed.get()) {
                        throw new io.tiffin.core.coordination.StateConflictException("a successor wrote the facts");
                    }
                    for (int i = 0; i < keys.size(); i++) {
                        recorded.add(node + "/" + keys.get(i) + "@" + versions.get(i));
                    }
                })) {
            MountedSegment segment = new MountedSegment("s", "gone-node", "127.0.0.1:" + port, 1 << 20, 1, 0);

            forgets.collect(() -> forgets.forgetDiskCopy(segment, "k", 7))
                    .get(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(recorded).containsExactly("gone-node/k@7");

            deposed.set(true);
            var failed = forgets.collect(() -> forgets.forgetDiskCopy(segment, "j", 8));
            Throwable e = catchThrowable(() -> failed.get(10, java.util.concurrent.TimeUnit.SECONDS));
            assertThat(e).hasCauseInstanceOf(io.tiffin.core.coordination.StateConflictException.class);
            assertThat(recorded).containsExactly("gone-node/k@7");
        }
    }

    /**
     * A node whose disk refused some of a FORGET's deletions names them in its answer: they are recorded ({@link
     * DiskFloors}) before the removal completes, and counted; when the record cannot be written (a deposed master)
     * the removal fails instead of answering as if the copies were gone.
     */
    @Test
    void deletionsTheNodesDiskRefusedAreRecordedBeforeTheyCountAsDone() throws Exception {
        io.tiffin.core.transport.TransportServer node = new io.tiffin.core.transport.TransportServer("full-disk-node",
                TransportSettings.defaults());
        node.register(Opcode.FORGET, (request, responder) -> {
            ForgetRequest req = request.parseControl(ForgetRequest.parser());
            responder.ok(io.tiffin.core.transport.proto.ForgetReply.newBuilder()
                    .addAllUndeletedDiskKeys(req.getDiskKeysList())
                    .addAllUndeletedDiskKeyVersions(req.getDiskKeyVersionsList()).build());
        }, null);
        node.start("127.0.0.1", 0);
        java.util.List<String> recorded = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicBoolean deposed = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicLong counted = new java.util.concurrent.atomic.AtomicLong();
        try (TransportClientPool pool = new TransportClientPool("forgets-test", TransportSettings.defaults(),
                "forgets-test"); NodeForgets forgets = new NodeForgets(pool, () -> 1, (n, keys, versions) -> {
                    if (deposed.get()) {
                        throw new io.tiffin.core.coordination.StateConflictException("a successor wrote the facts");
                    }
                    for (int i = 0; i < keys.size(); i++) {
                        recorded.add(n + "/" + keys.get(i) + "@" + versions.get(i));
                    }
                }, counted::addAndGet, n -> { })) {
            MountedSegment segment = new MountedSegment("s", "full-node",
                    "127.0.0.1:" + node.localAddress().getPort(), 1 << 20, 1, 0);

            forgets.collect(() -> forgets.forgetDiskCopy(segment, "k", 7))
                    .get(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(recorded).containsExactly("full-node/k@7");
            assertThat(counted).hasValue(1);

            deposed.set(true);
            var failed = forgets.collect(() -> forgets.forgetDiskCopy(segment, "j", 8));
            Throwable e = catchThrowable(() -> failed.get(10, java.util.concurrent.TimeUnit.SECONDS));
            assertThat(e).hasCauseInstanceOf(io.tiffin.core.coordination.StateConflictException.class);
            assertThat(recorded).containsExactly("full-node/k@7");
        } finally {
            node.close();
        }
    }

    /**
     * A node answering a FORGET that it follows a newer master term tells this master it was deposed: the master hears
     * it then (a leader woken from a pause served requests until its coordinator's word came, 200 ms later).
     */
    @Test
    void aNodeFollowingANewerTermDeposesTheMaster() throws Exception {
        io.tiffin.core.transport.TransportServer node = new io.tiffin.core.transport.TransportServer("newer-term-node",
                TransportSettings.defaults());
        node.register(Opcode.FORGET, (request, responder) -> responder.fail(ErrorCode.INVALID_VERSION,
                "this node follows master term 3"), null);
        node.start("127.0.0.1", 0);
        java.util.concurrent.CountDownLatch deposed = new java.util.concurrent.CountDownLatch(1);
        try (TransportClientPool pool = new TransportClientPool("forgets-test", TransportSettings.defaults(),
                "forgets-test"); NodeForgets forgets = new NodeForgets(pool, () -> 2, (n, k, v) -> { })) {
            forgets.whenANodeFollowsANewerTerm(deposed::countDown);
            MountedSegment segment = new MountedSegment("s", "n", "127.0.0.1:" + node.localAddress().getPort(),
                    1 << 20, 1, 0);
            long handle = segment.allocate(4096, "a");
            var frees = forgets.collect(() -> forgets.forget(segment, handle, 0, 1));
            assertThat(deposed.await(10, java.util.concurrent.TimeUnit.SECONDS)).as("told of the newer term").isTrue();
            assertThat(catchThrowable(() -> frees.get(10, java.util.concurrent.TimeUnit.SECONDS)))
                    .hasCauseInstanceOf(TiffinException.class);
        } finally {
            node.close();
        }
    }
}
