package io.tiffin.core.client.hotcache;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The version rules of {@link EntryIndex}, without a ring or a policy. */
class EntryIndexTest {
    private final HotCacheCounters counters = new HotCacheCounters();
    private final List<CacheEntry> unmapped = new ArrayList<>();
    private final EntryIndex index = new EntryIndex(counters, unmapped::add);
    private final BlockPool pool = new BlockPool(8);

    private CacheEntry entry(String key, long version, long size, int... blocks) {
        return new CacheEntry(key, EntryIndex.hash(key), version, size, blocks, pool);
    }

    @Test
    void aReaderGetsOnlyTheVersionAndSizeItAsksFor() {
        CacheEntry v2 = entry("k", 2, 100, 0);
        index.install(v2);
        CacheEntry got = index.acquire("k", 2, 100);
        assertThat(got).isSameAs(v2);
        got.release();

        assertThat(index.acquire("k", 2, 99)).as("another size").isNull();
        assertThat(counters.staleRejected.sum()).isEqualTo(1);
        assertThat(unmapped).containsExactly(v2);
        assertThat(index.acquire("k", 2, 100)).as("the stale copy left the map").isNull();
        assertThat(counters.misses.sum()).isEqualTo(2);

        assertThat(index.retireUnmapped(v2.keyHash, "k")).isTrue();
        assertThat(v2.isRetired()).isTrue();
        assertThat(index.bytesCached()).isZero();
    }

    @Test
    void aFillNeverReplacesANewerCopyOrAnotherKeysHash() {
        CacheEntry v5 = entry("k", 5, 100, 0);
        index.install(v5);
        assertThat(index.judge("k", v5.keyHash, 5, 100)).isEqualTo(EntryIndex.Verdict.CACHED);
        assertThat(index.judge("k", v5.keyHash, 4, 100)).isEqualTo(EntryIndex.Verdict.REFUSED);
        assertThat(index.judge("other", v5.keyHash, 9, 100)).as("a hash collision").isEqualTo(EntryIndex.Verdict.REFUSED);
        assertThat(index.judge("k", v5.keyHash, 6, 100)).isEqualTo(EntryIndex.Verdict.TAKE);

        assertThat(index.mayInstall(entry("k", 5, 100, 1))).isFalse();
        assertThat(index.mayInstall(entry("k", 6, 100, 1))).isTrue();

        assertThat(index.retireResident("k", v5.keyHash)).isTrue();
        assertThat(v5.isRetired()).isTrue();
        assertThat(index.size()).isZero();
        assertThat(index.retireResident("k", v5.keyHash)).isFalse();
    }

    @Test
    void anEvictedEntrysBlocksComeBackOnlyAfterItsLastReader() {
        CacheEntry e = entry("k", 1, 100, pool.take(2));
        index.install(e);
        CacheEntry reading = index.acquire("k", 1, 100);
        assertThat(index.evict(e.keyHash)).isTrue();
        assertThat(index.evict(e.keyHash)).isFalse();
        pool.drainReclaimed();
        assertThat(pool.free()).as("still read").isEqualTo(6);
        reading.release();
        pool.drainReclaimed();
        assertThat(pool.free()).isEqualTo(8);
    }

    @Test
    void anInvalidatedEntryIsRetiredUnlessReplacedMeanwhile() {
        CacheEntry old = entry("k", 1, 100, 0);
        index.install(old);
        index.invalidate("k");
        assertThat(counters.invalidations.sum()).isEqualTo(1);
        CacheEntry replacement = entry("k", 2, 100, 1);
        index.install(replacement);
        // the invalidation reaches the maintenance thread after the replacement was installed
        assertThat(index.retireUnmapped(old.keyHash, "k")).isFalse();
        assertThat(replacement.isRetired()).isFalse();
        assertThat(index.keys()).containsExactly("k");
    }

    @Test
    void theHashIsNeverMinusOne() {
        assertThat(EntryIndex.hash("")).isNotEqualTo(-1);
        assertThat(EntryIndex.hash("k")).isEqualTo(EntryIndex.hash("k")).isNotEqualTo(EntryIndex.hash("l"));
    }
}
