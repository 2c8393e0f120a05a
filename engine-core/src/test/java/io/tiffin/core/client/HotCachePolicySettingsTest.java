package io.tiffin.core.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.PluginContext;
import io.tiffin.api.spi.hotcache.HotCachePolicy;
import io.tiffin.api.spi.hotcache.HotCachePolicyFactory;
import io.tiffin.core.client.hotcache.HotCacheSettings;
import io.tiffin.core.client.hotcache.LocalHotCache;
import io.tiffin.core.plugin.PluginRegistry;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The client builds its hot cache's policy with the policy's settings ({@code hotcache.policy.<name>.*}). */
class HotCachePolicySettingsTest {

    /** The built-in lru policy, created through a factory that records the settings it was given. */
    private static HotCachePolicyFactory recording(AtomicReference<PluginContext> seen) {
        HotCachePolicyFactory lru;
        try (PluginRegistry plugins = PluginRegistry.classPathOnly()) {
            lru = plugins.hotCachePolicy("lru"); // a class-path plugin: usable after the registry closes
        }
        return new HotCachePolicyFactory() {
            @Override
            public String name() {
                return "recording";
            }

            @Override
            public HotCachePolicy create(long capacityBlocks) {
                throw new AssertionError("the client must pass the policy its settings");
            }

            @Override
            public HotCachePolicy create(long capacityBlocks, PluginContext context) {
                seen.set(context);
                if (context.get("fail").isPresent()) {
                    throw new IllegalArgumentException("hotcache.policy.recording.fail = " + context.get("fail").get());
                }
                return lru.create(capacityBlocks);
            }
        };
    }

    @Test
    void theClientCreatesItsPolicyWithTheSettings() {
        AtomicReference<PluginContext> seen = new AtomicReference<>();
        HotCacheSettings settings = new HotCacheSettings(1 << 20, 64 << 10, 0.5, 64, recording(seen),
                Map.of("window", "0.2"));
        try (LocalHotCache cache = ClientCaches.createHotCache(settings)) {
            assertThat(cache).isNotNull();
        }
        assertThat(seen.get().properties()).containsExactly(Map.entry("window", "0.2"));
        assertThat(seen.get().nodeId()).isEqualTo("client");
    }

    @Test
    void aPolicyThatRefusesItsSettingsStopsTheClientWithItsMessage() {
        HotCacheSettings settings = new HotCacheSettings(1 << 20, 64 << 10, 0.5, 64,
                recording(new AtomicReference<>()), Map.of("fail", "yes"));
        assertThatThrownBy(() -> ClientCaches.createHotCache(settings))
                .isInstanceOfSatisfying(TiffinException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS))
                .hasMessageContaining("hotcache.policy recording could not be created")
                .hasMessageContaining("hotcache.policy.recording.fail = yes");
    }
}
