package io.tiffin.plugin.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.spi.storage.ObjectStamp;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;

/**
 * The index as a build that predates stamps sees it: every object entry in the 28-byte format, stamps under keys no
 * UTF-8 string makes. And what such a build leaves behind (an object written again elsewhere, an object removed
 * without its stamp) gives no wrong stamp when stamps are read again.
 */
class BucketIndexTest {
    @TempDir
    Path dir;

    private static Map<String, Location> read(BucketIndex index) {
        Map<String, Location> all = new LinkedHashMap<>();
        index.forEach(all::put);
        return all;
    }

    @Test
    void objectEntriesKeepTheFormatOfEveryReleaseAndStampsLieApart() throws Exception {
        try (BucketIndex index = BucketIndex.open(dir)) {
            index.write(Map.of("a", new Location(1, 0, 100, 7, new ObjectStamp(5, 1_000)),
                    "b", new Location(1, 4096, 100, 8, ObjectStamp.NONE)), List.of());
        }
        Map<String, Integer> sizes = new LinkedHashMap<>();
        int stampEntries = 0;
        try (RocksDB db = RocksDB.openReadOnly(dir.toString()); RocksIterator it = db.newIterator()) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                if ((it.key()[0] & 0xFF) == 0xFF) {
                    stampEntries++;
                    assertThat(it.value()).hasSize(Location.STAMP_BYTES);
                } else {
                    sizes.put(new String(it.key(), StandardCharsets.UTF_8), it.value().length);
                }
            }
        }
        assertThat(sizes).isEqualTo(Map.of("a", 28, "b", 28));
        assertThat(stampEntries).as("one stamp entry, a's").isEqualTo(1);
    }

    @Test
    void whatABuildWithoutStampsChangedGivesNoStaleStamp() {
        try (BucketIndex index = BucketIndex.open(dir)) {
            index.write(Map.of("rewritten", new Location(1, 0, 100, 7, new ObjectStamp(5, 1_000)),
                    "removed", new Location(1, 4096, 100, 8, new ObjectStamp(6, 0)),
                    "kept", new Location(1, 8192, 100, 9, new ObjectStamp(7, 2_000)),
                    "zz-last", new Location(1, 12288, 100, 12, new ObjectStamp(8, 0))), List.of());
        }
        // an older build: writes "rewritten" again into a new bucket and removes "removed", touching no stamp
        try (RocksDB db = RocksDB.open(dir.toString())) {
            db.put("rewritten".getBytes(StandardCharsets.UTF_8), new Location(2, 0, 100, 10, ObjectStamp.NONE).encode());
            db.delete("removed".getBytes(StandardCharsets.UTF_8));
            db.delete("zz-last".getBytes(StandardCharsets.UTF_8));
        } catch (org.rocksdb.RocksDBException e) {
            throw new AssertionError(e);
        }
        try (BucketIndex index = BucketIndex.open(dir)) {
            Map<String, Location> all = read(index);

            assertThat(all.keySet()).containsExactlyInAnyOrder("rewritten", "kept");
            assertThat(all.get("rewritten").stamp()).as("new bytes, the old stamp not theirs").isSameAs(ObjectStamp.NONE);
            assertThat(all.get("kept").stamp()).isEqualTo(new ObjectStamp(7, 2_000));
        }
        try (RocksDB db = RocksDB.openReadOnly(dir.toString())) {
            byte[] removedStamp = new byte[] {(byte) 0xFF, 'r', 'e', 'm', 'o', 'v', 'e', 'd'};
            assertThat(db.get(removedStamp)).as("the removed object's stamp, dropped at the first read").isNull();
            assertThat(db.get(new byte[] {(byte) 0xFF, 'k', 'e', 'p', 't'})).as("kept's stamp").isNotNull();
            byte[] lastStamp = ("\u0000zz-last").getBytes(StandardCharsets.UTF_8);
            lastStamp[0] = (byte) 0xFF;
            assertThat(db.get(lastStamp)).as("the stamp after every object entry, dropped too").isNull();
        } catch (org.rocksdb.RocksDBException e) {
            throw new AssertionError(e);
        }
    }
}
