package io.tiffin.core.coordination;

/**
 * Where a master keeps the few cluster facts a successor needs (its term, the mounted segments, where versions
 * continue): a znode of the coordination service, or a file in {@code master.state-dir}. Every write is a
 * compare-and-set on the version read or written last, so a deposed leader's write fails instead of undoing its
 * successor's.
 *
 * <p>Implementations are thread-safe.
 */
public interface StateStore extends AutoCloseable {
    /**
     * The stored bytes and their version.
     *
     * <p>Thread-safe (the array is the caller's).
     *
     * @param data empty when nothing was stored yet
     * @param version pass to {@link #write}; -1 when nothing was stored yet
     */
    record Snapshot(byte[] data, long version) {
    }

    /** Reads the facts. */
    Snapshot read();

    /**
     * Stores {@code data} if the stored version is still {@code expectedVersion}; returns the new version.
     *
     * @throws StateConflictException when another master wrote meanwhile
     */
    long write(byte[] data, long expectedVersion);

    @Override
    void close();
}
