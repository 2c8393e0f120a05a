package io.tiffin.api;

/** Where a replica's bytes live. Wire values follow Mooncake Store's {@code ReplicaType}. Thread-safe (immutable). */
public enum ReplicaType {
    /** In a node's memory segment. */
    MEMORY(0),
    /** On a node's SSD tier, served by that node. */
    LOCAL_DISK(2);

    private final int value;

    ReplicaType(int value) {
        this.value = value;
    }

    public int value() {
        return value;
    }

    public static ReplicaType fromValue(int value) {
        for (ReplicaType t : values()) {
            if (t.value == value) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown replica type " + value);
    }
}
