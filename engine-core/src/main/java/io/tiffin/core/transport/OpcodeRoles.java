package io.tiffin.core.transport;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The roles each opcode serves, checked by the server before any handler runs. An admin may use every
 * opcode. What depends on a request's content is the handler's to check through its {@link Peer}: a
 * forced removal by pattern needs the admin role, a node's connection speaks for one node, a put's writer is the
 * connection's peer id.
 *
 * <p>Thread-safe (stateless).
 */
public final class OpcodeRoles {
    private static final Set<Role> ANY = EnumSet.allOf(Role.class);
    private static final Set<Role> CLIENTS = EnumSet.of(Role.CLIENT);
    private static final Set<Role> NODES = EnumSet.of(Role.NODE);
    private static final Set<Role> DATA_PLANE = EnumSet.of(Role.CLIENT, Role.NODE);
    private static final Set<Role> ADMINS = EnumSet.of(Role.ADMIN);

    private OpcodeRoles() {
    }

    /**
     * The roles that may send {@code op} (besides the admin, who may send all). An opcode not listed
     * here is the admin's alone until someone decides: {@code OpcodeRolesTest} fails for it.
     */
    public static Set<Role> of(Opcode op) {
        Set<Role> roles = declared(op);
        return roles == null ? ADMINS : roles;
    }

    /** The roles this class names for {@code op}; null for an opcode it does not list. */
    static Set<Role> declared(Opcode op) {
        return switch (op) {
            case HELLO, SERVICE_READY -> ANY;
            // a node's membership: a client must not mount, unmount or heartbeat as a node
            case PING, MOUNT_SEGMENT, REMOUNT_SEGMENT, ATTACH_SEGMENT, UNMOUNT_SEGMENT -> NODES;
            // a master's instruction to a node (failover: drop the records of removed objects); masters
            // present the admin role to nodes
            case FORGET -> ADMINS;
            // a node never puts, reads, lists or removes keys
            case PUT_START, PUT_END, PUT_REVOKE, BATCH_PUT_START, BATCH_PUT_END, BATCH_PUT_REVOKE,
                 GET_REPLICA_LIST, BATCH_GET_REPLICA_LIST, GET_REPLICA_LIST_BY_REGEX, EXIST_KEY, BATCH_EXIST_KEY,
                 REMOVE, BATCH_REMOVE, REMOVE_BY_REGEX, LIST_KEYS, STATS, CLIENT_REPORT, EXPIRE -> CLIENTS;
            case REMOVE_ALL -> ADMINS;
            // the SSD tier: a node's reports and tasks
            case REGISTER_STORAGE, REPORT_DISK_OBJECTS, POLL_TASKS, OFFLOAD_DONE, PROMOTION_START, PROMOTION_END,
                 EVICT_DISK_REPLICA -> NODES;
            // bytes: clients read and write, nodes copy to each other (promotion)
            case DATA_READ, DATA_WRITE, DATA_READ_SSD, SEGMENT_INFO -> DATA_PLANE;
            default -> null;
        };
    }

    /** Whether one of {@code peer}'s roles may send {@code op}. */
    static boolean allows(Opcode op, Peer peer) {
        for (Role r : of(op)) {
            if (peer.has(r)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Refuses {@code op} from {@code peer} unless one of its roles may send it.
     *
     * @throws TiffinException {@code ILLEGAL_CLIENT} naming the roles that may and the token to present
     */
    static void check(Opcode op, Peer peer, String serverName) {
        if (allows(op, peer)) {
            return;
        }
        Set<Role> allowed = of(op);
        Role wanted = allowed.contains(Role.CLIENT) ? Role.CLIENT : allowed.contains(Role.NODE) ? Role.NODE : Role.ADMIN;
        throw new TiffinException(ErrorCode.ILLEGAL_CLIENT, "server " + serverName + " refuses " + op + " from "
                + peer.describe() + ": " + op + " needs the " + allowed.stream().map(Role::label)
                .collect(Collectors.joining(" or ")) + (allowed.contains(Role.ADMIN) ? "" : " or admin") + " role;"
                + " connect with " + wanted.tokenKey());
    }
}
