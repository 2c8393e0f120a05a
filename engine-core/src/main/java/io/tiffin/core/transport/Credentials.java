package io.tiffin.core.transport;

import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * The tokens of a process: what its servers accept, per {@link Role}, and which one its own connections
 * present in their HELLO. A role's token is its own key ({@code transport.client-token},
 * {@code transport.node-token}, {@code transport.admin-token}) when set, else the shared
 * {@code transport.auth-token} (the one token of earlier versions: alone, it grants every role, as
 * before). A role whose token is empty either way is open: every peer holds it. With no token at all every
 * role is open, which is the behaviour without authentication.
 *
 * <p>Thread-safe (immutable); holds no buffers. {@link #toString} never prints a token.
 *
 * @param authToken the shared token, for every role without a token of its own; empty = none
 * @param clientToken the client role's token; empty = the shared token
 * @param nodeToken the node role's token; empty = the shared token
 * @param adminToken the admin role's token; empty = the shared token
 * @param presentAs the role whose token this process's connections present: {@link Role#CLIENT} for the
 *     client library, {@link Role#NODE} for a node, {@link Role#ADMIN} for administrative commands
 */
public record Credentials(String authToken, String clientToken, String nodeToken, String adminToken, Role presentAs) {

    /** No token: every role open; connections present none. */
    public static final Credentials NONE = new Credentials("", "", "", "", Role.CLIENT);

    public Credentials {
        Objects.requireNonNull(authToken, "authToken (use \"\" for none)");
        Objects.requireNonNull(clientToken, "clientToken (use \"\" for none)");
        Objects.requireNonNull(nodeToken, "nodeToken (use \"\" for none)");
        Objects.requireNonNull(adminToken, "adminToken (use \"\" for none)");
        Objects.requireNonNull(presentAs, "presentAs");
    }

    /** The token that proves {@code role}: its own, else the shared one; empty = the role is open. */
    public String tokenOf(Role role) {
        String own = ownToken(role);
        return own.isEmpty() ? authToken : own;
    }

    private String ownToken(Role role) {
        return switch (role) {
            case CLIENT -> clientToken;
            case NODE -> nodeToken;
            case ADMIN -> adminToken;
        };
    }

    /**
     * The token this process's connections present: {@link #tokenOf} its {@link #presentAs} role, or, when
     * that is empty, the client role's (so that a command needing a role whose token is not configured
     * here is told which token it lacks by the request's refusal, instead of failing the handshake).
     */
    public String presentedToken() {
        String own = tokenOf(presentAs);
        return own.isEmpty() ? tokenOf(Role.CLIENT) : own;
    }

    /** The configuration key {@link #tokenOf} takes {@code role}'s token from, for messages. */
    public String tokenKeyOf(Role role) {
        return ownToken(role).isEmpty() ? "transport.auth-token" : role.tokenKey();
    }

    /** Whether any token is set: peers must prove at least one role. */
    public boolean any() {
        return !authToken.isEmpty() || !clientToken.isEmpty() || !nodeToken.isEmpty() || !adminToken.isEmpty();
    }

    /** Whether a role token is set (so roles differ), as opposed to the shared token alone or none. */
    public boolean hasRoleTokens() {
        return !clientToken.isEmpty() || !nodeToken.isEmpty() || !adminToken.isEmpty();
    }

    /** The roles every peer holds, token or not. */
    public Set<Role> openRoles() {
        EnumSet<Role> open = EnumSet.noneOf(Role.class);
        for (Role r : Role.values()) {
            if (tokenOf(r).isEmpty()) {
                open.add(r);
            }
        }
        return open;
    }

    /** The shared token set to {@code value}. */
    public Credentials withAuthToken(String value) {
        return new Credentials(value, clientToken, nodeToken, adminToken, presentAs);
    }

    /** {@code role}'s own token set to {@code value}. */
    public Credentials withToken(Role role, String value) {
        return switch (role) {
            case CLIENT -> new Credentials(authToken, value, nodeToken, adminToken, presentAs);
            case NODE -> new Credentials(authToken, clientToken, value, adminToken, presentAs);
            case ADMIN -> new Credentials(authToken, clientToken, nodeToken, value, presentAs);
        };
    }

    /** The same tokens, presenting {@code role}'s. */
    public Credentials presentingAs(Role role) {
        return new Credentials(authToken, clientToken, nodeToken, adminToken, role);
    }

    @Override
    public String toString() {
        return "Credentials[auth=" + mask(authToken) + ", client=" + mask(clientToken) + ", node=" + mask(nodeToken)
                + ", admin=" + mask(adminToken) + ", presents=" + presentAs.label() + "]";
    }

    private static String mask(String token) {
        return token.isEmpty() ? "none" : "***";
    }
}
