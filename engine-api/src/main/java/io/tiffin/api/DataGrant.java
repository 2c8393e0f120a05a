package io.tiffin.api;

/**
 * The master's signed permission, carried by a {@link ReplicaDescriptor}, to read or write that replica's bytes
 * on its node until {@code expiresAtMillis}: a MAC under a key shared by the master and the node over the
 * segment, the replica's offset and size, the operations, the mount epoch and the expiry. A node refuses
 * {@code DATA_READ} / {@code DATA_WRITE} requests whose grant is missing, altered, expired, of another operation
 * or outside the granted range (docs/SECURITY.md, "Data-plane access").
 *
 * <p>Thread-safe (immutable).
 *
 * @param ops {@link #READ}, {@link #WRITE} or both
 * @param expiresAtMillis the master's clock ({@code Ticker.millis}) from which the node refuses it
 * @param macHigh first 64 bits of the MAC
 * @param macLow next 64 bits of the MAC
 */
public record DataGrant(int ops, long expiresAtMillis, long macHigh, long macLow) {
    /** The grant allows reading the replica. */
    public static final int READ = 1;
    /** The grant allows writing the replica. */
    public static final int WRITE = 2;

    /** Whether the grant allows every operation of {@code op} ({@link #READ}, {@link #WRITE}). */
    public boolean allows(int op) {
        return (ops & op) == op;
    }
}
