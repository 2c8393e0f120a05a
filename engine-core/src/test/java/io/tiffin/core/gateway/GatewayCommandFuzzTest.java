package io.tiffin.core.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Coverage-guided fuzzing of the Redis gateway's commands: a real gateway in front of a real in-process Tiffin
 * ({@link GatewayFixture}), and one connection that sends pipelines of one to four commands, each a name the
 * gateway knows (or any text) with up to six arguments drawn from keys, numbers, the commands' option words and
 * any bytes. Every command must get exactly one reply, none of them the {@code INTERNAL_ERROR} a handler that threw
 * something unexpected answers, and the connection must stay open and answer PING after them. The parser has its
 * own target ({@link RespParserFuzzTest}); in CI the inputs under src/test/resources run as regression tests and
 * the build fuzzes each target briefly (docs/SECURITY.md).
 */
class GatewayCommandFuzzTest {
    private static final String[] NAMES = {"PING", "ECHO", "HELLO", "AUTH", "SELECT", "RESET", "CLIENT SETNAME",
        "CLIENT GETNAME", "CLIENT SETINFO", "CLIENT ID", "CLIENT HELP", "CLIENT", "GET", "SET", "MGET", "MSET",
        "STRLEN", "GETRANGE", "DEL", "UNLINK", "EXISTS", "TYPE", "TTL", "PTTL", "EXPIRE", "PEXPIRE", "PERSIST", "KEYS",
        "SCAN", "DBSIZE", "FLUSHDB", "FLUSHALL", "INFO", "COMMAND", "COMMAND COUNT", "COMMAND DOCS", "COMMAND INFO",
        "COMMAND HELP", "CONFIG GET", "CONFIG HELP", "CONFIG"};
    private static final String[] WORDS = {"k0", "k1", "k2", "fuzz:k3", "EX", "PX", "EXAT", "PXAT", "NX", "XX", "KEEPTTL",
        "GET", "MATCH", "COUNT", "TYPE", "string", "none", "*", "k*", "fuzz:*", "[a-", "\\", "0", "1", "-1", "2", "3",
        "10", "100000", "-100000", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "1.5", "",
        "AUTH", "SETNAME", "default", "lib-name", "lib-ver", "server", "stats", "keyspace", "all", "everything",
        "ASYNC", "SYNC", "maxmemory"};
    private static GatewayFixture gateway;
    private static RespSocket socket;

    @BeforeAll
    static void start() {
        gateway = GatewayFixture.start();
        socket = new RespSocket(gateway.port());
    }

    @AfterAll
    static void stop() {
        socket.close();
        gateway.close();
    }

    @FuzzTest(maxDuration = "5m")
    void everyCommandGetsOneReplyAndNoneIsAnInternalError(FuzzedDataProvider data) {
        int count = data.consumeInt(1, 4);
        List<String> sent = new ArrayList<>(count);
        java.io.ByteArrayOutputStream pipeline = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < count; i++) {
            List<Object> args = new ArrayList<>();
            String name = data.consumeBoolean() ? data.pickValue(NAMES) : data.consumeString(12);
            args.addAll(List.of(name.split(" ", -1)));
            if (args.getFirst().toString().equalsIgnoreCase("QUIT") || name.isEmpty()) {
                args.set(0, "PING"); // QUIT (with any arguments) closes the connection on purpose
            }
            int n = data.consumeInt(0, 6);
            for (int a = 0; a < n; a++) {
                switch (data.consumeInt(0, 3)) {
                    case 0 -> args.add(data.pickValue(WORDS));
                    case 1 -> args.add(Long.toString(data.consumeLong()));
                    case 2 -> args.add(data.consumeString(16));
                    default -> args.add(data.consumeBytes(64));
                }
            }
            sent.add(args.stream().map(a -> a instanceof byte[] b ? "<" + b.length + " bytes>" : "'" + a + "'")
                    .toList().toString());
            pipeline.writeBytes(RespSocket.command(args.toArray()));
        }
        socket.send(pipeline.toByteArray());
        for (String command : sent) {
            Object reply;
            try {
                reply = socket.read();
            } catch (java.io.UncheckedIOException e) {
                throw new AssertionError("no reply to " + command + " (of " + sent + ")", e);
            }
            if (reply instanceof RespSocket.Err(String text)) {
                assertThat(text).as("the reply to %s", command).doesNotContain("INTERNAL_ERROR");
            }
        }
        socket.send(RespSocket.command("HELLO", "2")); // back to RESP2 whatever HELLO or RESET came before
        assertThat(socket.read()).as("HELLO 2 after %s", sent).isNotInstanceOf(RespSocket.Err.class);
        assertThat(socket.call("PING")).as("PING after %s", sent).isEqualTo("PONG");
    }
}
