package io.tiffin.core.transport;

/**
 * Operation codes of the wire protocol. The numbers are on the wire and never change. Master RPCs are
 * below 100, node data-plane operations from 100.
 *
 * <p>Thread-safe (immutable).
 */
public enum Opcode {
    HELLO(1),
    SERVICE_READY(2),
    PING(3),
    MOUNT_SEGMENT(4),
    REMOUNT_SEGMENT(5),
    UNMOUNT_SEGMENT(6),
    /** A node joins a master that restored its segment, reporting what it holds (failover). */
    ATTACH_SEGMENT(7),

    PUT_START(10),
    PUT_END(11),
    PUT_REVOKE(12),
    BATCH_PUT_START(13),
    BATCH_PUT_END(14),
    BATCH_PUT_REVOKE(15),

    GET_REPLICA_LIST(20),
    BATCH_GET_REPLICA_LIST(21),
    GET_REPLICA_LIST_BY_REGEX(22),
    EXIST_KEY(23),
    BATCH_EXIST_KEY(24),

    REMOVE(30),
    BATCH_REMOVE(31),
    REMOVE_BY_REGEX(32),
    REMOVE_ALL(33),

    LIST_KEYS(40),
    STATS(41),
    CLIENT_REPORT(42),

    REGISTER_STORAGE(50),
    REPORT_DISK_OBJECTS(51),
    POLL_TASKS(52),
    OFFLOAD_DONE(53),
    PROMOTION_START(54),
    PROMOTION_END(55),
    EVICT_DISK_REPLICA(56),

    DATA_READ(100),
    DATA_WRITE(101),
    DATA_READ_SSD(102),
    SEGMENT_INFO(103),
    /** Master to node: drop the records of freed objects before their space is reused (failover). */
    FORGET(104);

    private static final Opcode[] BY_CODE = new Opcode[256];

    static {
        for (Opcode op : values()) {
            BY_CODE[op.code] = op;
        }
    }

    private final int code;

    Opcode(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The opcode with this wire value, or null if unknown. */
    public static Opcode fromCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }

    /** Name used in metrics: lower case with underscores, e.g. {@code put_start}. */
    public String metricName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
