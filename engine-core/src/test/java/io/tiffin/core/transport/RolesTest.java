package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.proto.Empty;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Roles on a real server on loopback: which token proves which role ({@link Credentials}, {@link RoleGrants}),
 * the opcodes each role may send ({@link OpcodeRoles}), the errors a refused peer sees, and protected mode
 * with open roles.
 */
class RolesTest {
    private static final String HOST = "127.0.0.1";
    private static final Credentials ROLES = Credentials.NONE.withToken(Role.CLIENT, "client-secret")
            .withToken(Role.NODE, "node-secret").withToken(Role.ADMIN, "admin-secret");
    private final List<AutoCloseable> resources = new ArrayList<>();
    /** The peer of the last request a handler saw. */
    private final AtomicReference<Peer> lastPeer = new AtomicReference<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
    }

    /** A server accepting {@code credentials} that answers PING, GET_REPLICA_LIST, REMOVE_ALL and DATA_READ. */
    private String server(Credentials credentials) {
        TransportServer server = new TransportServer("roles-test", TransportSettings.defaults().withIoThreads(1)
                .withCredentials(credentials));
        resources.add(server);
        for (Opcode op : List.of(Opcode.PING, Opcode.GET_REPLICA_LIST, Opcode.REMOVE_ALL, Opcode.DATA_READ)) {
            server.register(op, (request, responder) -> {
                lastPeer.set(request.peer());
                responder.ok(Empty.getDefaultInstance());
            }, null);
        }
        server.start(HOST, 0);
        return HOST + ":" + server.localAddress().getPort();
    }

    /** A pool presenting {@code token} with peer id {@code peerId}. */
    private BlockingConnectionPool peer(String token, String peerId) {
        BlockingConnectionPool pool = new BlockingConnectionPool("roles-peer", TransportSettings.defaults()
                .withAuthToken(token), peerId);
        resources.add(pool);
        return pool;
    }

    private static void send(BlockingConnectionPool pool, String server, Opcode op) {
        pool.call(server, op, Empty.getDefaultInstance(), Empty.parser());
    }

    private static void assertRefused(BlockingConnectionPool pool, String server, Opcode op, String... parts) {
        assertThatThrownBy(() -> send(pool, server, op)).as(op.name())
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_CLIENT))
                .hasMessageContaining("server roles-test refuses " + op).hasMessageContaining(String.join("", parts));
    }

    @Test
    void eachRoleTokenGrantsItsRoleAndEachOpcodeServesItsRoles() {
        String server = server(ROLES);
        BlockingConnectionPool client = peer("client-secret", "app-1");
        send(client, server, Opcode.GET_REPLICA_LIST);
        send(client, server, Opcode.DATA_READ);
        assertThat(lastPeer.get().roles()).containsExactly(Role.CLIENT);
        assertThat(lastPeer.get().id()).isEqualTo("app-1");
        assertRefused(client, server, Opcode.PING, "PING needs the node or admin role; connect with transport.node-token");
        assertRefused(client, server, Opcode.REMOVE_ALL, "REMOVE_ALL needs the admin role; connect with"
                + " transport.admin-token");
        assertThatThrownBy(() -> send(client, server, Opcode.REMOVE_ALL)).hasMessageContaining("peer app-1 from /127.0.0.1:")
                .hasMessageContaining("(role client)");

        BlockingConnectionPool node = peer("node-secret", "node-7");
        send(node, server, Opcode.PING);
        send(node, server, Opcode.DATA_READ);
        assertThat(lastPeer.get().roles()).containsExactly(Role.NODE);
        assertRefused(node, server, Opcode.GET_REPLICA_LIST, "GET_REPLICA_LIST needs the client or admin role;"
                + " connect with transport.client-token");
        assertRefused(node, server, Opcode.REMOVE_ALL, "needs the admin role");

        BlockingConnectionPool admin = peer("admin-secret", "ops");
        for (Opcode op : List.of(Opcode.PING, Opcode.GET_REPLICA_LIST, Opcode.REMOVE_ALL, Opcode.DATA_READ)) {
            send(admin, server, op);
        }
        assertThat(lastPeer.get().roles()).containsExactly(Role.ADMIN);
        // a refused request leaves the connection open
        assertThat(client.connectionsOpened()).isEqualTo(1);
    }

    @Test
    void aTokenOfNoRoleIsRefusedAtTheHandshake() {
        String server = server(ROLES);
        for (String token : List.of("guess", "")) {
            assertThatThrownBy(() -> send(peer(token, "intruder"), server, Opcode.DATA_READ))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_CLIENT))
                    .hasMessageContaining("server roles-test rejected the auth token of peer intruder")
                    .hasMessageContaining("transport.client-token");
        }
    }

    @Test
    void theSharedTokenAloneGrantsEveryRoleAsBeforeRoles() {
        String server = server(Credentials.NONE.withAuthToken("shared"));
        BlockingConnectionPool holder = peer("shared", "old-client");
        for (Opcode op : List.of(Opcode.PING, Opcode.GET_REPLICA_LIST, Opcode.REMOVE_ALL, Opcode.DATA_READ)) {
            send(holder, server, op);
        }
        assertThat(lastPeer.get().roles()).containsExactlyInAnyOrder(Role.values());
        assertThatThrownBy(() -> send(peer("other", "x"), server, Opcode.DATA_READ))
                .hasMessageContaining("rejected the auth token");
    }

    @Test
    void aRoleWithoutATokenOfItsOwnTakesTheSharedOne() {
        String server = server(Credentials.NONE.withAuthToken("shared").withToken(Role.ADMIN, "admin-secret"));
        BlockingConnectionPool shared = peer("shared", "app");
        send(shared, server, Opcode.GET_REPLICA_LIST);
        send(shared, server, Opcode.PING);
        assertThat(lastPeer.get().roles()).containsExactlyInAnyOrder(Role.CLIENT, Role.NODE);
        assertRefused(shared, server, Opcode.REMOVE_ALL, "needs the admin role");
        send(peer("admin-secret", "ops"), server, Opcode.REMOVE_ALL);
    }

    @Test
    void aRoleWithNoTokenAtAllIsOpenToEveryPeer() {
        // only the admin role is guarded: anyone is a client and a node, whatever it presents
        String server = server(Credentials.NONE.withToken(Role.ADMIN, "admin-secret"));
        for (String token : List.of("", "not-a-token")) {
            BlockingConnectionPool anyone = peer(token, "anyone");
            send(anyone, server, Opcode.GET_REPLICA_LIST);
            send(anyone, server, Opcode.PING);
            assertThat(lastPeer.get().roles()).containsExactlyInAnyOrder(Role.CLIENT, Role.NODE);
            assertRefused(anyone, server, Opcode.REMOVE_ALL, "needs the admin role");
        }
        send(peer("admin-secret", "ops"), server, Opcode.REMOVE_ALL);
        // with no token at all every role is open, as without authentication
        String open = server(Credentials.NONE);
        send(peer("", "anyone"), open, Opcode.REMOVE_ALL);
        assertThat(lastPeer.get().roles()).containsExactlyInAnyOrder(Role.values());
    }

    @Test
    void protectedModeRefusesAnOpenRoleBeyondLoopback() {
        TransportSettings adminOnly = TransportSettings.defaults().withIoThreads(1)
                .withCredentials(Credentials.NONE.withToken(Role.ADMIN, "admin-secret"));
        TransportServer server = new TransportServer("guarded", adminOnly);
        resources.add(server);
        assertThatThrownBy(() -> server.start("0.0.0.0", 0))
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS))
                .hasMessageContaining("server guarded refuses to listen on 0.0.0.0:0")
                .hasMessageContaining("the client and node roles are open to anyone")
                .hasMessageContaining("transport.client-token, transport.node-token")
                .hasMessageContaining("--insecure");
        // a host that does not resolve is said to be one, not blamed on missing credentials
        assertThatThrownBy(() -> ProtectedMode.check("guarded", "nosuchhost.invalid", 0, adminOnly))
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS))
                .hasMessageContaining("cannot listen on nosuchhost.invalid:0: the host does not resolve")
                .hasMessageNotContaining("--insecure");
        TransportServer everyRole = new TransportServer("guarded", adminOnly.withCredentials(ROLES));
        resources.add(everyRole);
        everyRole.start("0.0.0.0", 0);
        assertThat(everyRole.localAddress().getPort()).isPositive();
    }

    @Test
    void credentialsNeverPrintTheirTokens() {
        assertThat(ROLES.toString()).doesNotContain("secret").contains("client=***");
        assertThat(TransportSettings.defaults().withCredentials(ROLES).toString()).doesNotContain("secret");
        assertThat(ROLES.presentingAs(Role.NODE).presentedToken()).isEqualTo("node-secret");
        assertThat(Credentials.NONE.withAuthToken("shared").presentingAs(Role.ADMIN).presentedToken()).isEqualTo("shared");
        assertThat(ROLES.tokenKeyOf(Role.ADMIN)).isEqualTo("transport.admin-token");
        assertThat(Credentials.NONE.withAuthToken("shared").tokenKeyOf(Role.ADMIN)).isEqualTo("transport.auth-token");
    }
}
