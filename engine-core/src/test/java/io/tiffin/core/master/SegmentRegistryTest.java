package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The registry's readers never wait for its monitor: a mount holds it on a worker thread, pings run on the event
 * loops that answer Gets too, so a ping that waited for a mount (preempted on a busy machine) stalled every Get
 * behind it. Also: its per-node index agrees with the segments, whatever the mounts and unmounts.
 */
class SegmentRegistryTest {
    private static final long GiB = 1L << 30;

    @Test
    void whatAPingAsksIsAnsweredWhileAMountHoldsTheRegistry() throws Exception {
        SegmentRegistry registry = new SegmentRegistry();
        for (int i = 0; i < 100; i++) {
            registry.mount("n" + i + "-seg", "n" + i, "h:" + i, 64 * GiB, 7, 1, 10_000);
        }
        registry.restore("r-seg", "r", "h:r", 64 * GiB, 9, 10_000);
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread mount = Thread.ofPlatform().start(() -> {
            synchronized (registry) { // as a mount does, stalled by the scheduler
                held.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        try {
            assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
            CompletableFuture<List<Object>> ping = CompletableFuture.supplyAsync(() -> {
                registry.heard("n5", 15_000);
                return List.of(registry.awaitsAttach("n5", 7), registry.awaitsAttach("r", 9),
                        registry.incarnationOf("n5"), registry.touch("n5", 20_000), registry.touch("unknown", 20_000),
                        registry.lastHeard("n5"), registry.segmentNamesOf("n5"),
                        registry.segmentsOfOtherIncarnations("n5", 8), registry.get("n5-seg").name(),
                        registry.segments().size(), registry.liveNodes().size(), registry.nodeBeats().size());
            });
            assertThat(ping.get(10, TimeUnit.SECONDS)).as("answered without the monitor").containsExactly(
                    false, true, 7L, true, false, 15_000L, List.of("n5-seg"), List.of("n5-seg"), "n5-seg", 101, 101,
                    101);
        } finally {
            release.countDown();
            mount.join();
        }
    }

    @Test
    void aNodeIsEitherExpiredOrTouchedNeverBoth() {
        SegmentRegistry registry = new SegmentRegistry();
        registry.mount("a-seg", "a", "h:1", GiB, 1, 1, 1000);
        registry.mount("b-seg", "b", "h:2", GiB, 2, 1, 1000);
        assertThat(registry.touch("a", 5000)).isTrue();

        assertThat(registry.expireNodesAndUnmount(2000)).containsOnlyKeys("b");
        assertThat(registry.touch("b", 9000)).as("expired: it must re-mount").isFalse();
        assertThat(registry.segmentNamesOf("b")).isEmpty();
        assertThat(registry.incarnationOf("b")).isZero();
        assertThat(registry.liveNodes()).containsExactly("a");
        assertThat(registry.segments()).extracting(MountedSegment::name).containsExactly("a-seg");
    }

    @Test
    void theIndexByNodeAgreesWithTheSegmentsThroughRandomMountsAndUnmounts() {
        long seed = System.nanoTime();
        SplittableRandom random = new SplittableRandom(seed);
        SegmentRegistry registry = new SegmentRegistry();
        Map<String, String> model = new HashMap<>(); // segment -> node
        for (int step = 0; step < 3000; step++) {
            String node = "n" + random.nextInt(8);
            String segment = node + "-s" + random.nextInt(6);
            switch (random.nextInt(4)) {
                case 0, 1 -> {
                    registry.mount(segment, node, "h:1", GiB, 1, 1, Long.MAX_VALUE);
                    model.put(segment, node);
                }
                case 2 -> {
                    MountedSegment gone = registry.unmount(segment);
                    assertThat(gone != null).as("seed %d step %d: unmount of %s", seed, step, segment)
                            .isEqualTo(model.remove(segment) != null);
                }
                default -> {
                    for (String name : registry.segmentNamesOf(node)) {
                        registry.unmount(name);
                        model.remove(name);
                    }
                }
            }
            assertThat(registry.segments()).extracting(MountedSegment::name).as("seed %d step %d", seed, step)
                    .containsExactlyElementsOf(new TreeSet<>(model.keySet()));
            for (MountedSegment s : registry.segments()) {
                assertThat(registry.get(s.name())).as("seed %d step %d: %s", seed, step, s.name()).isSameAs(s);
            }
            for (int n = 0; n < 8; n++) {
                String id = "n" + n;
                Set<String> expected = new HashSet<>();
                model.forEach((s, owner) -> {
                    if (owner.equals(id)) {
                        expected.add(s);
                    }
                });
                List<String> names = new ArrayList<>(registry.segmentNamesOf(id));
                assertThat(names).as("seed %d step %d node %s", seed, step, id).doesNotHaveDuplicates()
                        .containsExactlyInAnyOrderElementsOf(expected);
                assertThat(registry.incarnationOf(id)).as("seed %d step %d node %s", seed, step, id)
                        .isEqualTo(expected.isEmpty() ? 0L : 1L);
            }
        }
    }
}
