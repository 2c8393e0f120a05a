package io.tiffin.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The socket baseline on loopback, server and client, without a cluster. */
class SocketTargetTest {
    @Test
    void theServerSendsTheSpreadValueAtAnOffsetAfterThePrefix() throws Exception {
        long spread = 64 * 1024;
        try (SocketBaseline server = new SocketBaseline(4096, 24, spread); Arena arena = Arena.ofConfined()) {
            SocketChannel ch = server.connect();
            ByteBuffer header = ByteBuffer.allocateDirect(16);
            ByteBuffer got = ByteBuffer.allocateDirect(24 + 4096);
            header.putLong(0, 4096).putLong(8, SocketBaseline.PREFIXED | 8192);
            SocketBaseline.writeFully(ch, header);
            SocketBaseline.readFully(ch, got);
            // the spread values are the random longs of seed spreadBytes, as KvWorkload.randomValue makes them
            MemorySegment expected = KvWorkload.randomValue(arena, spread).asSlice(8192, 4096);
            assertThat(MemorySegment.ofBuffer(got.flip()).asSlice(24).mismatch(expected)).isEqualTo(-1);

            // a put: 4096 bytes in, one byte back
            header.clear().putLong(0, -4096).putLong(8, -1);
            SocketBaseline.writeFully(ch, header);
            SocketBaseline.writeFully(ch, ByteBuffer.allocateDirect(4096));
            ByteBuffer ack = ByteBuffer.allocateDirect(1);
            SocketBaseline.readFully(ch, ack);
            assertThat(ack.position()).isEqualTo(1);
        }
    }

    @Test
    void everySocketCaseRecordsARow() throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        KvReport report = new KvReport(new PrintStream(printed, true, StandardCharsets.UTF_8));
        KvLoad load = new KvLoad(2, 0, 0.1, report);
        try (SocketBaseline server = new SocketBaseline(4096, 16, KvWorkload.keyCount(4096) * 4096L);
             Arena arena = Arena.ofShared()) {
            new SocketTarget(server, load, true, 16).measure(4096, KvWorkload.randomValue(arena, 4096), arena);
        }
        assertThat(report.results()).extracting(r -> r.target() + "," + r.operation())
                .containsExactly("socket,put", "socket,get", "socket-spread,get", "socket-prefixed,get");
        assertThat(report.results()).allSatisfy(r -> assertThat(r.opsPerSec()).isPositive());
    }
}
