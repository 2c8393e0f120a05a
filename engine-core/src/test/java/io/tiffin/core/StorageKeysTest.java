package io.tiffin.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.core.config.TiffinConfig;
import org.junit.jupiter.api.Test;

/** Which {@code storage.*} keys reach no backend (warned about at node start-up). */
class StorageKeysTest {

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
}
