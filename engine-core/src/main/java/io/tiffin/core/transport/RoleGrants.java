package io.tiffin.core.transport;

import java.security.MessageDigest;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A server's side of {@link Credentials}: which roles a HELLO's token and the connection's client
 * certificate prove. A peer holds the roles whose token it presents, those its certificate's common name is
 * listed for, and the open ones; a peer that proves no role while none is open is refused. Tokens are
 * compared as SHA-256 digests in constant time, every accepted token of every role each time (a role accepts
 * several during a rotation: {@link Credentials#acceptedTokensOf}).
 *
 * <p>A server keeps one instance per {@link Credentials#current} value: a new one is made when a tokens file
 * changes ({@link #of}).
 *
 * <p>Thread-safe (immutable after construction).
 */
final class RoleGrants {
    /** Digests of each role's accepted tokens; absent = the role is open. */
    private final Map<Role, List<byte[]>> digests = new EnumMap<>(Role.class);
    private final Set<Role> open;
    private final Credentials credentials;

    RoleGrants(Credentials credentials) {
        this.credentials = credentials;
        for (Role r : Role.values()) {
            List<String> tokens = credentials.acceptedTokensOf(r);
            if (!tokens.isEmpty()) {
                digests.put(r, tokens.stream().map(ServerConnection::sha256).toList());
            }
        }
        this.open = credentials.openRoles();
    }

    /** {@code last} if it is of {@code credentials} (the same instance), else new grants of them. */
    static RoleGrants of(Credentials credentials, RoleGrants last) {
        return last != null && last.credentials == credentials ? last : new RoleGrants(credentials);
    }

    /**
     * The roles a peer presenting {@code token} holds, with a verified client certificate of common name
     * {@code commonName} (null = none); empty = refuse it.
     */
    Set<Role> grant(String token, String commonName) {
        EnumSet<Role> roles = EnumSet.noneOf(Role.class);
        roles.addAll(open);
        roles.addAll(credentials.rolesOfCertificate(commonName));
        byte[] presented = ServerConnection.sha256(token);
        for (Map.Entry<Role, List<byte[]>> e : digests.entrySet()) {
            for (byte[] accepted : e.getValue()) {
                if (MessageDigest.isEqual(accepted, presented) && !token.isEmpty()) {
                    roles.add(e.getKey());
                }
            }
        }
        return roles;
    }

    /**
     * The node a peer may act for by its certificate: the common name, when the certificate proves the
     * node role (a node's certificate names its node id); null otherwise.
     */
    String nodeOfCertificate(String commonName) {
        return commonName != null && credentials.rolesOfCertificate(commonName).contains(Role.NODE) ? commonName : null;
    }

    /** Whether every role is open (no token configured). */
    boolean allOpen() {
        return digests.isEmpty();
    }
}
