package io.tiffin.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Keeps docs/CONFIGURATION.md in step with {@link TiffinConfigKeys}. */
class ConfigDocsTest {

    private static Path docsFile() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            Path candidate = p.resolve("docs").resolve("CONFIGURATION.md");
            if (Files.isRegularFile(candidate)) {
                return candidate;
            }
        }
        throw new AssertionError("docs/CONFIGURATION.md not found above " + Path.of("").toAbsolutePath());
    }

    @Test
    void referenceTableIsUpToDate() throws IOException {
        Path file = docsFile();
        String doc = Files.readString(file, StandardCharsets.UTF_8);
        assertThat(ConfigDocs.generatedPart(doc))
                .as("%s is out of date; regenerate it with: java -cp engine-core/target/classes:"
                        + "engine-api/target/classes io.tiffin.core.config.ConfigDocs %s", file, file)
                .isEqualTo("\n" + ConfigDocs.table());
    }

    @Test
    void tableListsEveryKeyWithItsEnvironmentVariables() {
        String table = ConfigDocs.table();
        for (ConfigKey<?> k : TiffinConfigKeys.all()) {
            assertThat(table).contains("| `" + k.name() + "` |").contains("`" + k.envName() + "`");
        }
        assertThat(table).contains("`MC_STORE_LOCAL_HOT_CACHE_SIZE`").contains("`LOCAL_HOT_BLOCK_SIZE`")
                .contains("| `transport.auth-token` | (empty) |");
    }

    @Test
    void mainRewritesOnlyTheGeneratedPart(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("CONFIGURATION.md");
        Files.writeString(file, "# Intro\n\n" + ConfigDocs.BEGIN + "\nstale\n" + ConfigDocs.END + "\n\nOutro\n");
        ConfigDocs.main(new String[] {file.toString()});
        String doc = Files.readString(file);
        assertThat(doc).startsWith("# Intro\n\n" + ConfigDocs.BEGIN + "\n| Key |")
                .endsWith(ConfigDocs.END + "\n\nOutro\n").doesNotContain("stale");
        assertThat(ConfigDocs.render(doc)).isEqualTo(doc);
    }

    @Test
    void renderRequiresTheMarkers() {
        assertThatThrownBy(() -> ConfigDocs.render("no markers")).hasMessageContaining(ConfigDocs.BEGIN);
    }
}
