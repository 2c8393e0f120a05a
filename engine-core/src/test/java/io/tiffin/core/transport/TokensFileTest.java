package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.proto.Empty;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tokens read from {@code transport.tokens-file} ({@link TokensFile}) and rotated while a real server on loopback
 * runs: the first token of a role is presented, every one is accepted, a changed file is picked up by new connections
 * while established ones go on, and files that would break the cluster are refused with a message naming the file.
 */
class TokensFileTest {
    private static final String HOST = "127.0.0.1";
    private static final Duration QUICK = Duration.ofMillis(50);
    private final List<AutoCloseable> resources = new ArrayList<>();
    @TempDir
    Path dir;

    @AfterEach
    void tearDown() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
    }

    private Path write(String name, String text) throws IOException {
        Path p = dir.resolve(name);
        Path tmp = dir.resolve(name + ".tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, p, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        return p;
    }

    private static Credentials fromFile(Path file, Set<String> inline, Duration reload) {
        return Credentials.NONE.withTokensFile(TokensFile.load(file, inline, reload));
    }

    /** A server whose credentials come from {@code credentials}; answers GET_REPLICA_LIST (the client role). */
    private String server(Credentials credentials) {
        TransportServer server = new TransportServer("tokens-test", TransportSettings.defaults().withIoThreads(1)
                .withCredentials(credentials));
        resources.add(server);
        server.register(Opcode.GET_REPLICA_LIST, (request, responder) -> responder.ok(Empty.getDefaultInstance()),
                null);
        server.start(HOST, 0);
        return HOST + ":" + server.localAddress().getPort();
    }

    private BlockingConnectionPool client(Credentials credentials) {
        BlockingConnectionPool pool = new BlockingConnectionPool("tokens-peer", TransportSettings.defaults()
                .withCredentials(credentials), "app");
        resources.add(pool);
        return pool;
    }

    private BlockingConnectionPool client(String token) {
        return client(Credentials.NONE.withToken(Role.CLIENT, token));
    }

    private static void get(BlockingConnectionPool pool, String server) {
        pool.call(server, Opcode.GET_REPLICA_LIST, Empty.getDefaultInstance(), Empty.parser());
    }

    private static void assertRefused(BlockingConnectionPool pool, String server) {
        assertThatThrownBy(() -> get(pool, server)).isInstanceOfSatisfying(TiffinException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_CLIENT))
                .hasMessageContaining("rejected the auth token");
    }

    /** Waits until the server takes {@code token} (new connections, after the file changed), or fails. */
    private void awaitAccepted(String server, String token) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            try (BlockingConnectionPool pool = new BlockingConnectionPool("probe", TransportSettings.defaults()
                    .withCredentials(Credentials.NONE.withToken(Role.CLIENT, token)), "probe")) {
                get(pool, server);
                return;
            } catch (TiffinException e) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("the server did not take the new token within 10 s", e);
                }
                Thread.sleep(20);
            }
        }
    }

    @Test
    void eachRolePresentsItsFirstTokenAndAcceptsEveryOne() throws IOException {
        Path file = write("tokens", """
                # rotation of the client token under way
                client = new-client
                client=old-client

                node=node-secret
                admin=admin-secret
                """);
        Credentials c = fromFile(file, Set.of(), Duration.ZERO).current();
        assertThat(c.tokenOf(Role.CLIENT)).isEqualTo("new-client");
        assertThat(c.presentedToken()).isEqualTo("new-client");
        assertThat(c.presentingAs(Role.NODE).presentedToken()).isEqualTo("node-secret");
        assertThat(c.acceptedTokensOf(Role.CLIENT)).containsExactly("new-client", "old-client");
        assertThat(c.acceptedTokensOf(Role.ADMIN)).containsExactly("admin-secret");
        assertThat(c.openRoles()).isEmpty();
        assertThat(c.toString()).doesNotContain("secret").doesNotContain("client-");

        String server = server(fromFile(file, Set.of(), Duration.ZERO));
        get(client("new-client"), server);
        get(client("old-client"), server);
        assertRefused(client("node-secret-guess"), server);
    }

    @Test
    void sharedLinesProveTheRolesWithoutTokensOfTheirOwn() throws IOException {
        Path file = write("tokens", "auth=shared-new\nauth=shared-old\nadmin=admin-only\n");
        Credentials c = fromFile(file, Set.of(), Duration.ZERO).current();
        assertThat(c.acceptedTokensOf(Role.CLIENT)).containsExactly("shared-new", "shared-old");
        assertThat(c.acceptedTokensOf(Role.NODE)).containsExactly("shared-new", "shared-old");
        assertThat(c.acceptedTokensOf(Role.ADMIN)).as("its own line only").containsExactly("admin-only");

        Credentials inlineClient = Credentials.NONE.withToken(Role.CLIENT, "from-the-key")
                .withTokensFile(TokensFile.load(file, Set.of("client"), Duration.ZERO)).current();
        assertThat(inlineClient.acceptedTokensOf(Role.CLIENT)).as("its key's token, not the shared lines")
                .containsExactly("from-the-key");
    }

    /**
     * The rotation an operator runs: servers add the new token first (both accepted), clients move to it, servers
     * drop the old one. A connection opened with the old token goes on after that; a new one with it is refused.
     */
    @Test
    void aRotationOfTheClientTokenNeedsNoRestart() throws Exception {
        Path serverFile = write("server-tokens", "client=old\nnode=node-secret\nadmin=admin-secret\n");
        Path clientFile = write("client-tokens", "client=old\n");
        TokensFile serverTokens = TokensFile.load(serverFile, Set.of(), QUICK);
        String server = server(Credentials.NONE.withTokensFile(serverTokens));
        BlockingConnectionPool app = client(fromFile(clientFile, Set.of(), QUICK));
        get(app, server);
        BlockingConnectionPool established = client("old");
        get(established, server);

        write("server-tokens", "client=new\nclient=old\nnode=node-secret\nadmin=admin-secret\n");
        awaitAccepted(server, "new");
        get(client("old"), server);

        write("client-tokens", "client=new\n");
        Thread.sleep(QUICK.toMillis() * 3);
        get(app, server); // the pool's connection stays; a new pool from the same file presents the new token
        BlockingConnectionPool fresh = client(fromFile(clientFile, Set.of(), QUICK));
        assertThat(Credentials.NONE.withTokensFile(TokensFile.load(clientFile, Set.of(), QUICK)).current()
                .presentedToken()).isEqualTo("new");

        write("server-tokens", "client=new\nnode=node-secret\nadmin=admin-secret\n");
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (serverTokens.reloads() < 2 && System.nanoTime() < deadline) {
            try (BlockingConnectionPool poke = new BlockingConnectionPool("poke", TransportSettings.defaults()
                    .withCredentials(Credentials.NONE.withToken(Role.CLIENT, "new")), "poke")) {
                get(poke, server);
            }
            Thread.sleep(20);
        }
        assertThat(serverTokens.reloads()).isEqualTo(2);
        assertRefused(client("old"), server);
        get(fresh, server);
        get(established, server); // proved its role when it connected
    }

    /** A changed file that does not parse, or drops a role it named, is refused; the tokens read before stay. */
    @Test
    void aChangedFileThatWouldBreakTheClusterIsRefusedAndTheOldTokensStay() throws Exception {
        Path file = write("tokens", "client=kept\nnode=node-kept\nadmin=admin-kept\n");
        TokensFile tokens = TokensFile.load(file, Set.of(), QUICK);
        String server = server(Credentials.NONE.withTokensFile(tokens));

        write("tokens", "client=new\nnode=node-kept\n"); // admin dropped: the admin role would be open
        pokeUntil(server, "kept", () -> tokens.failedReloads() >= 1);
        write("tokens", "client new-without-equals\nnode=n\nadmin=a\n");
        pokeUntil(server, "kept", () -> tokens.failedReloads() >= 2);
        assertThat(tokens.reloads()).isZero();
        get(client("kept"), server);
        assertRefused(client("new"), server);

        write("tokens", "client=fixed\nnode=node-kept\nadmin=admin-kept\n");
        awaitAccepted(server, "fixed");
        assertThat(tokens.reloads()).isEqualTo(1);
    }

    private void pokeUntil(String server, String token, java.util.function.BooleanSupplier done)
            throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!done.getAsBoolean()) {
            assertThat(System.nanoTime()).as("the reload was not tried within 10 s").isLessThan(deadline);
            try (BlockingConnectionPool poke = new BlockingConnectionPool("poke", TransportSettings.defaults()
                    .withCredentials(Credentials.NONE.withToken(Role.CLIENT, token)), "poke")) {
                get(poke, server);
            }
            Thread.sleep(20);
        }
    }

    @Test
    void aFileThatCannotServeIsRefusedAtStartNamingItsProblem() throws IOException {
        assertInvalid(write("a", "client=x\nreader=y\n"), Set.of(), "line 2 is not role=token");
        assertInvalid(write("b", "client=\n"), Set.of(), "line 1 gives client an empty token");
        assertInvalid(write("c", "node=n\n"), Set.of("node"), "line 1 gives a token to node, whose key"
                + " transport.node-token is set too");
        assertInvalid(write("d", "auth=s\n"), Set.of("auth"), "transport.auth-token is set too");
        assertInvalid(dir.resolve("missing"), Set.of(), "it cannot be read");
        assertInvalid(write("e", "client=" + "x".repeat(TokensFile.MAX_BYTES) + "\n"), Set.of(), "larger than");
    }

    private static void assertInvalid(Path file, Set<String> inline, String message) {
        assertThatThrownBy(() -> TokensFile.load(file, inline, Duration.ZERO))
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS))
                .hasMessageContaining("transport.tokens-file = " + file + " is refused")
                .hasMessageContaining(message);
    }
}
