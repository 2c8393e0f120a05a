package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.core.util.ManualTicker;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The master's put conditions and deadlines: a forced replacement of an object being read, NX and XX, expiry
 * (lookups, removals, puts, EXPIRE / PERSIST / TTL, KEEPTTL, the sweep) and what each does with the old buffers.
 */
class PutSemanticsTest {
    private static final long MiB = 1L << 20;
    private static final PutOptions REPLACE = PutOptions.DEFAULT.withUpsert(true).withReplaceLeased(true);

    private ManualTicker ticker;
    private MasterService master;
    private long leaseMs;

    @BeforeEach
    void setUp() {
        ticker = new ManualTicker();
        ticker.advance(Duration.ofSeconds(100));
        master = new MasterService(MasterSettings.defaults(), MasterServiceTest.IN_ORDER, ticker, null);
        master.mountSegment("s1", "node-s1", "127.0.0.1:1", 64 * MiB);
        leaseMs = MasterSettings.defaults().leaseTtl().toMillis();
    }

    private KeyResult<List<ReplicaDescriptor>> put(String key, long size, PutOptions o) {
        KeyResult<List<ReplicaDescriptor>> r = master.putStart("c1", key, size, o);
        if (r.isOk()) {
            assertThat(master.putEnd("c1", key)).isEqualTo(ErrorCode.OK);
        }
        return r;
    }

    private long used() {
        return master.segmentViews().getFirst().used();
    }

    @Test
    void aForcedReplacementOfAnObjectBeingReadSwapsAtOnceAndKeepsTheOldBytesUntilTheLeaseEnds() {
        put("k", 4096, PutOptions.DEFAULT);
        ObjectLocation old = master.getReplicaList("k").value(); // a reader holds this location, leased
        assertThat(master.putStart("c1", "k", 4096, PutOptions.DEFAULT.withUpsert(true)).code())
                .as("a plain upsert keeps today's rule").isEqualTo(ErrorCode.OBJECT_HAS_LEASE);
        List<ReplicaDescriptor> fresh = put("k", 8192, REPLACE).value();
        ObjectLocation now = master.getReplicaList("k").value();
        assertThat(now.size()).isEqualTo(8192);
        assertThat(now.version()).isGreaterThan(old.version());
        long oldOffset = old.replicas().getFirst().offset();
        assertThat(fresh.getFirst().offset()).isNotEqualTo(oldOffset);
        assertThat(used()).as("the old buffer is quarantined").isEqualTo(4096 + 8192);
        // no put is placed over the old bytes while the reader's lease runs
        for (int i = 0; i < 20; i++) {
            assertThat(put("other" + i, 4096, PutOptions.DEFAULT).value().getFirst().offset()).isNotEqualTo(oldOffset);
        }
        ticker.advance(Duration.ofMillis(leaseMs));
        master.releaseStuckPuts();
        assertThat(used()).isEqualTo(8192 + 20 * 4096);
    }

    @Test
    void aForcedReplacementIsNotHeldBackByAKeyAForcedRemovalHolds() {
        put("k", 100, PutOptions.DEFAULT);
        master.getReplicaList("k", 5000, 0); // a location cache may reuse it
        assertThat(master.remove("k", true)).isEqualTo(ErrorCode.OK);
        assertThat(master.putStart("c1", "k", 100, PutOptions.DEFAULT).code()).isEqualTo(ErrorCode.OBJECT_HAS_LEASE);
        assertThat(put("k", 100, REPLACE).code()).isEqualTo(ErrorCode.OK);
        assertThat(master.getReplicaList("k").isOk()).isTrue();
    }

