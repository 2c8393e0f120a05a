package io.tiffin.core.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NodeIdFileTest {
    @TempDir
    Path dir;

    private final AtomicInteger generatedCount = new AtomicInteger();
    private final Supplier<String> generator = () -> "node-gen" + generatedCount.incrementAndGet();

    @Test
    void aGeneratedIdIsWrittenAndTakenAgainAtTheNextStart() throws Exception {
        Path storage = dir.resolve("ssd"); // not created yet: the backend would create it

        assertThat(NodeIdFile.resolve("", storage, generator)).isEqualTo("node-gen1");
        assertThat(NodeIdFile.resolve("", storage, generator)).isEqualTo("node-gen1");

        assertThat(generatedCount).hasValue(1);
        assertThat(Files.readString(storage.resolve(NodeIdFile.FILE))).isEqualTo("node-gen1\n");
        try (var files = Files.list(storage)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly(NodeIdFile.FILE);
        }
    }

    @Test
    void aConfiguredIdIsWrittenAndMustMatchLater() {
        assertThat(NodeIdFile.resolve("n7", dir, generator)).isEqualTo("n7");
        assertThat(NodeIdFile.resolve("n7", dir, generator)).isEqualTo("n7");
        assertThat(NodeIdFile.resolve("", dir, generator)).isEqualTo("n7");

        assertThatThrownBy(() -> NodeIdFile.resolve("n8", dir, generator))
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS))
                .hasMessageContaining("node.id = n8").hasMessageContaining("belongs to node n7")
                .hasMessageContaining(dir.resolve(NodeIdFile.FILE).toString());
        assertThat(generatedCount).hasValue(0);
    }

    @Test
    void anIdWrittenByHandWithSpacesAroundItIsRead() throws Exception {
        Files.writeString(dir.resolve(NodeIdFile.FILE), "  gpu-host-3 \n\n");

        assertThat(NodeIdFile.resolve("gpu-host-3", dir, generator)).isEqualTo("gpu-host-3");
    }

    @Test
    void aFileThatHoldsNoIdIsAClearError() throws Exception {
        Path file = dir.resolve(NodeIdFile.FILE);
        Files.writeString(file, " \n");
        assertThatThrownBy(() -> NodeIdFile.resolve("", dir, generator)).isInstanceOf(TiffinException.class)
                .hasMessageContaining(file + " is empty");

        Files.write(file, new byte[] {'a', 0, (byte) 0xFF, 'b'});
        assertThatThrownBy(() -> NodeIdFile.resolve("", dir, generator)).isInstanceOf(TiffinException.class)
                .hasMessageContaining("does not hold an id");

        Files.write(file, new byte[4096]);
        assertThatThrownBy(() -> NodeIdFile.resolve("", dir, generator)).isInstanceOf(TiffinException.class)
                .hasMessageContaining("is larger than");
        assertThat(generatedCount).hasValue(0);
    }

    @Test
    void aStoragePathThatCannotBeReadOrWrittenIsAClearError() throws Exception {
        Path notADir = Files.writeString(dir.resolve("plain-file"), "x");
        assertThatThrownBy(() -> NodeIdFile.resolve("n1", notADir, generator)).isInstanceOf(TiffinException.class)
                .hasMessageContaining("cannot write the node's id to " + notADir.resolve(NodeIdFile.FILE))
                .hasMessageContaining("node.storage-path must be a directory");

        Files.createDirectories(dir.resolve("ssd").resolve(NodeIdFile.FILE + ".tmp")); // in the way of the write
        assertThatThrownBy(() -> NodeIdFile.resolve("n1", dir.resolve("ssd"), generator))
                .isInstanceOf(TiffinException.class)
                .hasMessageContaining("cannot write the node's id to " + dir.resolve("ssd").resolve(NodeIdFile.FILE))
                .hasMessageContaining("node.storage-path");
        assertThat(dir.resolve("ssd").resolve(NodeIdFile.FILE)).doesNotExist();
    }
}
