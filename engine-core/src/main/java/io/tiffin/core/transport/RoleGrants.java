package io.tiffin.core.transport;

import java.security.MessageDigest;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * A server's side of {@link Credentials}: which roles a HELLO's token proves. A peer holds the roles whose
 * token it presents plus the open ones (no token); a peer that proves no role while none is open is
 * refused. Tokens are compared as SHA-256 digests in constant time, every role's each time.
 *
 * <p>Thread-safe (immutable after construction).
 */
final class RoleGrants {
    /** Digest of each role's token; absent = the role is open. */
    private final Map<Role, byte[]> digests = new EnumMap<>(Role.class);
    private final Set<Role> open;

    RoleGrants(Credentials credentials) {
        for (Role r : Role.values()) {
            String token = credentials.tokenOf(r);
            if (!token.isEmpty()) {
                digests.put(r, ServerConnection.sha256(token));
            }
        }
        this.open = credentials.openRoles();
    }

    /** The roles a peer presenting {@code token} holds; empty = refuse it. */
    Set<Role> grant(String token) {
        EnumSet<Role> roles = EnumSet.noneOf(Role.class);
        roles.addAll(open);
        byte[] presented = ServerConnection.sha256(token);
        for (Map.Entry<Role, byte[]> e : digests.entrySet()) {
            if (MessageDigest.isEqual(e.getValue(), presented) && !token.isEmpty()) {
                roles.add(e.getKey());
            }
        }
        return roles;
    }

    /** Whether every role is open (no token configured). */
    boolean allOpen() {
        return digests.isEmpty();
    }
}
