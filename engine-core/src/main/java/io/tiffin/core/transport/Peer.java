package io.tiffin.core.transport;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

/**
 * Who is on the other end of a server connection, as its handshake proved it: the roles its token grants
 * ({@link RoleGrants}), the peer id its HELLO declared, its address, and the node it speaks for once it
 * named one. Handlers reach it through {@link Frame#peer()} and ask it the questions that depend on a
 * request's content (a forced removal, another node's id, another writer's put); {@link OpcodeRoles}
 * answers the ones that depend on the opcode alone. Requests made in this JVM without a connection carry
 * {@link #IN_PROCESS}, which may do everything.
 *
 * <p>Thread-safe: immutable apart from the node binding, which is set once atomically (handlers of one
 * connection run on several threads), or before the peer is shared when its certificate names the node.
 */
public final class Peer {
    /** The caller of an in-process call: the same JVM, every role. */
    public static final Peer IN_PROCESS = new Peer(EnumSet.allOf(Role.class), "", "this process", false, "", false);

    private final Set<Role> roles;
    private final String id;
    private final String address;
    /** Whether {@link #id} came over a connection (and binds the writer identity). */
    private final boolean remote;
    /** SHA-256 (hex) of the peer key its HELLO presented ({@link PeerKeys}); "" = none. */
    private final String keyDigest;
    /** Its peer id is held by another process's connections (another peer key) on this server. */
    private final boolean idTaken;
    private final AtomicReference<String> node = new AtomicReference<>();
    /** Whether {@link #node} came from the client certificate (set before the peer is shared). */
    private boolean certified;

    private Peer(Set<Role> roles, String id, String address, boolean remote, String keyDigest, boolean idTaken) {
        this.keyDigest = keyDigest;
        this.idTaken = idTaken;
        this.roles = Collections.unmodifiableSet(EnumSet.copyOf(roles));
        this.id = id;
        this.address = address;
        this.remote = remote;
    }

    /**
     * A peer of a connection from {@code address} whose HELLO declared {@code id} and proved {@code roles};
     * {@code certifiedNode} is the node id its client certificate names (null = none), which it may then
     * act for alone; {@code keyDigest} the digest of its peer key ("" = none) and {@code idTaken} whether another
     * process's connections hold its peer id ({@link PeerKeys}).
     */
    static Peer connected(Set<Role> roles, String id, String address, String certifiedNode, String keyDigest,
                          boolean idTaken) {
        Peer p = new Peer(roles.isEmpty() ? EnumSet.noneOf(Role.class) : roles, id, address, true, keyDigest, idTaken);
        p.node.set(certifiedNode);
        p.certified = certifiedNode != null;
        return p;
    }

    /** The roles it holds; {@link Role#ADMIN} implies every permission. */
    public Set<Role> roles() {
        return roles;
    }

    /** Whether it holds {@code role} (an admin holds every role). */
    public boolean has(Role role) {
        return roles.contains(role) || roles.contains(Role.ADMIN);
    }

    /** The peer id its HELLO declared ({@code ""} if none; in-process: {@code ""}). */
    public String id() {
        return id;
    }

    /**
     * The digest of the peer key its HELLO presented ({@link PeerKeys}; "" = none, an older peer): which process
     * this connection belongs to. In-process: "".
     */
    public String keyDigest() {
        return keyDigest;
    }

    /** Whether the call came over a connection (not {@link #IN_PROCESS}). */
    public boolean remote() {
        return remote;
    }

    /** For messages: id, roles and address. */
    public String describe() {
        return (id.isEmpty() ? "a peer" : "peer " + id) + " from " + address + " (role " + rolesLabel() + ")";
    }

    private String rolesLabel() {
        return roles.isEmpty() ? "none" : roles.stream().map(Role::label).collect(Collectors.joining(", "));
    }

    /**
     * Refuses {@code what} unless this peer is an admin.
     *
     * @throws TiffinException {@code ILLEGAL_CLIENT} naming the token to present
     */
    public void requireAdmin(String what) {
        if (!roles.contains(Role.ADMIN)) {
            throw new TiffinException(ErrorCode.ILLEGAL_CLIENT, what + " needs the admin role, and this connection's"
                    + " token proves " + rolesLabel() + " (" + describe() + "); connect with the admin token"
                    + " (transport.admin-token)");
        }
    }

    /**
     * Lets this connection speak for node {@code nodeId}: the first node it names is the one it speaks for
     * from then on; naming another is refused unless it is an admin's connection.
     *
     * @param what the request, for the message (e.g. {@code "UNMOUNT_SEGMENT"})
     * @throws TiffinException {@code ILLEGAL_CLIENT} when it spoke for another node before
     */
    public void requireNode(String nodeId, String what) {
        if (roles.contains(Role.ADMIN)) {
            return;
        }
        String bound = node.compareAndExchange(null, nodeId);
        if (bound != null && !bound.equals(nodeId)) {
            throw new TiffinException(ErrorCode.ILLEGAL_CLIENT, what + " for node " + nodeId + " refused: this"
                    + " connection speaks for node " + bound + (certified ? " (its client certificate's common name)"
                    : "") + " (" + describe() + "); acting for another node, as unmounting it, needs the admin role"
                    + " (transport.admin-token)");
        }
    }

    /**
     * The writer identity of a put request that names {@code claimed} as its client id: the peer id of the
     * connection (its HELLO), which the request may repeat but not contradict; an admin's connection and an
     * in-process call may name any writer.
     *
     * @throws TiffinException {@code ILLEGAL_CLIENT} when the request names another writer
     */
    public String writer(String claimed) {
        if (!remote || roles.contains(Role.ADMIN) && !claimed.isEmpty()) {
            return claimed;
        }
        if (!claimed.isEmpty() && !claimed.equals(id)) {
            throw new TiffinException(ErrorCode.ILLEGAL_CLIENT, "a put request naming client " + claimed + " came"
                    + " on a connection whose HELLO declared peer id " + (id.isEmpty() ? "(none)" : id) + "; a"
                    + " connection writes as the peer id it declared (send the same id in HELLO and requests)");
        }
        if (idTaken && !roles.contains(Role.ADMIN)) {
            throw new TiffinException(ErrorCode.ILLEGAL_CLIENT, "peer id " + id + " is held by another process's"
                    + " connections (they presented another peer key in HELLO; this one's is "
                    + PeerKeys.fingerprint(keyDigest) + ", " + describe() + "); a connection may write as its peer id"
                    + " only while no other process holds it: give every client its own peer id");
        }
        return id;
    }

    @Override
    public String toString() {
        return describe();
    }
}
