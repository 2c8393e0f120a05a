package io.tiffin.core.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every command of the gateway through the real redis-cli (Debian's redis-tools), in RESP2 and with
 * {@code -3} (RESP3). The expected outputs are redis-server 7.0.15's for the same input, except where
 * Tiffin differs on purpose (one database, keys listed in order, minimal COMMAND DOCS, the refusals of
 * what needs the master's support); those lines say so.
 */
class GatewayRedisCliTest {
    private static GatewayFixture fixture;

    @BeforeAll
    static void start() {
        RedisTools.require(RedisTools.REDIS_CLI, "redis-tools");
        fixture = GatewayFixture.start();
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    @BeforeEach
    void flush() {
        assertThat(RedisTools.cli(fixture.port(), "FLUSHALL").out()).isEqualTo("OK\n");
    }

    /** Runs {@code script} (one command per line) through one redis-cli and checks its output line by line. */
    private static void check(List<String> options, String script, String expected) {
        String[] args = options.toArray(String[]::new);
        RedisTools.Result r = RedisTools.cliWithInput(fixture.port(), script, args);
        assertThat(r.err()).isEmpty();
        // redis-cli prints how long a command took when it took over half a second (a loaded machine): not a reply
        assertThat(r.out().replaceAll("(?m)^\\(\\d+\\.\\d+s\\)\n", "")).isEqualTo(expected);
    }

    @Test
    void everyCommandInResp2() {
        check(List.of("--no-raw"), """
                PING
                PING hello
                ECHO "hi there"
                SELECT 0
                SELECT 1
                SET k1 v1
                GET k1
                GET missing
                STRLEN k1
                STRLEN missing
                GETRANGE k1 0 0
                GETRANGE k1 -1 -1
                GETRANGE missing 0 1
                TYPE k1
                TYPE missing
                TTL k1
                PTTL missing
                PERSIST k1
                EXPIRE missing 10
                EXPIRE k1 x
                MSET a 1 b 2
                MGET a b missing
                EXISTS a a b missing
                KEYS *
                SCAN 0 MATCH k*
                DEL a missing a
                UNLINK b
                DBSIZE
                SET x y EX 0
                SET x y NX XX
                SET x y KEEPTTL
                CLIENT SETNAME tester
                CLIENT GETNAME
                CLIENT FOO
                CONFIG GET save
                CONFIG GET appendonly
                FOO bar
                GET
                AUTH pw
                INFO keyspace
                FLUSHALL
                DBSIZE
                """, """
                PONG
                "hello"
                "hi there"
                OK
                (error) ERR DB index is out of range
                OK
                "v1"
                (nil)
                (integer) 2
                (integer) 0
                "v"
                "1"
                ""
                string
                none
                (integer) -1
                (integer) -2
                (integer) 0
                (integer) 0
                (error) ERR value is not an integer or out of range
                OK
                1) "1"
                2) "2"
                3) (nil)
                (integer) 3
                1) "a"
                2) "b"
                3) "k1"
                1) "0"
                2) 1) "k1"
                (integer) 1
                (integer) 1
                (integer) 1
                (error) ERR invalid expire time in 'set' command
                (error) ERR syntax error
                OK
                OK
                "tester"
                (error) ERR unknown subcommand 'FOO'. Try CLIENT HELP.
                1) "save"
                2) ""
                1) "appendonly"
                2) "no"
                (error) ERR unknown command 'FOO', with args beginning with: 'bar'\s
                (error) ERR wrong number of arguments for 'get' command
                (error) ERR AUTH <password> called without any password configured for the default user. Are you \
                sure your configuration is correct?
                # Keyspace\r
                db0:keys=2,expires=0,avg_ttl=0\r
                OK
                (integer) 0
                """);
    }

    @Test
    void setAndDelRightAfterGetConditionsExpiryAndEmptyValues() {
        check(List.of("--no-raw"), """
                SET k v
                GET k
                SET k w
                GET k
                DEL k
                GET k
                SET n v NX
                SET n w NX
                GET n
                SET m v XX
                EXISTS m
                SET n x XX
                GET n
                SET n v GET
                SET g1 v GET
                SET n z NX GET
                SET g2 v XX GET
                EXISTS g2
                GET n
                TTL n
                EXPIRE n 100
                TTL n
                PERSIST n
                TTL n
                PERSIST n
                EXPIRE n 100 NX
                EXPIRE n 50 NX
                EXPIRE n 200 GT
                EXPIRE n 50 GT
                EXPIRE n 300 LT
                TTL n
                SET t v PX 100000
                TTL t
                SET t w KEEPTTL
                TTL t
                SET t w
                TTL t
                SET t v EX 100 NX
                SET u v EX 100 NX
                TTL u
                EXPIRE missing 10
                TTL missing
                PTTL missing
                EXPIRE u 0
                GET u
                SET n ""
                GET n
                STRLEN n
                GETRANGE n 0 -1
                """, """
                OK
                "v"
                OK
                "w"
                (integer) 1
                (nil)
                OK
                (nil)
                "v"
                (nil)
                (integer) 0
                OK
                "x"
                "x"
                (nil)
                "v"
                (nil)
                (integer) 0
                "v"
                (integer) -1
                (integer) 1
                (integer) 100
                (integer) 1
                (integer) -1
                (integer) 0
                (integer) 1
                (integer) 0
                (integer) 1
                (integer) 0
                (integer) 0
                (integer) 200
                OK
                (integer) 100
                OK
                (integer) 100
                OK
                (integer) -1
                (nil)
                OK
                (integer) 100
                (integer) 0
                (integer) -2
                (integer) -2
                (integer) 1
                (nil)
                OK
                ""
                (integer) 0
                ""
                """);
    }

    @Test
    void resp3RepliesWithMinusThree() {
        check(List.of("-3", "--no-raw"), """
                GET missing
                MGET a missing
                CLIENT GETNAME
                CONFIG GET save
                SET a 1
                MGET a missing
                COMMAND DOCS get
                COMMAND INFO get
                INFO keyspace
                EXISTS a
                """, """
                (nil)
                1) (nil)
                2) (nil)
                (nil)
                1# "save" => ""
                OK
                1) "1"
                2) (nil)
                1# "get" =>\s
                   1# "summary" => "Get the value of a key"
                   2# "since" => "1.0.0"
                   3# "group" => "string"
                1)  1) "get"
                    2) (integer) 2
                    3) 1~ readonly
                       2~ fast
                    4) (integer) 1
                    5) (integer) 1
                    6) (integer) 1
                    7) 1~ @read
                       2~ @string
                       3~ @fast
                    8) (empty set)
                    9) (empty set)
                   10) (empty set)
                # Keyspace\r
                db0:keys=1,expires=0,avg_ttl=0\r
                (integer) 1
                """);
    }

    @Test
    void helloSwitchesProtocolsAndReportsTheConnection() {
        RedisTools.Result r = RedisTools.cliWithInput(fixture.port(), "HELLO 3\nCLIENT ID\nHELLO 2\nGET missing\n",
                "--no-raw");
        assertThat(r.out()).matches("""
                1# "server" => "redis"
                2# "version" => "7\\.0\\.15"
                3# "proto" => \\(integer\\) 3
                4# "id" => \\(integer\\) (\\d+)
                5# "mode" => "standalone"
                6# "role" => "master"
                7# "modules" => \\(empty array\\)
                \\(integer\\) \\d+
                 1\\) "server"
                 2\\) "redis"
                 3\\) "version"
                 4\\) "7\\.0\\.15"
                 5\\) "proto"
                 6\\) \\(integer\\) 2
                 7\\) "id"
                 8\\) \\(integer\\) \\d+
                 9\\) "mode"
                10\\) "standalone"
                11\\) "role"
                12\\) "master"
                13\\) "modules"
                14\\) \\(empty array\\)
                \\(nil\\)
                """);
        String[] lines = r.out().split("\n");
        String idInHello = lines[3].replaceAll("\\D+", "").substring(1);
        assertThat(lines[7]).isEqualTo("(integer) " + idInHello);
        assertThat(RedisTools.cli(fixture.port(), "HELLO", "4").out()).isEqualTo("NOPROTO unsupported protocol version\n\n");
        assertThat(RedisTools.cli(fixture.port(), "HELLO", "3", "SETNAME", "a b").out())
                .isEqualTo("ERR Client names cannot contain spaces, newlines or special characters.\n\n");
    }

    @Test
    void clientCommandCountAndConfigAnswerLikeRedis() {
        check(List.of("--no-raw"), """
                CLIENT SETINFO lib-name mylib
                CLIENT SETINFO lib-ver 1.2
                CLIENT SETINFO foo 1
                CLIENT SETINFO lib-name "a b"
                CLIENT ID x
                COMMAND COUNT
                COMMAND FOO
                CONFIG GET nonexistent
                CONFIG GET
                CONFIG SET save x
                SCAN x
                SCAN 0 COUNT 0
                FLUSHALL FOO
                QUIT
                PING
                """, """
                OK
                OK
                (error) ERR Unrecognized option 'foo'
                (error) ERR lib-name cannot contain spaces, newlines or special characters.
                (error) ERR wrong number of arguments for 'client|id' command
                (integer) 31
                (error) ERR unknown subcommand 'FOO'. Try COMMAND HELP.
                (empty array)
                (error) ERR wrong number of arguments for 'config|get' command
                (error) ERR unknown subcommand 'SET'. Try CONFIG HELP.
                (error) ERR invalid cursor
                (error) ERR syntax error
                (error) ERR syntax error
                """); // redis-cli prints nothing for QUIT and stops reading, as with redis-server
    }

    @Test
    void resetGoesBackToResp2AndForgetsTheName() {
        RedisTools.Result r = RedisTools.cliWithInput(fixture.port(), """
                HELLO 3 SETNAME before
                CLIENT GETNAME
                RESET
                CLIENT GETNAME
                GET missing
                """, "--no-raw");
        List<String> lines = r.out().lines().toList();
        assertThat(lines).hasSize(11);
        assertThat(lines.getFirst()).isEqualTo("1# \"server\" => \"redis\"");
        assertThat(lines.subList(7, 11)).containsExactly("\"before\"", "RESET", "(nil)", "(nil)");
    }
}
