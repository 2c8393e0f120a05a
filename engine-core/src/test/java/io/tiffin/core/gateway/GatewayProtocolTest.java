package io.tiffin.core.gateway;

import static io.tiffin.core.gateway.RespSocket.command;
import static io.tiffin.core.gateway.RespSocket.text;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The wire protocol byte for byte over a bare socket: inline commands, pipelining, RESP3 types, QUIT,
 * protocol errors (answered after the commands before them, then the connection closes), binary values,
 * and that a pipeline's GETs and SETs reach the store as one batch call each.
 */
class GatewayProtocolTest {
    private static GatewayFixture fixture;
    private static RecordingStore store;

    @BeforeAll
    static void start() {
        fixture = GatewayFixture.start(Map.of(), s -> store = new RecordingStore(s));
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    @BeforeEach
    void flush() {
        try (RespSocket s = new RespSocket(fixture.port())) {
            assertThat(s.call("FLUSHALL")).isEqualTo("OK");
        }
        store.calls.clear();
    }

    @Test
    void inlineCommandsSplitLikeRedis() {
        try (RespSocket s = new RespSocket(fixture.port())) {
            s.send("SET k \"a\\x41b c\\n\" \r\nGET k\r\n\r\nPING\nECHO 'it\\'s'\r\nset   k2    'x y'\r\nget k2\r\n");
            assertThat(s.read()).isEqualTo("OK");
            assertThat(text(s.read())).isEqualTo("aAb c\n");
            assertThat(s.read()).isEqualTo("PONG");
            assertThat(text(s.read())).isEqualTo("it's");
            assertThat(s.read()).isEqualTo("OK");
            assertThat(text(s.read())).isEqualTo("x y");
        }
    }

    @Test
    void aLongValueWhoseBytesArriveInPiecesAndLastOnesOneByOneIsStoredExactly() throws InterruptedException {
        // read into the value's own buffer with the socket's low-water mark at the bytes still to come: the mark
        // must follow them down, or the last bytes would wake no read
        byte[] value = GatewayFixture.randomValue(3 << 20, 21);
        byte[] set = command("SET", "pieces", value);
        try (RespSocket s = new RespSocket(fixture.port())) {
            int[] cuts = {64 << 10, 1 << 20, 2 << 20, set.length - 50};
            int at = 0;
            for (int cut : cuts) {
                s.send(Arrays.copyOfRange(set, at, cut));
                at = cut;
                Thread.sleep(30);
            }
            for (; at < set.length; at++) {
                s.send(Arrays.copyOfRange(set, at, at + 1));
                Thread.sleep(2);
            }
            assertThat(s.read()).isEqualTo("OK");
            s.send(command("GET", "pieces"));
            assertThat((byte[]) s.read()).isEqualTo(value);
            assertThat(s.call("PING")).as("a short command right after").isEqualTo("PONG");
        }
    }

    @Test
    void unbalancedQuotesAreAProtocolError() {
        try (RespSocket s = new RespSocket(fixture.port())) {
            s.send("PING\r\nECHO \"a\"b\r\nPING\r\n");
            assertThat(new String(s.readToEnd(5000), StandardCharsets.US_ASCII))
                    .isEqualTo("+PONG\r\n-ERR Protocol error: unbalanced quotes in request\r\n");
        }
    }

    @Test
    void protocolErrorsAreAnsweredAfterTheCommandsBeforeThemThenTheConnectionCloses() {
        Map<String, String> cases = Map.of(
                "*1\r\n$1000000000000\r\n", "-ERR Protocol error: invalid bulk length\r\n",
                "*1000000000000\r\n", "-ERR Protocol error: invalid multibulk length\r\n",
                "*2\r\n$3\r\nGET\r\nx\r\n", "-ERR Protocol error: expected '$', got 'x'\r\n",
                "*1\r\n$-5\r\n", "-ERR Protocol error: invalid bulk length\r\n",
                "*x\r\n", "-ERR Protocol error: invalid multibulk length\r\n",
                "*1\r\n$01\r\nx\r\n", "-ERR Protocol error: invalid bulk length\r\n",
                "*1\r\n+PING\r\n", "-ERR Protocol error: expected '$', got '+'\r\n");
        cases.forEach((bad, error) -> {
            try (RespSocket s = new RespSocket(fixture.port())) {
                s.send(command("PING")).send(command("ECHO", "before")).send(bad).send(command("PING"));
                assertThat(new String(s.readToEnd(5000), StandardCharsets.US_ASCII)).as(bad)
                        .isEqualTo("+PONG\r\n$6\r\nbefore\r\n" + error);
            }
        });
    }

    @Test
    void emptyAndNullArraysAreIgnoredAsRedisDoes() {
        try (RespSocket s = new RespSocket(fixture.port())) {
            s.send("*0\r\n*-1\r\n").send(command("PING"));
            assertThat(s.read()).isEqualTo("PONG");
        }
    }

    @Test
    void aPipelineIsAnsweredInOrder() {
        ByteArrayOutputStream pipeline = new ByteArrayOutputStream();
        for (int i = 0; i < 200; i++) {
            pipeline.writeBytes(command("SET", "p" + i, "v" + i));
            pipeline.writeBytes(command("GET", "p" + (i / 2)));
            pipeline.writeBytes(command("ECHO", "e" + i));
        }
        try (RespSocket s = new RespSocket(fixture.port())) {
            s.send(pipeline.toByteArray());
            for (int i = 0; i < 200; i++) {
                assertThat(s.read()).isEqualTo("OK");
                assertThat(text(s.read())).isEqualTo("v" + (i / 2));
                assertThat(text(s.read())).isEqualTo("e" + i);
            }
        }
    }

    @Test
    void pipelinedGetsAndSetsOfOneReadGoToTheStoreAsOneBatchCall() {
        ByteArrayOutputStream sets = new ByteArrayOutputStream();
        ByteArrayOutputStream gets = new ByteArrayOutputStream();
        for (int i = 0; i < 16; i++) {
            sets.writeBytes(command("SET", "b" + i, "value-" + i));
            gets.writeBytes(command("GET", "b" + i));
        }
        try (RespSocket s = new RespSocket(fixture.port())) {
            s.send(sets.toByteArray());
            for (int i = 0; i < 16; i++) {
                assertThat(s.read()).isEqualTo("OK");
            }
            s.send(gets.toByteArray());
            for (int i = 0; i < 16; i++) {
                assertThat(text(s.read())).isEqualTo("value-" + i);
            }
        }
        assertThat(store.calls).containsExactly("putAll:16", "getAll:16");
    }

    @Test
    void aSetOfAKeyAlreadyInTheRunStartsANewRunSoTheLastValueWins() {
        try (RespSocket s = new RespSocket(fixture.port())) {
            ByteArrayOutputStream oneWrite = new ByteArrayOutputStream();
            oneWrite.writeBytes(command("SET", "d", "1"));
            oneWrite.writeBytes(command("SET", "e", "1"));
            oneWrite.writeBytes(command("SET", "d", "2"));
            oneWrite.writeBytes(command("MGET", "d", "e"));
            s.send(oneWrite.toByteArray());
            assertThat(List.of(s.read(), s.read(), s.read())).containsOnly("OK");
            assertThat(((List<?>) s.read()).stream().map(RespSocket::text)).containsExactly("2", "1");
        }
        assertThat(store.calls).containsExactly("putAll:2", "putAll:1", "getAll:2");
    }

    @Test
    void valuesAreByteExactWhateverTheirBytes() {
        byte[] all = new byte[256 * 1024 + 7];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) (i * 31 + (i >> 8));
        }
        try (RespSocket s = new RespSocket(fixture.port())) {
            assertThat(s.call("SET", "bin", all)).isEqualTo("OK");
            assertThat((byte[]) s.call("GET", "bin")).isEqualTo(all);
            assertThat(s.call("STRLEN", "bin")).isEqualTo((long) all.length);
            assertThat((byte[]) s.call("GETRANGE", "bin", "1000", "1009"))
                    .isEqualTo(java.util.Arrays.copyOfRange(all, 1000, 1010));
        }
    }

    @Test
    void getRangeReadsOnlyTheRangeWithRedisIndexes() {
        byte[] all = GatewayFixture.randomValue(1 << 20, 5);
        int n = all.length;
        try (RespSocket s = new RespSocket(fixture.port())) {
            assertThat(s.call("SET", "ranged", all)).isEqualTo("OK");
            store.calls.clear();
            assertThat((byte[]) s.call("GETRANGE", "ranged", "1000", "1009"))
                    .isEqualTo(java.util.Arrays.copyOfRange(all, 1000, 1010));
            assertThat((byte[]) s.call("GETRANGE", "ranged", "-10", "-1"))
                    .isEqualTo(java.util.Arrays.copyOfRange(all, n - 10, n));
            assertThat((byte[]) s.call("GETRANGE", "ranged", "-5", "100000000"))
                    .isEqualTo(java.util.Arrays.copyOfRange(all, n - 5, n));
            assertThat((byte[]) s.call("GETRANGE", "ranged", "0", "-1")).isEqualTo(all);
            assertThat((byte[]) s.call("GETRANGE", "ranged", "5", "2")).isEmpty();
            assertThat((byte[]) s.call("GETRANGE", "ranged", "-1", "-5")).isEmpty();
            assertThat((byte[]) s.call("GETRANGE", "ranged", Integer.toString(n), Integer.toString(n + 5))).isEmpty();
            assertThat((byte[]) s.call("GETRANGE", "no-such-key", "0", "10")).isEmpty();
            assertThat(store.calls).as("ranges read, never the whole value").doesNotContain("get:1")
                    .filteredOn("getRange:1"::equals).hasSize(4);
        }
    }

    @Test
    void aRangeLongerThanTheLargestBulkIsRefusedAndShorterOnesAreServedByTheDefaultGetRange() {
        // seen through a ForwardingStore, which leaves getRange to GatewayStore's default: the whole value read
        try (GatewayFixture small = GatewayFixture.start(Map.of("gateway.max-bulk-size", "1KiB"), ForwardingStore::new);
             RespSocket s = new RespSocket(small.port())) {
            byte[] value = GatewayFixture.randomValue(4096, 9); // stored by a Java client: more than a bulk may carry
            small.tiffin.client().put("wide", value, io.tiffin.api.PutOptions.replicas(1));
            assertThat(s.call("GETRANGE", "wide", "0", "-1")).isInstanceOfSatisfying(RespSocket.Err.class,
                    e -> assertThat(e.text()).startsWith("ERR the range of 'wide' is 4096 bytes")
                            .contains("gateway.max-bulk-size").contains("shorter range"));
            assertThat((byte[]) s.call("GETRANGE", "wide", "3000", "3999"))
                    .isEqualTo(java.util.Arrays.copyOfRange(value, 3000, 4000));
            assertThat((byte[]) s.call("GETRANGE", "wide", "4000", "4999"))
                    .isEqualTo(java.util.Arrays.copyOfRange(value, 4000, 4096));
            assertThat((byte[]) s.call("GETRANGE", "gone", "0", "9")).isEmpty();
        }
    }

    @Test
    void keysThatAreNotUtf8AreRefused() {
        try (RespSocket s = new RespSocket(fixture.port())) {
            Object reply = s.call("SET", new byte[] {(byte) 0xff, (byte) 0xfe}, "v");
            assertThat(reply).isEqualTo(new RespSocket.Err(
                    "ERR INVALID_KEY the key is not valid UTF-8; Tiffin keys are Unicode strings"));
            assertThat(s.call("SET", "ключ", "значение")).isEqualTo("OK");
            assertThat(text(s.call("GET", "ключ"))).isEqualTo("значение");
        }
    }

    /**
     * A pipelined GET or SET whose key is not UTF-8 is answered with the error in its place, between the replies
     * of the commands around it, on a connection that stays open (a fuzzing finding: when such a command started a
     * run of GETs or SETs, the exception closed the connection and the replies of the commands before it were lost).
     */
    @Test
    void aPipelinedCommandWithAKeyThatIsNotUtf8IsAnsweredInItsPlace() {
        byte[] bad = {(byte) 0xff, (byte) 0xfe};
        RespSocket.Err refused = new RespSocket.Err(
                "ERR INVALID_KEY the key is not valid UTF-8; Tiffin keys are Unicode strings");
        try (RespSocket s = new RespSocket(fixture.port())) {
            s.send(RespSocket.concat(command("SET", "utf8-a", "1"), command("SET", bad, "2"), command("SET", "utf8-b", "3"),
                    command("GET", "utf8-a"), command("GET", bad), command("GET", "utf8-b")));
            assertThat(s.read()).isEqualTo("OK");
            assertThat(s.read()).isEqualTo(refused);
            assertThat(s.read()).isEqualTo("OK");
            assertThat(text(s.read())).isEqualTo("1");
            assertThat(s.read()).isEqualTo(refused);
            assertThat(text(s.read())).isEqualTo("3");
            assertThat(s.call("PING")).isEqualTo("PONG");
        }
    }

    @Test
    void resp3UsesItsOwnNullMapAndVerbatimTypes() {
        try (RespSocket s = new RespSocket(fixture.port())) {
            s.send(command("HELLO", "3")).send(command("GET", "missing")).send(command("CONFIG", "GET", "appendonly"))
                    .send(command("INFO", "clients")).send(command("QUIT"));
            String wire = new String(s.readToEnd(5000), StandardCharsets.US_ASCII);
            assertThat(wire).startsWith("%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:3\r\n")
                    .contains("\r\n_\r\n%1\r\n$10\r\nappendonly\r\n$2\r\nno\r\n=")
                    .contains("txt:# Clients\r\nconnected_clients:")
                    .endsWith("\r\n+OK\r\n");
        }
    }

    @Test
    void quitAnswersOkAndCloses() {
        try (RespSocket s = new RespSocket(fixture.port())) {
            s.send(command("PING")).send(command("QUIT")).send(command("PING"));
            assertThat(new String(s.readToEnd(5000), StandardCharsets.US_ASCII)).isEqualTo("+PONG\r\n+OK\r\n");
        }
    }

    @Test
    void scanPagesThroughEveryKeyOnceAndKeysUsesTheLiteralPrefix() {
        try (RespSocket s = new RespSocket(fixture.port())) {
            List<Object> mset = new ArrayList<>(List.of("MSET"));
            for (int i = 0; i < 2500; i++) {
                mset.add("user:" + i);
                mset.add("v");
                mset.add("other:" + i);
                mset.add("v");
            }
            assertThat(s.call(mset.toArray())).isEqualTo("OK");
            store.calls.clear();
            List<String> seen = new ArrayList<>();
            String cursor = "0";
            int steps = 0;
            do {
                List<?> page = (List<?>) s.call("SCAN", cursor, "MATCH", "user:*", "COUNT", "100");
                cursor = text(page.get(0));
                for (Object k : (List<?>) page.get(1)) {
                    seen.add(text(k));
                }
                if (steps++ == 10) {
                    assertThat(s.call("DEL", "user:0", "user:1", "user:10")).isEqualTo(3L); // already returned
                }
            } while (!cursor.equals("0"));
            assertThat(seen).hasSize(2500).doesNotHaveDuplicates().allMatch(k -> k.startsWith("user:"));
            assertThat(steps).isEqualTo(25);
            assertThat(store.calls).allMatch(c -> c.equals("list:user:") || c.startsWith("remove:"));

            List<?> keys = (List<?>) s.call("KEYS", "user:1?");
            assertThat(keys.stream().map(RespSocket::text)).containsExactly("user:11", "user:12", "user:13",
                    "user:14", "user:15", "user:16", "user:17", "user:18", "user:19");
            assertThat(((List<?>) s.call("KEYS", "other:2[0-1]")).stream().map(RespSocket::text))
                    .containsExactly("other:20", "other:21");
            assertThat(((List<?>) s.call("KEYS", "*:249[^0-8]")).stream().map(RespSocket::text))
                    .containsExactly("other:2499", "user:2499");
            assertThat(store.calls).contains("list:user:1", "list:other:2", "list:");
        }
    }

    /**
     * An unknown command's (and subcommand's) error echoes the client's bytes as redis-server 7.0.15 does, byte for
     * byte: not decoded (they need not be UTF-8), each cut at a NUL, CR and LF as spaces, the name cut at 128 bytes
     * and the arguments once they take 128 bytes with their quotes. Every expected line is redis-server 7.0.15's
     * answer to the same command (sent the same way, over a bare socket); strings here hold one char per byte.
     */
    @Test
    void anUnknownCommandsErrorEchoesItsBytesAsRedisDoes() throws java.io.IOException {
        String e = latin1("\u00e9".getBytes(StandardCharsets.UTF_8)); // é in UTF-8: C3 A9
        Object[][] commands = {
            {bytes("caf" + e), bytes("\u00ff\u00fe"), "ok"},
            {bytes("\u00e9t\u00e9")},
            {bytes("na\0me"), bytes("a\0b"), "c"},
            {bytes("a\r\nb"), bytes("x\ny\rz")},
            {"N".repeat(200), "A".repeat(200)},
            {"N", "A".repeat(100), "B".repeat(100), "C"},
            concatArgs(new Object[] {"N"}, java.util.Collections.nCopies(50, "").toArray()),
            {"N", bytes(e.repeat(70))},
            {"CLIENT", bytes("f" + e + "\r\nx")},
            {"CONFIG", "S".repeat(200)},
            {"client", bytes("\u00ff")},
        };
        String[] redis = {
            "-ERR unknown command 'caf" + e + "', with args beginning with: '\u00ff\u00fe' 'ok' ",
            "-ERR unknown command '\u00e9t\u00e9', with args beginning with: ",
            "-ERR unknown command 'na', with args beginning with: 'a' 'c' ",
            "-ERR unknown command 'a  b', with args beginning with: 'x y z' ",
            "-ERR unknown command '" + "N".repeat(128) + "', with args beginning with: '" + "A".repeat(128) + "' ",
            "-ERR unknown command 'N', with args beginning with: '" + "A".repeat(100) + "' '" + "B".repeat(25) + "' ",
            "-ERR unknown command 'N', with args beginning with: " + "'' ".repeat(43),
            "-ERR unknown command 'N', with args beginning with: '" + e.repeat(64) + "' ",
            "-ERR unknown subcommand 'f" + e + "  x'. Try CLIENT HELP.",
            "-ERR unknown subcommand '" + "S".repeat(128) + "'. Try CONFIG HELP.",
            "-ERR unknown subcommand '\u00ff'. Try CLIENT HELP.",
        };
        try (RespSocket s = new RespSocket(fixture.port())) {
            for (int i = 0; i < commands.length; i++) {
                s.send(command(commands[i]));
                assertThat(latin1(rawLine(s))).as("reply %d", i).isEqualTo(redis[i] + "\r\n");
            }
            assertThat(s.call("PING")).isEqualTo("PONG");
        }
    }

    /** The bytes of {@code latin1}, one per char. */
    private static byte[] bytes(String latin1) {
        return latin1.getBytes(StandardCharsets.ISO_8859_1);
    }

    private static String latin1(byte[] b) {
        return new String(b, StandardCharsets.ISO_8859_1);
    }

    private static Object[] concatArgs(Object[] a, Object[] b) {
        Object[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** The next reply's bytes up to and with its CRLF, as they came. */
    private static byte[] rawLine(RespSocket s) throws java.io.IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int prev = -1;
        while (true) {
            int b = s.input().read();
            if (b < 0) {
                throw new java.io.EOFException("closed after " + latin1(line.toByteArray()));
            }
            line.write(b);
            if (prev == '\r' && b == '\n') {
                return line.toByteArray();
            }
            prev = b;
        }
    }
}
