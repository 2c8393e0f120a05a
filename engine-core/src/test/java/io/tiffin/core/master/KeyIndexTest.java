package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.NavigableSet;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** {@link KeyIndex}: the master's ordered key index, against a TreeSet as the reference. */
class KeyIndexTest {
    @Test
    void emptyIndexHasNoKeys() {
        KeyIndex index = new KeyIndex(4);
        assertThat(index.from("")).isEmpty();
        assertThat(index.from("a")).isEmpty();
        assertThat(index.remove("a")).isFalse();
        assertThat(index.size()).isZero();
        Iterator<String> it = index.from("").iterator();
        assertThatThrownBy(it::next).isInstanceOf(NoSuchElementException.class);
    }

    @Test
    void duplicatesAreIgnoredAndAbsentKeysNotRemoved() {
        KeyIndex index = new KeyIndex(4);
        assertThat(index.add("b")).isTrue();
        assertThat(index.add("b")).isFalse();
        assertThat(index.add("a")).isTrue();
        assertThat(index.remove("c")).isFalse();
        assertThat(index.size()).isEqualTo(2);
        assertThat(index.from("")).containsExactly("a", "b");
        assertThat(index.from("b")).containsExactly("b");
        assertThat(index.from("ab")).containsExactly("b");
        assertThat(index.from("c")).isEmpty();
        assertThat(index.remove("a")).isTrue();
        assertThat(index.remove("a")).isFalse();
        assertThat(index.from("")).containsExactly("b");
    }

