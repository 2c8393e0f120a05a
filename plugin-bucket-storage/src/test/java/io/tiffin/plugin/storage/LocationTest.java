package io.tiffin.plugin.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.spi.storage.ObjectStamp;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** The index entry's encoding: stamped entries round-trip, entries written before stamps still decode. */
class LocationTest {

    @Test
    void aStampedEntryRoundTrips() {
        Location loc = new Location(3, 8192, 1000, 0xCAFEBABE, new ObjectStamp(42, 1_700_000_000_000L));

        Location back = Location.decode(loc.encode());

        assertThat(back.bucketId()).isEqualTo(3);
        assertThat(back.offset()).isEqualTo(8192);
        assertThat(back.length()).isEqualTo(1000);
        assertThat(back.crc()).isEqualTo(0xCAFEBABE);
        assertThat(back.stamp()).isEqualTo(new ObjectStamp(42, 1_700_000_000_000L));
    }

    @Test
    void anEntryOfTheUnstampedFormatDecodesWithoutAStamp() {
        byte[] old = ByteBuffer.allocate(28).order(ByteOrder.LITTLE_ENDIAN).putLong(5).putLong(4096).putLong(77)
                .putInt(123).array();

        Location back = Location.decode(old);

        assertThat(back.bucketId()).isEqualTo(5);
        assertThat(back.length()).isEqualTo(77);
        assertThat(back.stamp()).isSameAs(ObjectStamp.NONE);
    }

    @Test
    void entriesOfOtherSizesOrWithNegativeStampsDoNotDecode() {
        assertThat(Location.decode(new byte[36])).isNull();
        byte[] negative = ByteBuffer.allocate(44).order(ByteOrder.LITTLE_ENDIAN).putLong(1).putLong(0).putLong(10)
                .putInt(0).putLong(-1).putLong(0).array();
        assertThat(Location.decode(negative)).isNull();
    }
}
