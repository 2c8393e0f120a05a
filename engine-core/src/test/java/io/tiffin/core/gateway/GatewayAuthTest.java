package io.tiffin.core.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.core.gateway.RespSocket.Err;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * With Tiffin's credential set ({@code transport.auth-token}), RESP clients must authenticate as the user
 * {@code default} with it, by AUTH or HELLO ... AUTH, and get Redis's replies (NOAUTH, WRONGPASS) otherwise.
 */
class GatewayAuthTest {
    private static final String TOKEN = "s3kret-token";
    private static GatewayFixture fixture;

    @BeforeAll
    static void start() {
        fixture = GatewayFixture.start(Map.of("transport.auth-token", TOKEN));
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    @Test
    void commandsBeforeAuthAreRefusedAsRedisDoes() {
        try (RespSocket s = new RespSocket(fixture.port())) {
            assertThat(s.call("PING")).isEqualTo(new Err("NOAUTH Authentication required."));
            assertThat(s.call("GET", "k")).isEqualTo(new Err("NOAUTH Authentication required."));
            // an unknown command and a wrong arity are reported before the missing authentication, as by Redis
            assertThat(s.call("FOO")).isEqualTo(new Err("ERR unknown command 'FOO', with args beginning with: "));
            assertThat(s.call("GET")).isEqualTo(new Err("ERR wrong number of arguments for 'get' command"));
            assertThat(s.call("HELLO", "3")).isEqualTo(new Err("NOAUTH HELLO must be called with the client already"
                    + " authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the"
                    + " client and select the RESP protocol version at the same time"));
            assertThat(s.call("AUTH", "wrong")).isEqualTo(
                    new Err("WRONGPASS invalid username-password pair or user is disabled."));
            assertThat(s.call("AUTH", "bob", TOKEN)).isEqualTo(
                    new Err("WRONGPASS invalid username-password pair or user is disabled."));
            assertThat(s.call("AUTH", TOKEN)).isEqualTo("OK");
            assertThat(s.call("PING")).isEqualTo("PONG");
            assertThat(s.call("RESET")).isEqualTo("RESET");
            assertThat(s.call("PING")).isEqualTo(new Err("NOAUTH Authentication required."));
            assertThat(s.call("AUTH", "default", TOKEN)).isEqualTo("OK");
            assertThat(s.call("QUIT")).isEqualTo("OK");
        }
    }

    @Test
    void helloAuthAuthenticatesAndSwitchesProtocolAtOnce() {
        try (RespSocket s = new RespSocket(fixture.port())) {
            assertThat(s.call("HELLO", "3", "AUTH", "default", "nope")).isEqualTo(
                    new Err("WRONGPASS invalid username-password pair or user is disabled."));
            assertThat(s.call("HELLO", "3", "AUTH", "default", TOKEN, "SETNAME", "lmcache"))
                    .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP).containsEntry("proto", 3L);
            assertThat(s.call("GET", "missing")).isNull(); // RESP3 null
            assertThat(RespSocket.text(s.call("CLIENT", "GETNAME"))).isEqualTo("lmcache");
        }
    }

    @Test
    void redisCliAuthenticatesWithMinusA() {
        assertThat(RedisTools.cli(fixture.port(), "-a", TOKEN, "--no-auth-warning", "SET", "k", "v").out())
                .isEqualTo("OK\n");
        assertThat(RedisTools.cli(fixture.port(), "-a", TOKEN, "--no-auth-warning", "-3", "GET", "k").out())
                .isEqualTo("v\n");
        assertThat(RedisTools.cli(fixture.port(), "GET", "k").out()).isEqualTo("NOAUTH Authentication required.\n\n");
    }

    /**
     * Before AUTH, as Redis: a bulk string over 16 KiB or a command of more than 10 arguments is a protocol error and
     * the connection closes, so a peer without the password cannot make the gateway hold its values (it buffered up
     * to gateway.max-memory of them). After AUTH, the usual limits.
     */
    @Test
    void beforeAuthLargeValuesAndLongCommandsAreProtocolErrors() throws Exception {
        try (RespSocket s = new RespSocket(fixture.port())) {
            s.send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000000\r\n");
            assertThat(s.read()).isEqualTo(new Err("ERR Protocol error: unauthenticated bulk length"));
            s.socket().setSoTimeout(5_000);
            assertThat(s.input().read()).as("closed").isEqualTo(-1);
        }
        try (RespSocket s = new RespSocket(fixture.port())) {
            s.send("*11\r\n");
            assertThat(s.read()).isEqualTo(new Err("ERR Protocol error: unauthenticated multibulk length"));
        }
        try (RespSocket s = new RespSocket(fixture.port())) {
            assertThat(s.call("AUTH", TOKEN)).isEqualTo("OK");
            byte[] big = new byte[100_000];
            assertThat(s.call("SET", "big", big)).isEqualTo("OK");
            assertThat(s.call("MSET", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5", "f", "6")).isEqualTo("OK");
        }
    }
}
