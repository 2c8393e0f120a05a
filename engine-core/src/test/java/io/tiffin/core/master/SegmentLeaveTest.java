package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.core.util.ManualTicker;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A node leaving erases exactly the objects that lived only on its segments, visiting the objects its segments'
 * allocations were made for ({@link MountedSegment#ownerKeys}) rather than every object.
 */
class SegmentLeaveTest {
    private static final long MiB = 1L << 20;

    /** The preferred segment first (if any), then the others in order. */
    private static final AllocationStrategy PREFERRED_THEN_IN_ORDER = (request, segments, sink) -> {
        for (var s : segments) {
            if (request.preferredSegments().contains(s.name())) {
                sink.tryPlace(s);
            }
        }
        MasterServiceTest.IN_ORDER.place(request, segments, sink);
    };

    private ManualTicker ticker;
    private MasterService master;

    @BeforeEach
    void setUp() {
        ticker = new ManualTicker();
        master = twoNodes(MasterSettings.defaults());
    }

    /** A master with nodes node-1 and node-2, one segment each (s1, s2). */
    private MasterService twoNodes(MasterSettings settings) {
        MasterService m = new MasterService(settings, PREFERRED_THEN_IN_ORDER, ticker, null);
        m.mountSegment("s1", "node-1", "127.0.0.1:1", 64 * MiB);
        m.mountSegment("s2", "node-2", "127.0.0.1:2", 64 * MiB);
        return m;
    }

    /** {@link #twoNodes} with the SSD tier's offload {@code mode}. */
    private MasterService twoNodes(TierSettings.OffloadMode mode) {
        return twoNodes(MasterSettings.defaults().withTier(TierSettings.defaults().withOffloadMode(mode)));
    }

    private void put(String key, PutOptions options) {
        KeyResult<List<ReplicaDescriptor>> r = master.putStart("c1", key, 4096, options);
        assertThat(r.code()).as("putStart %s", key).isEqualTo(ErrorCode.OK);
        assertThat(master.putEnd("c1", key)).isEqualTo(ErrorCode.OK);
    }

    private MountedSegment segment(String name) {
        return master.segmentViews().stream().filter(s -> s.name().equals(name)).map(MountedSegment.class::cast)
                .findFirst().orElseThrow();
    }

    @Test
    void anUnmountErasesTheObjectsThatLivedOnlyThereAndKeepsTheRest() {
        for (int i = 0; i < 50; i++) {
            put("only-s1-" + i, PutOptions.DEFAULT); // in order: s1 first
            put("only-s2-" + i, PutOptions.DEFAULT.withPreferredSegment("s2"));
        }
        put("both", PutOptions.replicas(2));
        master.unmountSegment("node-1", "s1");

        assertThat(master.keyCount()).isEqualTo(51);
        assertThat(master.existKey("only-s1-7").value()).isFalse();
        assertThat(master.existKey("only-s2-7").value()).isTrue();
        KeyResult<ObjectLocation> both = master.getReplicaList("both");
        assertThat(both.code()).isEqualTo(ErrorCode.OK);
        assertThat(both.value().replicas()).as("the copy on s1 is dropped, the one on s2 stays")
                .extracting(ReplicaDescriptor::segment).containsExactly("s2");
    }

    @Test
    void aPutInProgressOnTheGoneSegmentGoesWithIt() {
        assertThat(master.putStart("c1", "writing", 4096, PutOptions.DEFAULT).code()).isEqualTo(ErrorCode.OK);
        master.unmountSegment("node-1", "s1");
        assertThat(master.keyCount()).isZero();
        assertThat(master.putEnd("c1", "writing")).isNotEqualTo(ErrorCode.OK);
    }

    @Test
    void aNodeThatMissesItsPingsTakesItsObjectsWithIt() {
        put("a", PutOptions.DEFAULT);
        put("b", PutOptions.DEFAULT.withPreferredSegment("s2"));
        ticker.advance(MasterSettings.defaults().nodeTtl().plus(Duration.ofSeconds(1)));
        master.ping("node-2");
        assertThat(master.expireNodes()).containsExactly("node-1");
        assertThat(master.existKey("a").value()).isFalse();
        assertThat(master.existKey("b").value()).isTrue();
    }

    @Test
    void aSegmentNamesTheKeysOfItsLiveAllocationsOnly() {
        put("a", PutOptions.DEFAULT);
        put("b", PutOptions.DEFAULT);
        put("c", PutOptions.replicas(2));
        assertThat(master.remove("b", false)).isEqualTo(ErrorCode.OK);
        assertThat(segment("s1").ownerKeys()).containsExactlyInAnyOrder("a", "c");
        assertThat(segment("s2").ownerKeys()).containsExactly("c");

        for (String k : List.of("a", "c")) {
            assertThat(master.remove(k, false)).isEqualTo(ErrorCode.OK);
        }
        assertThat(segment("s1").ownerKeys()).as("freed allocations hold no key").isEmpty();
        assertThat(segment("s2").ownerKeys()).isEmpty();
    }

    @Test
    void aKeyPutAgainElsewhereAfterItsAllocationHereIsLeftAlone() {
        put("k", PutOptions.DEFAULT);
        MountedSegment s1 = segment("s1");
        long handle = s1.allocate(4096, "k"); // an allocation for an earlier object of "k" that was not freed yet
        assertThat(handle).isNotNegative();
        assertThat(master.remove("k", false)).isEqualTo(ErrorCode.OK);
        put("k", PutOptions.DEFAULT.withPreferredSegment("s2"));
        master.unmountSegment("node-1", "s1");
        assertThat(master.existKey("k").value()).as("the current object of the key lives on s2").isTrue();
    }

    @Test
    void aNodeThatLeavesTakesItsSsdCopiesAndTheObjectsLeftWithNothing() {
        master = twoNodes(TierSettings.OffloadMode.OFF);
        master.ssdTier().registerStorage("node-1", 1L << 30);
        master.ssdTier().registerStorage("node-2", 1L << 30);
        put("in-memory-on-s1", PutOptions.DEFAULT);
        master.ssdTier().reportDiskObjects("node-2", List.of("ssd-only-on-2a", "ssd-only-on-2b"),
                List.of(4096L, 4096L));
        master.ssdTier().reportDiskObjects("node-1", List.of("ssd-only-on-1"), List.of(4096L));
        assertThat(master.diskCopiesListedFor("node-2")).isEqualTo(2);
        assertThat(master.ssdTally()).as("objects on SSD, their copies' bytes").containsExactly(3, 3 * 4096);

        master.unmountSegment("node-2", "s2"); // its last segment: node-2 is gone with its SSD tier

        assertThat(master.existKey("ssd-only-on-2a").value()).as("its only copy was on node-2's SSD").isFalse();
        assertThat(master.existKey("ssd-only-on-2b").value()).isFalse();
        assertThat(master.existKey("in-memory-on-s1").value()).isTrue();
        assertThat(master.existKey("ssd-only-on-1").value()).isTrue();
        assertThat(master.keyCount()).isEqualTo(2);
        assertThat(master.diskCopiesListedFor("node-2")).as("nothing listed for the node that left").isZero();
        assertThat(master.diskCopiesListedFor("node-1")).isEqualTo(1);
        assertThat(master.ssdTally()).containsExactly(1, 4096);

        ticker.advance(MasterSettings.defaults().leaseTtl().plusSeconds(1)); // the lease of the exist above
        assertThat(master.remove("ssd-only-on-1", false)).isEqualTo(ErrorCode.OK);
        assertThat(master.diskCopiesListedFor("node-1")).as("a removal drops the key from the index").isZero();
        assertThat(master.ssdTally()).containsExactly(0, 0);
    }

    @Test
    void anOffloadToANodeThatLeavesIsAbandonedWithIt() {
        master = twoNodes(TierSettings.OffloadMode.WRITE_THROUGH);
        master.ssdTier().registerStorage("node-2", 1L << 30);
        put("k", PutOptions.replicas(2)); // memory replicas on s1 and s2, its offload to node-2's SSD
        assertThat(master.ssdTier().pollTasks("node-2", 10, 0).offloads()).hasSize(1);
        assertThat(master.remove("k", true)).isEqualTo(ErrorCode.OBJECT_HAS_REPLICATION_TASK);

        master.unmountSegment("node-2", "s2");

        assertThat(master.ssdTier().offloadsInFlight()).isZero();
        assertThat(master.getReplicaList("k").value().replicas()).as("its memory replica on s1 stays")
                .extracting(ReplicaDescriptor::segment).containsExactly("s1");
        ticker.advance(MasterSettings.defaults().leaseTtl().plusSeconds(1));
        assertThat(master.remove("k", false)).as("no task holds it any more").isEqualTo(ErrorCode.OK);
    }

    @Test
    void manyAllocationsGrowTheOwnerTableAndAreAllFound() {
        for (int i = 0; i < 5_000; i++) {
            put("k" + i, PutOptions.DEFAULT);
        }
        assertThat(segment("s1").ownerKeys()).hasSize(5_000);
        master.unmountSegment("node-1", "s1");
        assertThat(master.keyCount()).isZero();
    }
}