    @Test
    void nxStoresOnlyIntoAnEmptyKeyAndXxOnlyOverAnObject() {
        PutOptions nx = REPLACE.withCondition(PutOptions.Condition.IF_ABSENT);
        PutOptions xx = REPLACE.withCondition(PutOptions.Condition.IF_PRESENT);
        assertThat(put("k", 10, xx).code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        assertThat(master.existKey("k").value()).isFalse();
        assertThat(put("k", 10, nx).code()).isEqualTo(ErrorCode.OK);
        long first = master.getReplicaList("k").value().version();
        assertThat(put("k", 20, nx).code()).isEqualTo(ErrorCode.OBJECT_ALREADY_EXISTS);
        assertThat(master.getReplicaList("k").value().version()).isEqualTo(first);
        assertThat(put("k", 20, xx).code()).isEqualTo(ErrorCode.OK);
        assertThat(master.getReplicaList("k").value().size()).isEqualTo(20);
        // a put under way is neither: the second writer is told to retry
        assertThat(master.putStart("c2", "w", 10, PutOptions.DEFAULT).code()).isEqualTo(ErrorCode.OK);
        assertThat(master.putStart("c1", "w", 10, nx).code()).isEqualTo(ErrorCode.REPLICA_IS_NOT_READY);
        assertThat(master.putStart("c1", "w", 10, xx).code()).isEqualTo(ErrorCode.REPLICA_IS_NOT_READY);
    }

    @Test
    void anExpiredObjectIsGoneForLookupsExistsRemovalsAndConditionsAndCountedApart() {
        put("k", 4096, REPLACE.withTtlMillis(1000));
        assertThat(master.expire("k", Expiry.QUERY, 0).value()).isEqualTo(1000);
        ticker.advance(Duration.ofMillis(999));
        assertThat(master.getReplicaList("k").isOk()).isTrue();
        ticker.advance(Duration.ofMillis(1));
        assertThat(master.getReplicaList("k").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        assertThat(master.existKey("k").value()).isFalse();
        assertThat(master.counters().expiredObjects()).isEqualTo(1);
        assertThat(master.counters().evictedKeys()).isZero();
        assertThat(master.remove("k", false)).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        // expired objects count as absent for NX and XX
        put("e", 10, REPLACE.withTtlMillis(5));
        ticker.advance(Duration.ofMillis(5));
        assertThat(put("e", 10, REPLACE.withCondition(PutOptions.Condition.IF_PRESENT)).code())
                .isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        put("f", 10, REPLACE.withTtlMillis(5));
        ticker.advance(Duration.ofMillis(5));
        assertThat(put("f", 10, REPLACE.withCondition(PutOptions.Condition.IF_ABSENT)).code()).isEqualTo(ErrorCode.OK);
        assertThat(master.expire("f", Expiry.QUERY, 0).value()).isEqualTo(Expiry.NONE);
    }

    @Test
    void anExpiredObjectBeingReadKeepsItsBytesUntilTheLeaseEnds() {
        put("k", 4096, REPLACE.withTtlMillis(60_000));
        ObjectLocation read = master.getReplicaList("k").value();
        assertThat(read.leaseTtlMillis()).isEqualTo(leaseMs);
        ticker.advance(Duration.ofMillis(60_000 - 200));
        ObjectLocation late = master.getReplicaList("k").value();
        assertThat(late.leaseTtlMillis()).as("a lease that outlives the deadline at most by the time left")
                .isEqualTo(400);
        ticker.advance(Duration.ofMillis(200));
        assertThat(master.expireObjects()).isEqualTo(1);
        assertThat(used()).as("quarantined while leased").isEqualTo(4096);
        ticker.advance(Duration.ofMillis(200));
        master.releaseStuckPuts();
        assertThat(used()).isZero();
    }

    @Test
    void expirePersistTtlAndKeepTtl() {
        assertThat(master.expire("none", Expiry.SET, 10).code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        put("k", 10, REPLACE);
        assertThat(master.expire("k", Expiry.QUERY, 0).value()).isEqualTo(Expiry.NONE);
        assertThat(master.expire("k", Expiry.SET, 5000).value()).isEqualTo(Expiry.NONE);
        ticker.advance(Duration.ofMillis(1000));
        assertThat(master.expire("k", Expiry.QUERY, 0).value()).isEqualTo(4000);
        put("k", 10, REPLACE.withKeepTtl(true));
        assertThat(master.expire("k", Expiry.QUERY, 0).value()).as("KEEPTTL").isEqualTo(4000);
        put("k", 10, REPLACE);
        assertThat(master.expire("k", Expiry.QUERY, 0).value()).as("a SET without KEEPTTL drops it")
                .isEqualTo(Expiry.NONE);
        master.expire("k", Expiry.SET, 3000);
        assertThat(master.expire("k", Expiry.PERSIST, 0).value()).isEqualTo(3000);
        assertThat(master.expire("k", Expiry.PERSIST, 0).value()).isEqualTo(Expiry.NONE);
        ticker.advance(Duration.ofMillis(10_000));
        assertThat(master.existKey("k").value()).isTrue();
        assertThat(master.expire("k", Expiry.SET, 0).value()).as("0 removes it now").isEqualTo(Expiry.NONE);
        assertThat(master.existKey("k").value()).isFalse();
        assertThat(master.expire("k", 7, 0).code()).isEqualTo(ErrorCode.INVALID_PARAMS);
        assertThat(master.expire("k", Expiry.SET, -1).code()).isEqualTo(ErrorCode.INVALID_PARAMS);
    }

    @Test
    void theSweepReclaimsExpiredObjectsNobodyAsksFor() {
        for (int i = 0; i < 10; i++) {
            put("k" + i, 4096, REPLACE.withTtlMillis(i < 5 ? 100 : 100_000));
        }
        assertThat(master.expireObjects()).isZero();
        ticker.advance(Duration.ofMillis(100));
        assertThat(master.expireObjects()).isEqualTo(5);
        assertThat(used()).isEqualTo(5 * 4096);
        assertThat(master.counters().expiredObjects()).isEqualTo(5);
    }

    @Test
    void evictionReclaimsExpiredObjectsFirstAndCountsThemAsExpired() {
        for (int i = 0; i < 15; i++) { // 60 of 64 MiB: past the eviction watermark
            put("k" + i, 4 * MiB, REPLACE.withTtlMillis(i < 3 ? 10 : 1_000_000));
        }
        ticker.advance(Duration.ofMillis(10));
        master.runEvictionOnce();
        assertThat(master.counters().expiredObjects()).isEqualTo(3);
        assertThat(master.existKey("k0").value()).isFalse();
        assertThat(master.counters().evictedKeys() + master.counters().expiredObjects())
                .isEqualTo(15 - master.segmentViews().getFirst().used() / (4 * MiB));
    }

    @Test
    void theReplacedObjectStaysReadableUntilTheReplacementsPutEnd() {
        put("k", 4096, PutOptions.DEFAULT);
        long oldVersion = master.getReplicaList("k").value().version();
        assertThat(master.putStart("c1", "k", 8192, REPLACE).isOk()).isTrue();
        ObjectLocation during = master.getReplicaList("k").value();
        assertThat(during.version()).as("the old value, while the new one is written").isEqualTo(oldVersion);
        assertThat(during.size()).isEqualTo(4096);
        assertThat(master.existKey("k").value()).isTrue();
        assertThat(master.listKeys("k", 10).keys()).containsEntry("k", 4096L);
        assertThat(master.putStart("c2", "k", 10, REPLACE).code()).as("a second writer retries")
                .isEqualTo(ErrorCode.REPLICA_IS_NOT_READY);
        assertThat(master.putStart("c2", "k", 10, PutOptions.DEFAULT).code()).isEqualTo(ErrorCode.REPLICA_IS_NOT_READY);
        assertThat(master.putEnd("c2", "k")).as("not the writer of the replacement").isEqualTo(ErrorCode.ILLEGAL_CLIENT);
        assertThat(master.putEnd("c1", "k")).isEqualTo(ErrorCode.OK);
        ObjectLocation after = master.getReplicaList("k").value();
        assertThat(after.size()).isEqualTo(8192);
        assertThat(after.version()).isGreaterThan(oldVersion);
        assertThat(master.keyCount()).isEqualTo(1);
        assertThat(master.putEnd("c1", "k")).as("a retried PutEnd").isEqualTo(ErrorCode.OK);
        ticker.advance(Duration.ofMillis(leaseMs));
        master.releaseStuckPuts();
        assertThat(used()).as("the old buffer freed after its readers' lease").isEqualTo(8192);
    }

    @Test
    void aRevokedOrAbandonedReplacementLeavesTheReplacedObject() {
        put("k", 4096, PutOptions.DEFAULT);
        long oldVersion = master.getReplicaList("k").value().version();
        assertThat(master.putStart("c1", "k", 8192, REPLACE).isOk()).isTrue();
        assertThat(master.putRevoke("c1", "k")).isEqualTo(ErrorCode.OK);
        assertThat(master.getReplicaList("k").value().version()).isEqualTo(oldVersion);
        assertThat(used()).isEqualTo(4096);

        assertThat(master.putStart("c1", "k", 8192, REPLACE).isOk()).isTrue(); // its writer never comes back
        ticker.advance(MasterSettings.defaults().putStartReleaseTimeout());
        master.releaseStuckPuts();
        assertThat(master.getReplicaList("k").value().version()).isEqualTo(oldVersion);
        assertThat(used()).isEqualTo(4096);

        assertThat(master.putStart("c1", "k", 8192, REPLACE).isOk()).isTrue(); // stuck past the discard timeout
        ticker.advance(MasterSettings.defaults().putStartDiscardTimeout());
        assertThat(put("k", 100, REPLACE).code()).as("a later replacement pre-empts it").isEqualTo(ErrorCode.OK);
        assertThat(master.getReplicaList("k").value().size()).isEqualTo(100);
    }

    @Test
    void aRemovalOrExpiryDuringAReplacementEndsTheOldValueAndKeepTtlIsTakenAtPutEnd() {
        put("k", 4096, PutOptions.DEFAULT);
        assertThat(master.putStart("c1", "k", 10, REPLACE).isOk()).isTrue();
        assertThat(master.remove("k", true)).isEqualTo(ErrorCode.OK);
        assertThat(master.existKey("k").value()).isFalse();
        assertThat(master.putEnd("c1", "k")).isEqualTo(ErrorCode.OK);
        assertThat(master.getReplicaList("k").value().size()).as("the SET ends after the DEL").isEqualTo(10);

        assertThat(master.putStart("c1", "k", 20, REPLACE.withKeepTtl(true)).isOk()).isTrue();
        master.expire("k", Expiry.SET, 5000); // the old value gets a deadline while the new one is written
        assertThat(master.putEnd("c1", "k")).isEqualTo(ErrorCode.OK);
        assertThat(master.expire("k", Expiry.QUERY, 0).value()).as("KEEPTTL takes it").isEqualTo(5000);

        assertThat(master.putStart("c1", "k", 30, REPLACE.withKeepTtl(true)).isOk()).isTrue();
        ticker.advance(Duration.ofMillis(5000));
        assertThat(master.existKey("k").value()).as("the old value expired").isFalse();
        assertThat(master.putEnd("c1", "k")).isEqualTo(ErrorCode.OK);
        assertThat(master.expire("k", Expiry.QUERY, 0).value()).as("nothing left to keep").isEqualTo(Expiry.NONE);
        assertThat(master.getReplicaList("k").value().size()).isEqualTo(30);
    }

    @Test
    void expiredObjectsAreNeitherListedNorCountedAndObjectsWithADeadlineAreCountedAsTheyChange() {
        put("a", 10, REPLACE.withTtlMillis(100));
        put("b", 10, REPLACE.withTtlMillis(5000));
        put("c", 10, REPLACE);
        assertThat(master.expiringKeyCount()).isEqualTo(2);
        assertThat(master.keyCount()).isEqualTo(3);
        ticker.advance(Duration.ofMillis(100)); // "a" expired; nobody met it and the sweep has not run
        assertThat(master.listKeys("", 10).keys().keySet()).containsExactly("b", "c");
        assertThat(master.keyCount()).isEqualTo(2);
        assertThat(master.expire("c", Expiry.SET, 1000).isOk()).isTrue();
        assertThat(master.expiringKeyCount()).isEqualTo(3);
        assertThat(master.expire("b", Expiry.PERSIST, 0).isOk()).isTrue();
        assertThat(master.expiringKeyCount()).isEqualTo(2);
        put("c", 10, REPLACE); // a SET without KEEPTTL drops the deadline
        assertThat(master.expiringKeyCount()).isEqualTo(1);
        assertThat(master.expireObjects()).isEqualTo(1);
        assertThat(master.expiringKeyCount()).isZero();
        assertThat(master.keyCount()).isEqualTo(2);
        put("d", 10, REPLACE.withTtlMillis(50));
        assertThat(master.remove("d", false)).isEqualTo(ErrorCode.OK);
        assertThat(master.expiringKeyCount()).as("a removal drops it").isZero();
    }

    @Test
    void conditionalExpireIsCheckedWithTheKeyLocked() {
        put("k", 10, REPLACE);
        assertThat(master.expire("k", Expiry.SET, 1000, Expiry.IF_SET).value().applied()).as("XX, none").isFalse();
        assertThat(master.expire("k", Expiry.SET, 1000, Expiry.IF_LATER).value().applied()).as("GT, none").isFalse();
        assertThat(master.expire("k", Expiry.SET, 1000, Expiry.IF_SET_AND_SOONER).value().applied()).isFalse();
        assertThat(master.expire("k", Expiry.QUERY, 0).value()).isEqualTo(Expiry.NONE);
        assertThat(master.expire("k", Expiry.SET, 1000, Expiry.IF_NONE).value().applied()).as("NX, none").isTrue();
        assertThat(master.expire("k", Expiry.SET, 2000, Expiry.IF_NONE).value().applied()).as("NX, one").isFalse();
        assertThat(master.expire("k", Expiry.SET, 500, Expiry.IF_LATER).value().applied()).isFalse();
        assertThat(master.expire("k", Expiry.SET, 1500, Expiry.IF_LATER).value().applied()).isTrue();
        assertThat(master.expire("k", Expiry.SET, 2000, Expiry.IF_SOONER).value().applied()).isFalse();
        assertThat(master.expire("k", Expiry.SET, 700, Expiry.IF_SET_AND_SOONER).value().applied()).isTrue();
        assertThat(master.expire("k", Expiry.SET, 300, Expiry.IF_SET).value().applied()).isTrue();
        assertThat(master.expire("k", Expiry.QUERY, 0).value()).isEqualTo(300);
        master.expire("k", Expiry.PERSIST, 0);
        assertThat(master.expire("k", Expiry.SET, 99_000, Expiry.IF_SOONER).value().applied()).as("LT, none").isTrue();
        assertThat(master.expire("k", Expiry.QUERY, 0, Expiry.IF_NONE).code()).as("a condition needs a set")
                .isEqualTo(ErrorCode.INVALID_PARAMS);
        assertThat(master.expire("k", Expiry.SET, 1, 9).code()).isEqualTo(ErrorCode.INVALID_PARAMS);
        assertThat(master.expire("none", Expiry.SET, 1, Expiry.IF_NONE).code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
    }

    @Test
    void aPutOverOneVersionIsCheckedAtPutStartAndAgainWhenItReplacesTheObject() {
        put("k", 10, REPLACE);
        long v1 = master.getReplicaList("k").value().version();
        assertThat(put("k", 20, REPLACE.withExpectedVersion(v1 + 1000)).code()).isEqualTo(ErrorCode.OBJECT_ALREADY_EXISTS);
        assertThat(put("none", 20, REPLACE.withExpectedVersion(v1)).code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        assertThat(master.existKey("none").value()).isFalse();
        assertThat(put("k", 20, REPLACE.withExpectedVersion(v1)).code()).isEqualTo(ErrorCode.OK);
        long v2 = master.getReplicaList("k").value().version();
        assertThat(put("k", 30, REPLACE.withExpectedVersion(v1)).code()).as("v1 was replaced")
                .isEqualTo(ErrorCode.OBJECT_ALREADY_EXISTS);
        // the object goes between PutStart and PutEnd: the put fails and stores nothing
        assertThat(master.putStart("c1", "k", 40, REPLACE.withExpectedVersion(v2)).isOk()).isTrue();
        assertThat(master.remove("k", true)).isEqualTo(ErrorCode.OK);
        assertThat(master.putEnd("c1", "k")).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        assertThat(master.existKey("k").value()).isFalse();
        assertThat(used()).as("the failed put's buffer is freed at once; v1 and v2, read, stay quarantined")
                .isEqualTo(2 * 64);
        ticker.advance(Duration.ofMillis(leaseMs));
        master.releaseStuckPuts();
        assertThat(used()).isZero();
    }
}
