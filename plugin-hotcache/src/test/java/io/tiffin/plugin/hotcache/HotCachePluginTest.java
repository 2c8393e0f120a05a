package io.tiffin.plugin.hotcache;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.spi.TiffinPlugin;
import io.tiffin.api.spi.hotcache.HotCachePolicyFactory;
import io.tiffin.api.spi.hotcache.PolicySimulator;
import java.util.ServiceLoader;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class HotCachePluginTest {

    @Test
    void registeredThroughServiceLoaderWithEveryPolicyByName() {
        TiffinPlugin plugin = ServiceLoader.load(TiffinPlugin.class).stream()
                .map(ServiceLoader.Provider::get)
                .filter(HotCachePlugin.class::isInstance)
                .findFirst().orElseThrow();
        assertThat(plugin.hotCachePolicies()).extracting(HotCachePolicyFactory::name)
                .containsExactly("lru", "sieve", "s3-fifo", "w-tinylfu", "w-tinylfu-static");
        for (HotCachePolicyFactory factory : plugin.hotCachePolicies()) {
            assertThat(factory.create(10).name()).isEqualTo(factory.name());
            assertThat(factory.create(10).capacityBlocks()).isEqualTo(10);
        }
    }

    @Test
    void frequencyAwarePoliciesBeatLruUnderAScanOfOneTimeKeys() {
        long seed = System.nanoTime();
        System.out.println("frequencyAwarePoliciesBeatLruUnderAScanOfOneTimeKeys seed = " + seed);
        long[] keys = new long[200_000];
        SplittableRandom random = new SplittableRandom(seed);
        long oneTime = 1_000_000;
        for (int i = 0; i < keys.length; i++) {
            keys[i] = random.nextInt(4) == 0 ? random.nextInt(400) : oneTime++;
        }
        double lru = PolicySimulator.replay(new LruPolicy(200), keys, null).hitRatio();
        for (HotCachePolicyFactory factory : new HotCachePlugin().hotCachePolicies()) {
            if (!factory.name().equals("lru")) {
                assertThat(PolicySimulator.replay(factory.create(200), keys, null).hitRatio())
                        .as(factory.name() + " vs lru " + lru).isGreaterThan(lru * 1.5);
            }
        }
    }
}
