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

class NodeIdentityTest {
    @TempDir
    Path dir;

    private final AtomicInteger generatedCount = new AtomicInteger();
    private final Supplier<String> generator = () -> "node-gen" + generatedCount.incrementAndGet();

    @Test
    void aGeneratedIdIsWrittenAndTakenAgainAtTheNextStart() throws Exception {
        Path storage = dir.resolve("ssd"); // not created yet: the backend would create it

        assertThat(NodeIdentity.resolve("", storage, generator)).isEqualTo("node-gen1");
        assertThat(NodeIdentity.resolve("", storage, generator)).isEqualTo("node-gen1");

        assertThat(generatedCount).hasValue(1);
        assertThat(Files.readString(storage.resolve(NodeIdentity.FILE))).isEqualTo("node-gen1\n");
        try (var files = Files.list(storage)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly(NodeIdentity.FILE);
        }
    }

    @Test
    void aConfiguredIdIsWrittenAndMustMatchLater() {
        assertThat(NodeIdentity.resolve("n7", dir, generator)).isEqualTo("n7");
        assertThat(NodeIdentity.resolve("n7", dir, generator)).isEqualTo("n7");
        assertThat(NodeIdentity.resolve("", dir, generator)).isEqualTo("n7");

        assertThatThrownBy(() -> NodeIdentity.resolve("n8", dir, generator))
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS))
                .hasMessageContaining("node.id = n8").hasMessageContaining("belongs to node n7")
                .hasMessageContaining(dir.resolve(NodeIdentity.FILE).toString());
        assertThat(generatedCount).hasValue(0);
    }

    @Test
    void anIdWrittenByHandWithSpacesAroundItIsRead() throws Exception {
        Files.writeString(dir.resolve(NodeIdentity.FILE), "  gpu-host-3 \n\n");

        assertThat(NodeIdentity.resolve("gpu-host-3", dir, generator)).isEqualTo("gpu-host-3");
    }

    @Test
    void aFileThatHoldsNoIdIsAClearError() throws Exception {
        Path file = dir.resolve(NodeIdentity.FILE);
        Files.writeString(file, " \n");
        assertThatThrownBy(() -> NodeIdentity.resolve("", dir, generator)).isInstanceOf(TiffinException.class)
                .hasMessageContaining(file + " is empty");

        Files.write(file, new byte[] {'a', 0, (byte) 0xFF, 'b'});
        assertThatThrownBy(() -> NodeIdentity.resolve("", dir, generator)).isInstanceOf(TiffinException.class)
                .hasMessageContaining("does not hold an id");

        Files.write(file, new byte[4096]);
        assertThatThrownBy(() -> NodeIdentity.resolve("", dir, generator)).isInstanceOf(TiffinException.class)
                .hasMessageContaining("is larger than");
        assertThat(generatedCount).hasValue(0);
    }

    @Test
    void aStoragePathThatCannotBeReadOrWrittenIsAClearError() throws Exception {
        Path notADir = Files.writeString(dir.resolve("plain-file"), "x");
        assertThatThrownBy(() -> NodeIdentity.resolve("n1", notADir, generator)).isInstanceOf(TiffinException.class)
                .hasMessageContaining("cannot write the node's id to " + notADir.resolve(NodeIdentity.FILE))
                .hasMessageContaining("node.storage-path must be a directory");

        Files.createDirectories(dir.resolve("ssd").resolve(NodeIdentity.FILE + ".tmp")); // in the way of the write
        assertThatThrownBy(() -> NodeIdentity.resolve("n1", dir.resolve("ssd"), generator))
                .isInstanceOf(TiffinException.class)
                .hasMessageContaining("cannot write the node's id to " + dir.resolve("ssd").resolve(NodeIdentity.FILE))
                .hasMessageContaining("node.storage-path");
        assertThat(dir.resolve("ssd").resolve(NodeIdentity.FILE)).doesNotExist();
    }
}
