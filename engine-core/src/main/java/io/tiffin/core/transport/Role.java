package io.tiffin.core.transport;

import java.util.Locale;

/**
 * What a peer may do, proven by the token it presents in its HELLO ({@link Credentials}): each opcode
 * names the roles it serves ({@link OpcodeRoles}). {@link #ADMIN} may do everything.
 *
 * <p>Thread-safe (immutable).
 */
public enum Role {
    /** Puts, reads, lists and removes objects (no forced removal, no remove-all); the Java and Python clients. */
    CLIENT("transport.client-token"),
    /** Mounts its segments, heartbeats, runs the SSD tier's tasks, moves bytes between nodes; never removes keys. */
    NODE("transport.node-token"),
    /** Everything, also remove-all, forced removal, unmounting any node and the admin HTTP endpoints. */
    ADMIN("transport.admin-token");

    private final String tokenKey;

    Role(String tokenKey) {
        this.tokenKey = tokenKey;
    }

    /** The configuration key of this role's token. */
    public String tokenKey() {
        return tokenKey;
    }

    /** Lower case, as in messages and documentation: {@code client}, {@code node}, {@code admin}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
