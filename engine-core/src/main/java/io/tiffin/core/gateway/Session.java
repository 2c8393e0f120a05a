package io.tiffin.core.gateway;

/**
 * What one connection remembers between its commands: its id, protocol (2 or 3), name, library, whether it
 * has authenticated, whether it asked to be closed (QUIT), and where its key scan stands.
 *
 * <p>Thread-safe enough for its use: the fields are written by the one thread that runs the connection's
 * commands at a time; {@link #authenticated} and {@link #closing} are volatile because the event loop
 * reads them too.
 */
final class Session {
    private final long id;
    private final boolean passwordRequired;
    private final KeyScanner scanner;
    private int protocol = 2;
    private String name;
    private String libName;
    private String libVersion;
    private volatile boolean authenticated;
    private volatile boolean closing;

    Session(long id, boolean passwordRequired, GatewayStore store, MemoryBudget budget) {
        this.id = id;
        this.passwordRequired = passwordRequired;
        this.authenticated = !passwordRequired;
        this.scanner = new KeyScanner(store, budget);
    }

    long id() {
        return id;
    }

    int protocol() {
        return protocol;
    }

    void protocol(int p) {
        protocol = p;
    }

    /** The name CLIENT SETNAME gave; null when none. */
    String name() {
        return name;
    }

    void name(String n) {
        name = n == null || n.isEmpty() ? null : n;
    }

    String libName() {
        return libName;
    }

    void libName(String n) {
        libName = n;
    }

    String libVersion() {
        return libVersion;
    }

    void libVersion(String v) {
        libVersion = v;
    }

    boolean authenticated() {
        return authenticated;
    }

    void authenticated(boolean a) {
        authenticated = a;
    }

    /** Whether the connection is to be closed once the replies so far are written (QUIT). */
    boolean closing() {
        return closing;
    }

    void closeAfterReply() {
        closing = true;
    }

    KeyScanner scanner() {
        return scanner;
    }

    /** The connection is gone: the scan's listing is given up (and its memory counted no more). */
    void close() {
        scanner.reset();
    }

    /** RESET: RESP2, no name, not authenticated (when a password is required), no scan in progress. */
    void reset() {
        protocol = 2;
        name = null;
        libName = null;
        libVersion = null;
        authenticated = !passwordRequired;
        scanner.reset();
    }
}
