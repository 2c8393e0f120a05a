package io.tiffin.core.util;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

/** {@link TwoThreadChunks}: every chunk runs once, on at most two threads; a chunk's failure reaches the caller. */
class TwoThreadChunksTest {
    @Test
    void everyChunkRunsOnceSharedOrNot() {
        for (boolean share : new boolean[] {true, false}) {
            for (int count : new int[] {0, 1, 2, 7, 1000}) {
                AtomicIntegerArray runs = new AtomicIntegerArray(Math.max(1, count));
                Set<Thread> threads = ConcurrentHashMap.newKeySet();
                TwoThreadChunks.run(count, share, i -> {
                    runs.incrementAndGet(i);
                    threads.add(Thread.currentThread());
                    long until = System.nanoTime() + 20_000; // long enough for a pool thread to claim some
                    while (System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                });
                for (int i = 0; i < count; i++) {
                    assertThat(runs.get(i)).as("chunk %d of %d, share %s", i, count, share).isEqualTo(1);
                }
                assertThat(threads).hasSizeLessThanOrEqualTo(share ? 2 : 1);
                if (!share && count > 0) {
                    assertThat(threads).containsExactly(Thread.currentThread());
                }
            }
        }
    }

    @Test
    void aChunksFailureIsRethrownToTheCallerOnceNoChunkRuns() {
        AtomicIntegerArray runs = new AtomicIntegerArray(64);
        assertThatThrownBy(() -> TwoThreadChunks.run(64, true, i -> {
            runs.incrementAndGet(i);
            if (i == 40) {
                throw new IllegalStateException("chunk 40");
            }
        })).isInstanceOf(IllegalStateException.class).hasMessage("chunk 40");
        for (int i = 0; i < 64; i++) {
            assertThat(runs.get(i)).as("chunk %d", i).isEqualTo(1); // the others still ran, each once
        }
    }

    @Test
    void aConfinedSegmentIsNotSharable() {
        try (Arena confined = Arena.ofConfined(); Arena shared = Arena.ofShared()) {
            assertThat(TwoThreadChunks.sharable(confined.allocate(8))).isFalse();
            assertThat(TwoThreadChunks.sharable(shared.allocate(8))).isTrue();
            assertThat(TwoThreadChunks.sharable(java.lang.foreign.MemorySegment.ofArray(new byte[8]))).isTrue();
        }
    }

    @Test
    void anEventLoopsThreadRunsEveryChunkItself() throws Exception {
        Set<Thread> threads = ConcurrentHashMap.newKeySet();
        Thread loop = new io.netty.util.concurrent.FastThreadLocalThread(() -> TwoThreadChunks.run(200, true, i -> {
            threads.add(Thread.currentThread());
            long until = System.nanoTime() + 20_000;
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
        }));
        loop.start();
        loop.join();
        assertThat(threads).containsExactly(loop);
    }
}
