package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.DataGrant;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The grant MAC: it verifies what it signed, and nothing with any signed field changed or under another key. */
class DataAccessMacTest {
    private final DataAccessMac mac = new DataAccessMac(DataAccessMac.newKey());

    @Test
    void aGrantVerifiesForExactlyWhatWasSigned() {
        DataGrant g = mac.sign("node-1-seg0-0a0b0c0d", 4096, 8192, DataGrant.READ, 3, 1_000_000);
        assertThat(g.ops()).isEqualTo(DataGrant.READ);
        assertThat(g.expiresAtMillis()).isEqualTo(1_000_000);
        assertThat(mac.verify("node-1-seg0-0a0b0c0d", 4096, 8192, 3, g)).isTrue();

        assertThat(mac.verify("node-2-seg0-0a0b0c0d", 4096, 8192, 3, g)).as("segment").isFalse();
        assertThat(mac.verify("node-1-seg0-0a0b0c0d", 4160, 8192, 3, g)).as("offset").isFalse();
        assertThat(mac.verify("node-1-seg0-0a0b0c0d", 4096, 8193, 3, g)).as("length").isFalse();
        assertThat(mac.verify("node-1-seg0-0a0b0c0d", 4096, 8192, 4, g)).as("mount epoch").isFalse();
        assertThat(mac.verify("node-1-seg0-0a0b0c0d", 4096, 8192, 3,
                new DataGrant(DataGrant.READ | DataGrant.WRITE, g.expiresAtMillis(), g.macHigh(), g.macLow())))
                .as("operations").isFalse();
        assertThat(mac.verify("node-1-seg0-0a0b0c0d", 4096, 8192, 3,
                new DataGrant(g.ops(), g.expiresAtMillis() + 1, g.macHigh(), g.macLow()))).as("expiry").isFalse();
        assertThat(mac.verify("node-1-seg0-0a0b0c0d", 4096, 8192, 3,
                new DataGrant(g.ops(), g.expiresAtMillis(), g.macHigh(), g.macLow() ^ 1))).as("MAC bit").isFalse();
        assertThat(new DataAccessMac(DataAccessMac.newKey()).verify("node-1-seg0-0a0b0c0d", 4096, 8192, 3, g))
                .as("another key").isFalse();
    }

    @Test
    void fieldsDoNotRunIntoEachOther() {
        // the name is length-prefixed: moving bytes between the name and the numbers changes the MAC
        Set<String> macs = new HashSet<>();
        for (String segment : new String[] {"a", "a\0", "\0a", ""}) {
            for (long offset : new long[] {0, 1, 1L << 32}) {
                DataGrant g = mac.sign(segment, offset, 0, DataGrant.WRITE, 1, 5);
                macs.add(g.macHigh() + ":" + g.macLow());
            }
        }
        assertThat(macs).hasSize(12);
    }

    @Test
    void keysAreRandomAndShortOnesRefused() {
        assertThat(DataAccessMac.newKey()).hasSize(DataAccessMac.KEY_BYTES).isNotEqualTo(DataAccessMac.newKey());
        assertThatThrownBy(() -> new DataAccessMac(new byte[15])).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("15 bytes; at least 16");
    }
}
