package io.tiffin.core.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.Responder;
import io.tiffin.core.transport.TransportServer;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.PingReply;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A master that forgot the node answers every ping that reached it before the node's re-mount with
 * "re-mount"; the node must re-mount once, not once per such answer (a second re-mount would drop the
 * objects put into the first one). The master is a scripted {@link TransportServer} that holds ping
 * answers until it chooses to send them.
 */
class NodeRemountTest {
    private final List<Responder> heldPings = new ArrayList<>();
    private final AtomicInteger remountRequests = new AtomicInteger();
    private volatile boolean forgetting = true;
    private TransportServer master;
    private NodeServer node;

    @AfterEach
    void tearDown() {
        if (node != null) {
            node.close();
        }
        if (master != null) {
            master.close();
        }
    }

    @Test
    void severalRemountAnswersToPingsSentBeforeTheRemountCauseOneRemount() {
        master = new TransportServer("scripted-master", TransportSettings.defaults());
        Empty empty = Empty.getDefaultInstance();
        master.register(Opcode.MOUNT_SEGMENT, (r, out) -> out.ok(empty), null);
        master.register(Opcode.UNMOUNT_SEGMENT, (r, out) -> out.ok(empty), null);
        master.register(Opcode.REMOUNT_SEGMENT, (r, out) -> {
            remountRequests.incrementAndGet();
            out.ok(empty);
        }, null);
        master.register(Opcode.PING, (r, out) -> {
            synchronized (heldPings) {
                if (forgetting) {
                    heldPings.add(out); // answered later, all at once, as a slow master would
                    return;
                }
            }
            out.ok(PingReply.getDefaultInstance());
        }, null);
        master.start("127.0.0.1", 0);
        node = NodeServer.start(NodeOptions.builder("127.0.0.1:" + master.localAddress().getPort())
                .nodeId("remount-node").segmentSize(1 << 20)
                .pingInterval(Duration.ofMillis(20)).build());

        await().atMost(Duration.ofSeconds(10)).until(() -> {
            synchronized (heldPings) {
                return heldPings.size() >= 3;
            }
        });
        List<Responder> answers;
        synchronized (heldPings) {
            forgetting = false; // pings from now on are answered at once, without re-mount
            answers = List.copyOf(heldPings);
            heldPings.clear();
        }
        PingReply remount = PingReply.newBuilder().setNeedRemount(true).build();
        answers.forEach(out -> out.ok(remount));

        await().atMost(Duration.ofSeconds(10)).until(() -> node.remounts() == 1);
        // every held answer has arrived and been handled well within this time: heartbeats run every 20 ms
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5))
                .until(() -> node.remounts() == 1 && remountRequests.get() == 1);
        assertThat(remountRequests.get()).as("REMOUNT_SEGMENT requests").isEqualTo(1);
    }
}
