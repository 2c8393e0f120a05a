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
 * Who may use the admin HTTP endpoints: whoever holds the admin role, by the rule of the master's and nodes' RPC
 * ports. Bound to loopback, anyone on this host may. Bound beyond it, a request must carry {@code Authorization:
 * Bearer <token>} with the admin role's token ({@code transport.admin-token}, else the shared {@code
 * transport.auth-token}; with {@code transport.tokens-file} every admin token of the file at the moment of the
 * request), or come over a connection whose verified client certificate's common name is one of {@code
 * transport.tls.admin-names}. When the admin role has neither a token nor certificate names and the server demands a
 * verified client certificate of every connection (mutual TLS), that certificate is the credential: the RPC ports
 * grant such a peer the admin role too.
 *
 * <p>Thread-safe (immutable; the tokens of the moment come from thread-safe {@link Credentials}).
 */
public final class AdminAccess {
    /** The admin tokens a request may carry at the moment; null when no token opens the endpoints. */
    private final Supplier<List<String>> tokens;
    /** Every request is let in (loopback, or --insecure with no credential at all). */
    private final boolean open;
    /** Every verified client certificate is let in (mutual TLS required; the admin role has no other credential). */
    private final boolean anyCertificate;
    /** The credentials whose certificate names ({@code transport.tls.admin-names}) let a request in; null = none. */
    private final Credentials namedCertificates;
    private final String rule;
    /** The key of the token requests must carry, for the answer to those that do not. */
    private final String tokenKey;

    private AdminAccess(Supplier<List<String>> tokens, boolean open, boolean anyCertificate,
                        Credentials namedCertificates, String rule, String tokenKey) {
        this.tokens = tokens;
        this.open = open;
        this.anyCertificate = anyCertificate;
        this.namedCertificates = namedCertificates;
        this.rule = rule;
        this.tokenKey = tokenKey;
    }

    /** The access of an admin server bound to {@code host} in a process with {@code transport}'s credentials. */
    public static AdminAccess of(String host, TransportSettings transport) {
        Credentials c = transport.credentials();
        String tokenKey = c.tokenKeyOf(Role.ADMIN);
        if (ProtectedMode.isLoopback(host)) {
            return new AdminAccess(null, true, false, null, "open to this host (bound to loopback)", tokenKey);
        }
        Supplier<List<String>> tokens = null;
        if (c.tokensFile() != null && !c.current().tokenOf(Role.ADMIN).isEmpty()) {
            tokens = () -> c.current().acceptedTokensOf(Role.ADMIN);
        } else if (!c.tokenOf(Role.ADMIN).isEmpty()) {
            List<String> only = List.of(c.tokenOf(Role.ADMIN));
            tokens = () -> only;
        }
        boolean names = transport.tls().enabled() && transport.tls().clientAuth()
                != io.tiffin.core.transport.TlsSettings.ClientAuth.NONE && c.certificateNames().containsKey(Role.ADMIN);
        boolean anyCertificate = tokens == null && !names && transport.tls().requiresClientCertificates();
        StringBuilder rule = new StringBuilder();
        if (tokens != null) {
            rule.append("Authorization: Bearer <").append(tokenKey).append("> required");
        }
        if (names) {
            rule.append(rule.isEmpty() ? "" : ", or ").append("a client certificate named in transport.tls.admin-names");
        }
        if (anyCertificate) {
            rule.append("open to clients with a verified certificate (mutual TLS)");
        }
        boolean open = tokens == null && !names && !anyCertificate;
        if (open) {
            rule.append("OPEN TO ANYONE (--insecure)");
        }
        return new AdminAccess(tokens, open, anyCertificate, names ? c : null, rule.toString(), tokenKey);
    }

    /**
     * Whether a request with this {@code Authorization} header (null = none), over a connection whose verified
     * client certificate has the common name {@code certificateName} (null = none), may use the endpoints.
     */
    public boolean permits(String authorization, String certificateName) {
        if (open) {
            return true;
        }
        if (certificateName != null && (anyCertificate || namedCertificates != null
                && namedCertificates.rolesOfCertificate(certificateName).contains(Role.ADMIN))) {
            return true;
        }
        if (tokens == null || authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
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
        if (tokens == null) {
            return "this admin endpoint needs a client certificate whose common name is one of"
                    + " transport.tls.admin-names, the admin role's certificates";
        }
        return "this admin endpoint needs the header Authorization: Bearer <" + tokenKey + ">, the admin role's token"
                + (namedCertificates == null ? "" : ", or a client certificate named in transport.tls.admin-names");
    }

    /** Whether requests must carry a credential of the admin role (a token or a named certificate). */
    public boolean needsToken() {
        return !open && !anyCertificate;
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
