package io.tiffin.plugin.hotcache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.spi.PluginContext;
import io.tiffin.api.spi.TiffinPlugin;
import io.tiffin.api.spi.hotcache.HotCachePolicyFactory;
import io.tiffin.api.spi.hotcache.PolicySimulator;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
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
                .containsExactly("lru", "sieve", "s3-fifo", "w-tinylfu", "w-tinylfu-static", "w-tinylfu-tuned",
                        "reuse-interval");
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

    private static HotCachePolicyFactory policy(String name) {
        return new HotCachePlugin().hotCachePolicies().stream().filter(f -> f.name().equals(name)).findFirst()
                .orElseThrow();
    }

    private static PluginContext settings(String key, String value) {
        return new PluginContext(Map.of(key, value), "test");
    }

    @Test
    void everyPolicyDeclaresItsKeys() {
        assertThat(policy("lru").configKeys()).isEqualTo(Optional.of(Set.of()));
        assertThat(policy("sieve").configKeys()).isEqualTo(Optional.of(Set.of()));
        assertThat(policy("s3-fifo").configKeys()).isEqualTo(Optional.of(Set.of("small-share")));
        assertThat(policy("w-tinylfu").configKeys()).isEqualTo(Optional.of(Set.of("window-share")));
        assertThat(policy("w-tinylfu-static").configKeys()).isEqualTo(Optional.of(Set.of("window-share")));
        assertThat(policy("w-tinylfu-tuned").configKeys()).isEqualTo(Optional.of(Set.of()));
        assertThat(policy("reuse-interval").configKeys()).isEqualTo(Optional.of(Set.of()));
    }

    @Test
    void settingsReachThePolicies() {
        assertThat(((S3FifoPolicy) policy("s3-fifo").create(1000)).smallMaxBlocks()).isEqualTo(100);
        assertThat(((S3FifoPolicy) policy("s3-fifo").create(1000, settings("small-share", "0.25"))).smallMaxBlocks())
                .isEqualTo(250);
        assertThat(((WTinyLfuPolicy) policy("w-tinylfu").create(1000)).windowMaxBlocks()).isEqualTo(10.0);
        assertThat(((WTinyLfuPolicy) policy("w-tinylfu").create(1000, settings("window-share", "0.2")))
                .windowMaxBlocks()).isEqualTo(200.0);
        assertThat(((WTinyLfuPolicy) policy("w-tinylfu-static").create(1000, settings("window-share", "0")))
                .windowMaxBlocks()).isEqualTo(0.0);
    }

    @Test
    void theSmallQueueShareDecidesWhetherANewKeyOrAnOldMainEntryLeaves() {
        // 10 blocks: keys 1..10 read twice; as 11 arrives the read entries move from the small queue to main
        // until the small queue is under its bound (all of them with a 1-block bound, 1..6 with a 5-block
        // bound) and main's oldest, 1, leaves. 7 is read again, then 12 arrives. With a 10% small queue the
        // newcomer 11 is the victim; with 50% the small queue is at its bound, 7 moves to main and main's
        // oldest entry (2) leaves instead, so the final read of 11 hits.
        long[] keys = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 7, 12, 11};
        PolicySimulator.Result tenth = PolicySimulator.replay(policy("s3-fifo").create(10), keys, null);
        PolicySimulator.Result half = PolicySimulator.replay(policy("s3-fifo").create(10,
                settings("small-share", "0.5")), keys, null);
        assertThat(half.hits()).as("hits with small-share 0.5 against 0.1 (%s)", tenth).isEqualTo(tenth.hits() + 1);
    }

    @Test
    void badSettingsNameTheFullKeyAndValue() {
        assertThatThrownBy(() -> policy("s3-fifo").create(100, settings("small-share", "1")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("hotcache.policy.s3-fifo.small-share = 1 (expected: a share of the capacity,"
                        + " between 0 and 1 exclusive");
        assertThatThrownBy(() -> policy("w-tinylfu").create(100, settings("window-share", "-0.1")))
                .hasMessageContaining("hotcache.policy.w-tinylfu.window-share = -0.1 (expected: a share of the"
                        + " capacity, 0 to 1");
        assertThatThrownBy(() -> policy("w-tinylfu-static").create(100, settings("window-share", "half")))
                .hasMessageContaining("hotcache.policy.w-tinylfu-static.window-share = half (expected: a number)");
    }
}
