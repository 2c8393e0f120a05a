package io.tiffin.api;

/** Life cycle of one replica. Wire values follow Mooncake Store's {@code ReplicaStatus}. Thread-safe (immutable). */
public enum ReplicaStatus {
    UNDEFINED,
    INITIALIZED,
    /** Allocated; the write is in flight. Not readable. */
    PROCESSING,
    /** Written and readable. */
    COMPLETE,
    REMOVED,
    FAILED;

    public static ReplicaStatus fromValue(int value) {
        ReplicaStatus[] all = values();
        if (value < 0 || value >= all.length) {
            throw new IllegalArgumentException("unknown replica status " + value);
        }
        return all[value];
    }
}