    @Test
    void tooSmallAChunkIsRefused() {
        assertThatThrownBy(() -> new KeyIndex(3)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("chunkCapacity = 3");
    }

    @Test
    void randomAddsAndRemovesAgreeWithATreeSet() {
        for (int capacity : new int[] {4, 5, 16, 256}) {
            long seed = 7919L * capacity;
            SplittableRandom random = new SplittableRandom(seed);
            KeyIndex index = new KeyIndex(capacity);
            TreeSet<String> reference = new TreeSet<>();
            // Grow to 20,000 keys, shrink to a few, grow again: splits, shifts, merges and dropped chunks.
            int[] targets = {20_000, 50, 8_000, 0, 3_000};
            for (int target : targets) {
                for (int op = 1; reference.size() != target; op++) {
                    if (op % 1_000 == 0) {
                        assertThat(toList(index.from(""))).as("seed %d", seed).isEqualTo(List.copyOf(reference));
                    }
                    boolean grow = reference.size() < target ? random.nextInt(5) > 0 : random.nextInt(5) == 0;
                    String key = key(random.nextInt(40_000));
                    if (grow) {
                        assertThat(index.add(key)).as("add %s, seed %d", key, seed).isEqualTo(reference.add(key));
                    } else {
                        String victim = reference.isEmpty() ? key : pick(reference, random);
                        assertThat(index.remove(victim)).as("remove %s, seed %d", victim, seed)
                                .isEqualTo(reference.remove(victim));
                    }
                }
                assertAgree(index, reference, random, seed);
            }
        }
    }

    @Test
    void abbreviationsNeverContradictTheKeysOrder() {
        SplittableRandom random = new SplittableRandom(5);
        for (int i = 0; i < 200_000; i++) {
            String a = trickyKey(random);
            String b = trickyKey(random);
            int shared = KeyIndex.commonPrefix(a, b);
            assertThat(shared).isLessThanOrEqualTo(Math.min(a.length(), b.length()));
            assertThat(a.regionMatches(0, b, 0, shared)).isTrue();
            // the chunk's shared prefix may be any length both keys begin with
            int from = random.nextInt(shared + 1);
            int order = Integer.signum(a.compareTo(b));
            int abbreviated = Integer.signum(Long.compareUnsigned(KeyIndex.abbreviate(a, from),
                    KeyIndex.abbreviate(b, from)));
            if (abbreviated != 0) {
                assertThat(abbreviated).as("%s vs %s from %d", a, b, from).isEqualTo(order);
            }
        }
        // equal up to the eighth character after the prefix: a tie, left to the strings
        assertThat(KeyIndex.abbreviate("p@abcdefgh1", 2)).isEqualTo(KeyIndex.abbreviate("p@abcdefgh2", 2));
        // a key ending early is below a longer one that continues it, also with a NUL after the end
        assertThat(Long.compareUnsigned(KeyIndex.abbreviate("p@ab", 2), KeyIndex.abbreviate("p@abc", 2))).isNegative();
        assertThat(KeyIndex.abbreviate("p@ab", 2)).isEqualTo(KeyIndex.abbreviate("p@ab\u0000", 2));
        // characters from 0xFF on end the abbreviation, so those after them say nothing
        assertThat(KeyIndex.abbreviate("\u0100a", 0)).isEqualTo(KeyIndex.abbreviate("\u0100b", 0));
        assertThat(Long.compareUnsigned(KeyIndex.abbreviate("\u00fe", 0), KeyIndex.abbreviate("\u00ff", 0)))
                .isNegative();
        assertThat(KeyIndex.abbreviate("abc", 3)).isZero();
    }

    @Test
    void keysAlikeBeyondTheirAbbreviationsAgreeWithATreeSet() {
        // long shared prefixes, keys that continue others, NULs and characters from 0xFF on (which end an
        // abbreviation), in chunks that split, hand keys over and merge
        for (int capacity : new int[] {4, 16, 256}) {
            long seed = 104_729L * capacity;
            SplittableRandom random = new SplittableRandom(seed);
            KeyIndex index = new KeyIndex(capacity);
            TreeSet<String> reference = new TreeSet<>();
            for (int target : new int[] {6_000, 100, 3_000}) {
                for (int op = 1; reference.size() != target; op++) {
                    boolean grow = reference.size() < target ? random.nextInt(5) > 0 : random.nextInt(5) == 0;
                    String key = trickyKey(random);
                    if (grow) {
                        assertThat(index.add(key)).as("add %s, seed %d", key, seed).isEqualTo(reference.add(key));
                    } else {
                        String victim = random.nextBoolean() || reference.isEmpty() ? key : reference.ceiling(key);
                        victim = victim == null ? reference.first() : victim;
                        assertThat(index.remove(victim)).as("remove %s, seed %d", victim, seed)
                                .isEqualTo(reference.remove(victim));
                    }
                    if (op % 500 == 0) {
                        assertThat(toList(index.from(""))).as("seed %d", seed).isEqualTo(List.copyOf(reference));
                    }
                }
                assertThat(toList(index.from(""))).as("seed %d", seed).isEqualTo(List.copyOf(reference));
                for (int i = 0; i < 300; i++) {
                    String from = trickyKey(random);
                    assertThat(toList(index.from(from))).as("from %s, seed %d", from, seed)
                            .isEqualTo(List.copyOf(reference.tailSet(from, true)));
                }
            }
        }
    }

    @Test
    void keysArrivingInOrderOrInRunsAgreeWithATreeSet() {
        KeyIndex index = new KeyIndex(8);
        TreeSet<String> reference = new TreeSet<>();
        // Numbered keys without padding arrive as ascending runs in the middle of the range (as BenchScale's do),
        // then descending keys below everything.
        for (int i = 0; i < 5_000; i++) {
            String key = "n-" + i;
            index.add(key);
            reference.add(key);
        }
        for (int i = 5_000; i > 0; i--) {
            String key = "a-" + String.format("%05d", i);
            index.add(key);
            reference.add(key);
        }
        assertAgree(index, reference, new SplittableRandom(3), 3);
    }

    @Test
    void chunksStayMostlyFullWhateverTheOrder() {
        int capacity = KeyIndex.DEFAULT_CHUNK_CAPACITY;
        KeyIndex random = new KeyIndex();
        SplittableRandom r = new SplittableRandom(11);
        List<String> randomKeys = new ArrayList<>();
        while (random.size() < 200_000) {
            String key = key(r.nextInt(1_000_000_000));
            if (random.add(key)) {
                randomKeys.add(key);
            }
        }
        KeyIndex ascending = new KeyIndex();
        KeyIndex numbered = new KeyIndex();
        KeyIndex descending = new KeyIndex();
        for (int i = 0; i < 200_000; i++) {
            ascending.add(String.format("k%09d", i));
            numbered.add("scale-run-" + i);
            descending.add(String.format("k%09d", 200_000 - i));
        }
        // A 4-byte slot per key at full chunks; at most 8 (half full) with the chunk objects.
        for (KeyIndex index : List.of(random, ascending, numbered, descending)) {
            assertThat(slotsPerKey(index)).isLessThan(2.0);
        }
        assertThat(slotsPerKey(ascending)).isLessThan(1.1); // shifts fill the chunks behind an ascending run
        assertThat(slotsPerKey(numbered)).isLessThan(1.1);

        // Removing nine keys in ten at random: merges keep two neighbours above half a chunk together.
        Collections.shuffle(randomKeys, new java.util.Random(11));
        for (String key : randomKeys.subList(0, 180_000)) {
            random.remove(key);
        }
        assertThat(random.size()).isEqualTo(20_000);
        assertThat(random.chunkCount()).isLessThanOrEqualTo(2 * 20_000 / (capacity / 2) + 1);
    }

    @Test
    void iterationStaysConsistentWhileWritersChangeTheIndex() throws Exception {
        KeyIndex index = new KeyIndex(16);
        int writers = 4;
        int perWriter = 6_000;
        // Each writer owns the keys k % writers == w; it adds the stable ones first, then churns the others.
        Set<String> stable = new HashSet<>();
        for (int k = 0; k < writers * perWriter; k++) {
            if (k % 3 == 0) {
                stable.add(key(k));
                index.add(key(k));
            }
        }
        TreeSet<String> expected = new TreeSet<>(stable);
        AtomicBoolean writing = new AtomicBoolean(true);
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        ExecutorService pool = Executors.newFixedThreadPool(writers + 2);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Set<String>>> writerTasks = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                int writer = w;
                writerTasks.add(pool.submit(() -> {
                    SplittableRandom random = new SplittableRandom(writer);
                    Set<String> kept = new HashSet<>();
                    start.await();
                    for (int round = 0; round < 20; round++) {
                        for (int k = writer; k < writers * perWriter; k += writers) {
                            if (k % 3 != 0) {
                                boolean keep = round == 19 && random.nextBoolean();
                                index.add(key(k));
                                if (keep) {
                                    kept.add(key(k));
                                } else {
                                    index.remove(key(k));
                                }
                            }
                        }
                    }
                    return kept;
                }));
            }
            List<Future<Integer>> readers = new ArrayList<>();
            for (int reader = 0; reader < 2; reader++) {
                readers.add(pool.submit(() -> {
                    start.await();
                    SplittableRandom random = new SplittableRandom(99);
                    int iterations = 0;
                    while (writing.get() || iterations < 3) {
                        String from = random.nextBoolean() ? "" : key(random.nextInt(writers * perWriter));
                        String previous = null;
                        Set<String> seen = new HashSet<>();
                        for (String key : index.from(from)) {
                            if (key.compareTo(from) < 0) {
                                failures.add(key + " below " + from);
                            }
                            if (previous != null && key.compareTo(previous) <= 0) {
                                failures.add(key + " after " + previous);
                            }
                            seen.add(key);
                            previous = key;
                        }
                        for (String key : stable) {
                            if (key.compareTo(from) >= 0 && !seen.contains(key)) {
                                failures.add("missed " + key + " from " + from);
                            }
                        }
                        iterations++;
                    }
                    return iterations;
                }));
            }
            start.countDown();
            expected.addAll(awaitWritersThenReaders(writerTasks, writing, readers));
        } finally {
            pool.shutdownNow();
        }
        assertThat(failures).isEmpty();
        // The stable keys and what the writers kept on their last round.
        assertThat(expected.size()).isGreaterThan(stable.size());
        assertThat(index.from("")).containsExactlyElementsOf(expected);
        assertThat(index.size()).isEqualTo(expected.size());
    }

    @Test
    void finalContentsOfConcurrentWritersAreExactlyTheirNetAdds() throws Exception {
        KeyIndex index = new KeyIndex(8);
        int writers = 4;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        List<Future<Set<String>>> results = new ArrayList<>();
        try {
            for (int w = 0; w < writers; w++) {
                int writer = w;
                results.add(pool.submit(() -> {
                    SplittableRandom random = new SplittableRandom(1_000 + writer);
                    Set<String> mine = new HashSet<>();
                    for (int op = 0; op < 40_000; op++) {
                        String key = key(random.nextInt(5_000) * writers + writer); // disjoint per writer
                        if (random.nextInt(3) > 0) {
                            assertThat(index.add(key)).isEqualTo(mine.add(key));
                        } else {
                            assertThat(index.remove(key)).isEqualTo(mine.remove(key));
                        }
                    }
                    return mine;
                }));
            }
            TreeSet<String> expected = new TreeSet<>();
            for (Future<Set<String>> f : results) {
                expected.addAll(f.get(2, TimeUnit.MINUTES));
            }
            assertThat(index.from("")).containsExactlyElementsOf(expected);
            assertThat(index.size()).isEqualTo(expected.size());
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Waits for the writers and collects the keys they kept, then tells the readers to stop and checks that each
     * read the index at least three times (shared by the concurrency tests of the index and its batching).
     */
    static Set<String> awaitWritersThenReaders(List<Future<Set<String>>> writers, AtomicBoolean writing,
            List<Future<Integer>> readers) throws Exception {
        Set<String> kept = new HashSet<>();
        for (Future<Set<String>> f : writers) {
            kept.addAll(f.get(2, TimeUnit.MINUTES));
        }
        writing.set(false);
        for (Future<Integer> f : readers) {
            assertThat(f.get(2, TimeUnit.MINUTES)).isGreaterThanOrEqualTo(3);
        }
        return kept;
    }

    /** Contents, size and {@code from(x)} for keys present and absent, the ends, and beyond them. */
    private static void assertAgree(KeyIndex index, NavigableSet<String> reference, SplittableRandom random,
            long seed) {
        assertThat(index.size()).as("seed %d", seed).isEqualTo(reference.size());
        assertThat(toList(index.from(""))).as("seed %d", seed).isEqualTo(List.copyOf(reference));
        List<String> probes = new ArrayList<>(List.of("", "k", "z", "k~"));
        if (!reference.isEmpty()) {
            probes.add(reference.first());
            probes.add(reference.last());
            probes.add(reference.last() + "0");
        }
        for (int i = 0; i < 100; i++) {
            probes.add(key(random.nextInt(40_000)));
            String key = key(random.nextInt(40_000));
            probes.add(key.substring(0, Math.min(3, key.length()))); // a prefix
        }
        for (String from : probes) {
            assertThat(toList(index.from(from))).as("from %s, seed %d", from, seed)
                    .isEqualTo(List.copyOf(reference.tailSet(from, true)));
            // Stopping part-way, as prefix queries do, and asking again.
            Iterator<String> it = index.from(from).iterator();
            Iterator<String> ref = reference.tailSet(from, true).iterator();
            for (int i = 0; i < 3 && ref.hasNext(); i++) {
                assertThat(it.hasNext()).isTrue();
                assertThat(it.hasNext()).isTrue();
                assertThat(it.next()).isEqualTo(ref.next());
            }
            assertThat(it.hasNext()).isEqualTo(ref.hasNext());
        }
    }

    private static List<String> toList(Iterable<String> keys) {
        List<String> list = new ArrayList<>();
        keys.forEach(list::add);
        return list;
    }

    private static double slotsPerKey(KeyIndex index) {
        return (double) index.chunkCount() * index.chunkCapacity() / index.size();
    }

    private static final String[] PREFIXES = {"m@1@0@", "m@1@1@", "model/\u00ff@", "\u6a21\u578b@", ""};
    private static final String[] PIECES = {"", "0", "00", "a", "ab", "\u0000", "\u00fe", "\u00ff", "\u0100",
        "\uffff", "\ud83d\ude00", "zzzzzzzz", "x"};

    /** A key from a few prefixes and pieces that abbreviations find hard to tell apart. */
    private static String trickyKey(SplittableRandom random) {
        StringBuilder b = new StringBuilder(PREFIXES[random.nextInt(PREFIXES.length)]);
        for (int n = random.nextInt(6); n > 0; n--) {
            b.append(PIECES[random.nextInt(PIECES.length)]);
        }
        return b.toString();
    }

    private static String key(int i) {
        return "k" + i;
    }

    private static String pick(NavigableSet<String> set, SplittableRandom random) {
        String probe = key(random.nextInt(40_000));
        String at = set.ceiling(probe);
        return at != null ? at : set.first();
    }
}
