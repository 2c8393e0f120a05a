package io.tiffin.plugin.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.spi.storage.ObjectStamp;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** The index entry's encoding: 28 bytes as in every release, the stamp apart, tied to the entry's bucket and offset. */
class LocationTest {

    @Test
    void anEntryAndItsStampRoundTrip() {
        Location loc = new Location(3, 8192, 1000, 0xCAFEBABE, new ObjectStamp(42, 1_700_000_000_000L));

        byte[] entry = loc.encode();
        Location back = Location.decode(entry).withStampEntry(loc.encodeStamp());

        assertThat(entry).hasSize(28);
        assertThat(back.bucketId()).isEqualTo(3);
        assertThat(back.offset()).isEqualTo(8192);
        assertThat(back.length()).isEqualTo(1000);
        assertThat(back.crc()).isEqualTo(0xCAFEBABE);
        assertThat(back.stamp()).isEqualTo(new ObjectStamp(42, 1_700_000_000_000L));
        assertThat(Location.decode(entry).stamp()).as("the entry alone").isSameAs(ObjectStamp.NONE);
    }

    @Test
    void aStampOfAnotherBucketOrOffsetIsNotTaken() {
        Location old = new Location(3, 8192, 1000, 1, new ObjectStamp(42, 5));
        Location rewritten = new Location(9, 0, 1000, 2, ObjectStamp.NONE);
        Location moved = new Location(3, 0, 1000, 2, ObjectStamp.NONE);

        assertThat(rewritten.withStampEntry(old.encodeStamp()).stamp()).isSameAs(ObjectStamp.NONE);
        assertThat(moved.withStampEntry(old.encodeStamp()).stamp()).isSameAs(ObjectStamp.NONE);
        assertThat(rewritten.withStampEntry(new byte[7]).stamp()).isSameAs(ObjectStamp.NONE);
    }

    @Test
    void entriesWithTheStampInsideStillDecode() {
        byte[] stamped = ByteBuffer.allocate(44).order(ByteOrder.LITTLE_ENDIAN).putLong(5).putLong(4096).putLong(77)
                .putInt(123).putLong(8).putLong(9).array();

        Location back = Location.decode(stamped);

        assertThat(back.bucketId()).isEqualTo(5);
        assertThat(back.length()).isEqualTo(77);
        assertThat(back.stamp()).isEqualTo(new ObjectStamp(8, 9));
    }

    @Test
    void entriesOfOtherSizesOrWithNegativeFieldsDoNotDecode() {
        assertThat(Location.decode(new byte[36])).isNull();
        byte[] negative = ByteBuffer.allocate(44).order(ByteOrder.LITTLE_ENDIAN).putLong(1).putLong(0).putLong(10)
                .putInt(0).putLong(-1).putLong(0).array();
        assertThat(Location.decode(negative)).isNull();
    }
}
