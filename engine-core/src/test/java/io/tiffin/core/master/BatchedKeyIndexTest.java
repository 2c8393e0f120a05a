package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** {@link BatchedKeyIndex}: buffered changes, applied in order, seen by every read made after them. */
class BatchedKeyIndexTest {
    @Test
    void aReadSeesEveryChangeMadeBeforeItWithoutAFullBatch() {
        BatchedKeyIndex index = new BatchedKeyIndex(new KeyIndex(4), 1024);
        index.add("b");
        index.add("a");
        assertThat(index.from("")).containsExactly("a", "b");
        index.remove("a");
        assertThat(index.from("")).containsExactly("b");
        index.add("c");
        assertThat(index.from("")).containsExactly("b", "c");
    }

    @Test
    void changesOfOneKeyInOneBatchApplyInTheOrderTheyWereMade() {
        KeyIndex keys = new KeyIndex(4);
        BatchedKeyIndex index = new BatchedKeyIndex(keys, 1024);
        index.add("k");
        index.remove("k");
        index.add("k");
        index.add("j");
        index.remove("j");
        index.remove("absent");
        index.add("k"); // already there
        assertThat(index.from("")).containsExactly("k");
        assertThat(keys.size()).as("the index's own count, the buffer applied").isEqualTo(1);
    }

    @Test
    void randomChangesAgreeWithATreeSetForEveryBatchSize() {
        for (int batch : new int[] {1, 7, 1024}) {
            SplittableRandom random = new SplittableRandom(batch);
            BatchedKeyIndex index = new BatchedKeyIndex(new KeyIndex(8), batch);
            TreeSet<String> reference = new TreeSet<>();
            for (int op = 1; op <= 30_000; op++) {
                String key = "k" + random.nextInt(5_000);
                if (random.nextInt(3) > 0) {
                    index.add(key);
                    reference.add(key);
                } else {
                    index.remove(key);
                    reference.remove(key);
                }
                if (op % 2_503 == 0) {
                    String from = "k" + random.nextInt(500);
                    assertThat(index.from(from)).as("batch %d, op %d", batch, op)
                            .containsExactlyElementsOf(reference.tailSet(from, true));
                }
            }
            assertThat(index.from("")).containsExactlyElementsOf(reference);
        }
    }

    @Test
    void aBatchSizeBelowOneIsRefused() {
        assertThatThrownBy(() -> new BatchedKeyIndex(new KeyIndex(), 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("batch = 0");
    }

    @Test
    void concurrentWritersEndWithTheirNetChangesAndReadersSeeEveryStableKeyInOrder() throws Exception {
        BatchedKeyIndex index = new BatchedKeyIndex(new KeyIndex(8), 64);
        Set<String> stable = new HashSet<>();
        for (int k = 0; k < 6_000; k += 3) {
            stable.add("k" + k);
            index.add("k" + k);
        }
        int writers = 3;
        AtomicBoolean writing = new AtomicBoolean(true);
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        ExecutorService pool = Executors.newFixedThreadPool(writers + 2);
        TreeSet<String> expected = new TreeSet<>(stable);
        try {
            List<Future<Set<String>>> writerTasks = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                int writer = w;
                writerTasks.add(pool.submit(() -> {
                    // each writer owns the keys k % 3 == 1 with k / 3 % writers == writer: no key is shared
                    SplittableRandom random = new SplittableRandom(writer);
                    Set<String> mine = new HashSet<>();
                    for (int op = 0; op < 40_000; op++) {
                        int k = (random.nextInt(2_000 / writers) * writers + writer) * 3 + 1;
                        String key = "k" + k;
                        if (random.nextBoolean()) {
                            index.add(key);
                            mine.add(key);
                        } else {
                            index.remove(key);
                            mine.remove(key);
                        }
                    }
                    return mine;
                }));
            }
            List<Future<Integer>> readers = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                readers.add(pool.submit(() -> {
                    int iterations = 0;
                    while (writing.get() || iterations < 3) {
                        String previous = null;
                        Set<String> seen = new HashSet<>();
                        for (String key : index.from("")) {
                            if (previous != null && key.compareTo(previous) <= 0) {
                                failures.add(key + " after " + previous);
                            }
                            seen.add(key);
                            previous = key;
                        }
                        if (!seen.containsAll(stable)) {
                            failures.add("a stable key was missed");
                        }
                        iterations++;
                    }
                    return iterations;
                }));
            }
            expected.addAll(KeyIndexTest.awaitWritersThenReaders(writerTasks, writing, readers));
        } finally {
            pool.shutdownNow();
        }
        assertThat(failures).isEmpty();
        assertThat(index.from("")).containsExactlyElementsOf(expected);
    }
}
