package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The roles each opcode serves ({@link OpcodeRoles}): every opcode decided, and the rules of issue 21. */
class OpcodeRolesTest {
    @Test
    void everyOpcodeNamesItsRoles() {
        // a new opcode is the admin's alone until this class names its roles: decide, then list it there
        for (Opcode op : Opcode.values()) {
            assertThat(OpcodeRoles.declared(op)).as("OpcodeRoles names no roles for " + op).isNotNull().isNotEmpty();
        }
    }

    @Test
    void aClientCannotActAsANodeNorANodeRemoveKeys() {
        for (Opcode op : List.of(Opcode.PING, Opcode.MOUNT_SEGMENT, Opcode.REMOUNT_SEGMENT, Opcode.UNMOUNT_SEGMENT,
                Opcode.REGISTER_STORAGE, Opcode.POLL_TASKS, Opcode.PROMOTION_START, Opcode.EVICT_DISK_REPLICA)) {
            assertThat(OpcodeRoles.of(op)).as(op.name()).doesNotContain(Role.CLIENT).contains(Role.NODE);
        }
        for (Opcode op : List.of(Opcode.REMOVE, Opcode.BATCH_REMOVE, Opcode.REMOVE_BY_REGEX, Opcode.REMOVE_ALL,
                Opcode.PUT_START, Opcode.GET_REPLICA_LIST, Opcode.LIST_KEYS)) {
            assertThat(OpcodeRoles.of(op)).as(op.name()).doesNotContain(Role.NODE);
        }
        assertThat(OpcodeRoles.of(Opcode.REMOVE_ALL)).containsExactly(Role.ADMIN);
        assertThat(OpcodeRoles.of(Opcode.DATA_WRITE)).containsExactlyInAnyOrder(Role.CLIENT, Role.NODE);
        assertThat(OpcodeRoles.of(Opcode.SERVICE_READY)).containsExactlyInAnyOrder(Role.values());
    }
}
