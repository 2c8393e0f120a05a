package io.tiffin.core.transport;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The credentials of a process: what its servers accept as proof of each {@link Role}, and which token its
 * own connections present in their HELLO. A role's token is its own key ({@code transport.client-token},
 * {@code transport.node-token}, {@code transport.admin-token}) when set, else the shared
 * {@code transport.auth-token} (the one token of earlier versions: alone, it grants every role, as
 * before). With mutual TLS a verified client certificate whose common name is one of a role's
 * {@code transport.tls.<role>-names} proves that role too. A role with no token and no names is open: every
 * peer holds it. With no credential at all every role is open, which is the behaviour without
 * authentication.
 *
 * <p>With {@code transport.tokens-file} the tokens come from that file ({@link TokensFile}), which may change while
 * the process runs: users ask {@link #current} for the tokens of the moment before each connection they make or
 * accept.
 *
 * <p>Thread-safe (immutable; a {@link TokensFile} is thread-safe); holds no buffers. {@link #toString} never prints a
 * token.
 *
 * @param authToken the shared token, for every role without a token of its own; empty = none
 * @param clientToken the client role's token; empty = the shared token
 * @param nodeToken the node role's token; empty = the shared token
 * @param adminToken the admin role's token; empty = the shared token
 * @param presentAs the role whose token this process's connections present: {@link Role#CLIENT} for the
 *     client library, {@link Role#NODE} for a node, {@link Role#ADMIN} for administrative commands
 * @param certificateNames per role, the client-certificate common names that prove it: exact names, or a
 *     prefix ending in {@code *} ({@code node-*}); a role absent or with no names has none
 * @param alsoAccepted per role, tokens servers accept besides {@link #tokenOf} it (a rotation's other tokens, from a
 *     {@link TokensFile})
 * @param tokensFile where the tokens come from, or null: these tokens are the configuration's
 */
public record Credentials(String authToken, String clientToken, String nodeToken, String adminToken, Role presentAs,
                          Map<Role, List<String>> certificateNames, Map<Role, List<String>> alsoAccepted,
                          TokensFile tokensFile) {

    /** No token: every role open; connections present none. */
    public static final Credentials NONE = new Credentials("", "", "", "", Role.CLIENT, Map.of());

    public Credentials {
        Objects.requireNonNull(authToken, "authToken (use \"\" for none)");
        Objects.requireNonNull(clientToken, "clientToken (use \"\" for none)");
        Objects.requireNonNull(nodeToken, "nodeToken (use \"\" for none)");
        Objects.requireNonNull(adminToken, "adminToken (use \"\" for none)");
        Objects.requireNonNull(presentAs, "presentAs");
        EnumMap<Role, List<String>> names = new EnumMap<>(Role.class);
        Objects.requireNonNull(certificateNames, "certificateNames").forEach((role, list) -> {
            for (String n : list) {
                if (n.isBlank() || n.indexOf('*') >= 0 && n.indexOf('*') != n.length() - 1) {
                    throw new IllegalArgumentException("transport.tls." + role.label() + "-names: '" + n + "' is not a"
                            + " certificate common name (expected a name, or a prefix ending in *, e.g. node-*)");
                }
            }
            if (!list.isEmpty()) {
                names.put(role, List.copyOf(list));
            }
        });
        certificateNames = Collections.unmodifiableMap(names);
        EnumMap<Role, List<String>> also = new EnumMap<>(Role.class);
        Objects.requireNonNull(alsoAccepted, "alsoAccepted").forEach((role, list) -> {
            if (!list.isEmpty()) {
                also.put(role, List.copyOf(list));
            }
        });
        alsoAccepted = Collections.unmodifiableMap(also);
    }

    /** Tokens and certificate names, from the configuration alone. */
    public Credentials(String authToken, String clientToken, String nodeToken, String adminToken, Role presentAs,
                       Map<Role, List<String>> certificateNames) {
        this(authToken, clientToken, nodeToken, adminToken, presentAs, certificateNames, Map.of(), null);
    }

    /** The as-before constructor: tokens only, no certificate names. */
    public Credentials(String authToken, String clientToken, String nodeToken, String adminToken, Role presentAs) {
        this(authToken, clientToken, nodeToken, adminToken, presentAs, Map.of());
    }

    /** The roles a client certificate with common name {@code commonName} proves (none for null). */
    public Set<Role> rolesOfCertificate(String commonName) {
        EnumSet<Role> roles = EnumSet.noneOf(Role.class);
        if (commonName == null) {
            return roles;
        }
        certificateNames.forEach((role, names) -> {
            for (String n : names) {
                if (n.endsWith("*") ? commonName.startsWith(n.substring(0, n.length() - 1)) : commonName.equals(n)) {
                    roles.add(role);
                }
            }
        });
        return roles;
    }

    /**
     * The credentials of the moment: these, or with a {@link TokensFile} the tokens it read last (it looks at the
     * file on a schedule of its own). Never blocks.
     */
    public Credentials current() {
        return tokensFile == null ? this : tokensFile.apply(this);
    }

    /** The token that proves {@code role}: its own, else the shared one; empty = the role is open. */
    public String tokenOf(Role role) {
        String own = ownTokenOf(role);
        return own.isEmpty() ? authToken : own;
    }

    /** Every token that proves {@code role}: {@link #tokenOf} it first, then the others accepted; empty = open. */
    public List<String> acceptedTokensOf(Role role) {
        String first = tokenOf(role);
        List<String> also = alsoAccepted.getOrDefault(role, List.of());
        if (first.isEmpty() || also.isEmpty()) {
            return first.isEmpty() ? List.of() : List.of(first);
        }
        List<String> all = new ArrayList<>(1 + also.size());
        all.add(first);
        all.addAll(also);
        return List.copyOf(all);
    }

    /** {@code role}'s own token, not the shared one; empty = none. */
    String ownTokenOf(Role role) {
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
        String source = tokensFile == null ? "" : " (or the tokens file)";
        return (ownTokenOf(role).isEmpty() ? "transport.auth-token" : role.tokenKey()) + source;
    }

    /** Whether any token or certificate name is set: peers must prove at least one role. */
    public boolean any() {
        return !authToken.isEmpty() || !clientToken.isEmpty() || !nodeToken.isEmpty() || !adminToken.isEmpty()
                || !certificateNames.isEmpty();
    }

    /** Whether a role token is set (so roles differ), as opposed to the shared token alone or none. */
    public boolean hasRoleTokens() {
        return !clientToken.isEmpty() || !nodeToken.isEmpty() || !adminToken.isEmpty();
    }

    /** The roles every peer holds, token or not: no token and no certificate names prove them. */
    public Set<Role> openRoles() {
        EnumSet<Role> open = EnumSet.noneOf(Role.class);
        for (Role r : Role.values()) {
            if (tokenOf(r).isEmpty() && !certificateNames.containsKey(r)) {
                open.add(r);
            }
        }
        return open;
    }

    /** The shared token set to {@code value}. */
    public Credentials withAuthToken(String value) {
        return new Credentials(value, clientToken, nodeToken, adminToken, presentAs, certificateNames, alsoAccepted,
                tokensFile);
    }

    /** {@code role}'s own token set to {@code value}. */
    public Credentials withToken(Role role, String value) {
        return switch (role) {
            case CLIENT -> new Credentials(authToken, value, nodeToken, adminToken, presentAs, certificateNames,
                    alsoAccepted, tokensFile);
            case NODE -> new Credentials(authToken, clientToken, value, adminToken, presentAs, certificateNames,
                    alsoAccepted, tokensFile);
            case ADMIN -> new Credentials(authToken, clientToken, nodeToken, value, presentAs, certificateNames,
                    alsoAccepted, tokensFile);
        };
    }

    /** {@code role}'s certificate names set to {@code names}. */
    public Credentials withCertificateNames(Role role, List<String> names) {
        EnumMap<Role, List<String>> m = new EnumMap<>(Role.class);
        m.putAll(certificateNames);
        m.put(role, names);
        return new Credentials(authToken, clientToken, nodeToken, adminToken, presentAs, m, alsoAccepted, tokensFile);
    }

    /** The same tokens, presenting {@code role}'s. */
    public Credentials presentingAs(Role role) {
        return new Credentials(authToken, clientToken, nodeToken, adminToken, role, certificateNames, alsoAccepted,
                tokensFile);
    }

    /** The tokens of {@code file} (read already, see {@link TokensFile#load}) in place of these, from now on. */
    public Credentials withTokensFile(TokensFile file) {
        return new Credentials(authToken, clientToken, nodeToken, adminToken, presentAs, certificateNames, alsoAccepted,
                file);
    }

    Credentials withoutTokensFile() {
        return new Credentials(authToken, clientToken, nodeToken, adminToken, presentAs, certificateNames, alsoAccepted,
                null);
    }

    Credentials withAlsoAccepted(Map<Role, List<String>> tokens) {
        return new Credentials(authToken, clientToken, nodeToken, adminToken, presentAs, certificateNames, tokens,
                tokensFile);
    }

    @Override
    public String toString() {
        return "Credentials[auth=" + mask(authToken) + ", client=" + mask(clientToken) + ", node=" + mask(nodeToken)
                + ", admin=" + mask(adminToken) + ", presents=" + presentAs.label()
                + (certificateNames.isEmpty() ? "" : ", certificateNames=" + certificateNames)
                + (alsoAccepted.isEmpty() ? "" : ", alsoAccepted=" + alsoAccepted.keySet())
                + (tokensFile == null ? "" : ", " + tokensFile) + "]";
    }

    private static String mask(String token) {
        return token.isEmpty() ? "none" : "***";
    }
}
