package io.tiffin.core.metrics;

import io.tiffin.core.transport.Credentials;
import io.tiffin.core.transport.ProtectedMode;
import io.tiffin.core.transport.Role;
import io.tiffin.core.transport.TransportSettings;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.function.Supplier;

/**
 * Who may use the admin HTTP endpoints. Bound to loopback, anyone on this host may; bound beyond it, a
 * request must carry {@code Authorization: Bearer <token>} with the admin role's token
 * ({@code transport.admin-token}, else the shared {@code transport.auth-token}), unless the server demands a
 * verified client certificate of every connection (mutual TLS), which is the credential then. With {@code
 * transport.tokens-file} every admin token of the file at the moment of the request is accepted.
 *
 * <p>Thread-safe (immutable; the tokens of the moment come from thread-safe {@link Credentials}).
 */
public final class AdminAccess {
    /** The admin tokens a request may carry at the moment; null when every request is let in. */
    private final Supplier<List<String>> tokens;
    private final String rule;
    /** The key of the token requests must carry, for the answer to those that do not. */
    private final String tokenKey;

    private AdminAccess(Supplier<List<String>> tokens, String rule, String tokenKey) {
        this.tokens = tokens;
        this.rule = rule;
        this.tokenKey = tokenKey;
    }

    /** The access of an admin server bound to {@code host} in a process with {@code transport}'s credentials. */
    public static AdminAccess of(String host, TransportSettings transport) {
        Credentials c = transport.credentials();
        if (c.tokensFile() != null && !ProtectedMode.isLoopback(host) && !c.current().tokenOf(Role.ADMIN).isEmpty()) {
            return new AdminAccess(() -> c.current().acceptedTokensOf(Role.ADMIN), "Authorization: Bearer <"
                    + c.tokenKeyOf(Role.ADMIN) + "> required", c.tokenKeyOf(Role.ADMIN));
        }
        return forBinding(host, c.tokenOf(Role.ADMIN), c.tokenKeyOf(Role.ADMIN),
                transport.tls().requiresClientCertificates());
    }

    /**
     * The access of an admin server bound to {@code host}, whose admin credential is {@code adminToken}
     * (empty = none) from configuration key {@code tokenKey}, and whose TLS layer does or does not demand
     * client certificates.
     */
    public static AdminAccess forBinding(String host, String adminToken, String tokenKey,
                                         boolean clientCertificatesRequired) {
        if (ProtectedMode.isLoopback(host)) {
            return new AdminAccess(null, "open to this host (bound to loopback)", tokenKey);
        }
        if (!adminToken.isEmpty()) {
            List<String> only = List.of(adminToken);
            return new AdminAccess(() -> only, "Authorization: Bearer <" + tokenKey + "> required", tokenKey);
        }
        if (clientCertificatesRequired) {
            return new AdminAccess(null, "open to clients with a verified certificate (mutual TLS)", tokenKey);
        }
        return new AdminAccess(null, "OPEN TO ANYONE (--insecure)", tokenKey);
    }

    /** Whether a request with this {@code Authorization} header (null = none) may use the endpoints. */
    public boolean permits(String authorization) {
        if (tokens == null) {
            return true;
        }
        if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return false;
        }
        byte[] given = sha256(authorization.substring(7).strip());
        boolean match = false;
        for (String t : tokens.get()) { // every one compared, in constant time each
            match |= MessageDigest.isEqual(sha256(t), given);
        }
        return match;
    }

    /** What a refused request is told. */
    public String refusal() {
        return "this admin endpoint needs the header Authorization: Bearer <" + tokenKey + ">, the admin role's token";
    }

    /** Whether requests must carry the token. */
    public boolean needsToken() {
        return tokens != null;
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JVM lacks SHA-256, which every Java platform must provide", e);
        }
    }

    @Override
    public String toString() {
        return rule;
    }
}
