package io.tiffin.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.node.NodeOptions;
import io.tiffin.core.plugin.PluginRegistry;
import io.tiffin.core.transport.TransportSettings;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.Logger;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which {@code storage.*} keys reach no backend, and the warning a node logs about them at start-up. */
class StorageKeysTest {
    @TempDir
    Path dir;

    @Test
    void keysOfAnotherOrMisspelledBackendAreFound() {
        TiffinConfig config = TiffinConfig.builder().set("node.storage-backend", "bucket")
                .set("storage.bucket.capacity", "1GiB").set("storage.buckte.capacity", "2GiB")
                .set("storage.mem-store.size", "5").build();

        assertThat(TiffinModule.keysOthersRead(config, "storage.", "bucket"))
                .containsExactly("storage.buckte.capacity", "storage.mem-store.size");
        assertThat(TiffinModule.keysOthersRead(config, "storage.", "mem-store"))
                .containsExactly("storage.bucket.capacity", "storage.buckte.capacity");
    }

    /** The WARN lines of {@link TiffinModule} while the node's options are made from {@code config}. */
    private static List<String> warningsOfNodeOptions(TiffinConfig config) {
        List<String> warnings = new CopyOnWriteArrayList<>();
        AbstractAppender appender = new AbstractAppender("storage-keys-test", null, null, true, Property.EMPTY_ARRAY) {
            @Override
            public void append(LogEvent event) {
                if (event.getLevel() == Level.WARN) {
                    warnings.add(event.getMessage().getFormattedMessage());
                }
            }
        };
        appender.start();
        Logger logger = (Logger) LogManager.getLogger(TiffinModule.class);
        logger.addAppender(appender);
        try (PluginRegistry plugins = PluginRegistry.classPathOnly()) {
            new TiffinModule(config).nodeOptions(config, TransportSettings.defaults(), plugins);
        } finally {
            logger.removeAppender(appender);
            appender.stop();
        }
        return warnings;
    }

    /** Keys of a backend set while none is configured: the node runs without an SSD tier, and says why they go unread. */
    @Test
    void storageKeysWithoutABackendAreWarnedAbout() {
        TiffinConfig config = TiffinConfig.builder().set("storage.bucket.capacity", "1GiB", "file node.properties")
                .set("storage.bucket.shards", "4").build();

        List<String> warnings = warningsOfNodeOptions(config);

        assertThat(warnings).singleElement().asString()
                .contains("storage.bucket.capacity [file node.properties]")
                .contains("storage.bucket.shards [command line]")
                .contains("no storage backend is configured (node.storage-backend is empty)")
                .contains("set node.storage-backend to the backend they are for (installed: [bucket")
                .contains("node.storage-path");
    }

    @Test
    void storageKeysOfAnotherBackendAreWarnedAboutNamingTheConfiguredOne() {
        TiffinConfig config = TiffinConfig.builder().set("node.storage-backend", "bucket")
                .set("node.storage-path", dir.toString()).set("storage.bucket.capacity", "1GiB")
                .set("storage.buckte.capacity", "2GiB").build();

        List<String> warnings = warningsOfNodeOptions(config);

        assertThat(warnings).singleElement().asString()
                .contains("storage.buckte.capacity [command line]")
                .doesNotContain("storage.bucket.capacity")
                .contains("node.storage-backend = bucket reads storage.bucket.* only")
                .contains("set node.storage-backend to the storage backend they are for");
    }

    @Test
    void noWarningWithoutStorageKeysOrWithTheBackendsOwn() {
        assertThat(warningsOfNodeOptions(TiffinConfig.builder().build())).isEmpty();
        TiffinConfig withBackend = TiffinConfig.builder().set("node.storage-backend", "bucket")
                .set("node.storage-path", dir.toString()).set("storage.bucket.capacity", "1GiB").build();
        assertThat(warningsOfNodeOptions(withBackend)).isEmpty();
    }

    /** The node names the backend's plugin as the registry does (in start-up errors). */
    @Test
    void theNodeLearnsWhichPluginProvidesItsBackend() {
        TiffinConfig config = TiffinConfig.builder().set("node.storage-backend", "bucket")
                .set("node.storage-path", dir.toString()).build();
        try (PluginRegistry plugins = PluginRegistry.classPathOnly()) {
            NodeOptions options = new TiffinModule(config).nodeOptions(config, TransportSettings.defaults(), plugins);
            assertThat(options.storage().plugin()).isEqualTo(plugins.providerOf(
                    io.tiffin.core.plugin.ExtensionPoint.STORAGE_BACKEND, "bucket").toString());
        }
    }
}
