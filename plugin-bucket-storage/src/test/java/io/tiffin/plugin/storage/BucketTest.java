package io.tiffin.plugin.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reference counting of one bucket file: a bucket being read is not deleted under its reader. */
class BucketTest {
    @TempDir
    Path tempDir;

    private Bucket bucket(long id, List<IOException> fallbacks) throws IOException {
        Path file = tempDir.resolve(Bucket.fileName(id));
        byte[] bytes = new byte[10_000];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) i;
        }
        Files.write(file, bytes);
        return new Bucket(id, file, bytes.length, 1, true, (b, e) -> fallbacks.add(e));
    }

    @Test
    void retiredBucketKeepsItsFileUntilTheLastReaderReleases() throws IOException {
        Bucket b = bucket(1, new ArrayList<>());
        assertThat(b.acquire()).isTrue();
        b.retire();
        assertThat(b.file()).exists();
        byte[] dest = new byte[100];
        assertThat(b.read(5000, 100, MemorySegment.ofArray(dest), 4096)).isEqualTo(100);
        assertThat(dest[0]).isEqualTo((byte) 5000);
        b.release();
        assertThat(b.file()).doesNotExist();
        assertThat(b.acquire()).as("a deleted bucket cannot be pinned again").isFalse();
    }

    @Test
    void detachedBucketKeepsItsFile() throws IOException {
        Bucket b = bucket(2, new ArrayList<>());
        b.detach();
        b.retire();
        assertThat(b.acquire()).isFalse();
        assertThat(b.file()).exists();
    }

    @Test
    void misalignedDirectReadFallsBackToBufferedOnceAndStillReturnsTheBytes() throws IOException {
        List<IOException> fallbacks = new ArrayList<>();
        Bucket b = bucket(3, fallbacks);
        assertThat(b.acquire()).isTrue();
        byte[] dest = new byte[300];
        // An alignment of 1 makes O_DIRECT reject the unaligned position: the bucket switches to buffered.
        assertThat(b.read(4097, 300, MemorySegment.ofArray(dest), 1)).isEqualTo(300);
        assertThat(b.read(4097, 300, MemorySegment.ofArray(dest), 1)).isEqualTo(300);
        assertThat(dest[0]).isEqualTo((byte) 4097);
        assertThat(fallbacks).hasSize(1);
        assertThat(b.directIo()).isFalse();
        assertThat(b.read(9_900, 300, MemorySegment.ofArray(dest), 4096)).as("cut short by the end of the file")
                .isEqualTo(100);
        b.release();
    }

    @Test
    void fileNamesMapToIds() {
        assertThat(Bucket.idOf(Bucket.fileName(1234))).isEqualTo(1234);
        assertThat(Bucket.idOf("12.bucket.tmp")).isEqualTo(-1);
        assertThat(Bucket.idOf("x.bucket")).isEqualTo(-1);
        assertThat(Bucket.idOf(".bucket")).isEqualTo(-1);
        assertThat(Bucket.align(1)).isEqualTo(4096);
        assertThat(Bucket.align(4096)).isEqualTo(4096);
    }
}
