package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.PinnedValue;
import io.tiffin.core.client.TiffinClient;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * One client rewriting keys as fast as it can (forced replacement, remove then put, upsert, a forced batch put of two
 * keys) while threads of other clients read them through all six read APIs, checking every answer. Every value carries
 * its generation and bytes that only that generation of that key has, so a read can tell
 * <ul>
 *   <li>a stale value: older than the last write of the key that had returned before the read started;</li>
 *   <li>a torn value: bytes of two generations, or of another key;</li>
 *   <li>a wrong absence or a wrong generation while no write of the key overlapped the read at all.</li>
 * </ul>
 * With {@link #withFaults} a write may fail (the test kills or restarts a server meanwhile): the key's value is then
 * uncertain (the old generation, the new one, or none after a remove whose put failed) until a write of it succeeds,
 * and reads may also answer the given outage codes; a stale or torn value is still wrong.
 *
 * <p>Thread-safe: the writer and the readers share it.
 */
final class ConcurrentRewrites {
    /** What a read racing a write, or outliving its lease on a loaded machine, may answer instead of a value. */
    private static final Set<ErrorCode> TRANSIENT = Set.of(ErrorCode.LEASE_EXPIRED, ErrorCode.REPLICA_IS_GONE,
            ErrorCode.REPLICA_IS_NOT_READY, ErrorCode.OBJECT_NOT_FOUND);

    private final String prefix;
    private final int keys;
    private final int size;
    /** The writes' options before upsert: the replicas they put. */
    private final PutOptions plain;
    /** Per key: the last generation whose write returned, and a count that is odd while a write is under way. */
    private final AtomicLongArray completed;
    private final AtomicLongArray writes;
    private final List<String> violations = Collections.synchronizedList(new ArrayList<>());
    private final AtomicLong reads = new AtomicLong();
    private final AtomicLong transientFailures = new AtomicLong();
    /** Per key: 1 while a failed write left its value uncertain. */
    private final AtomicIntegerArray uncertain;
    /** What a read may also answer while faults are tolerated; null: writes must not fail. */
    private volatile Set<ErrorCode> outageCodes;
    private final AtomicLong failedWrites = new AtomicLong();
    /** Set once the event of {@link #run(TiffinClient, List, Duration, Duration, Runnable)} has run. */
    private final AtomicBoolean eventDone = new AtomicBoolean();
    private final AtomicLong writesAfterEvent = new AtomicLong();
    private final AtomicLong valuesAfterEvent = new AtomicLong();
    /** What the writer did, in order (ms since the start, operation, keys and generations, outcome): for failures. */
    private final java.util.Queue<String> writeLog = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final long startNanos = System.nanoTime();

    ConcurrentRewrites(String prefix, int keys, int size) {
        this(prefix, keys, size, 1);
    }

    /** As {@link #ConcurrentRewrites(String, int, int)}, every write putting {@code replicas} memory replicas. */
    ConcurrentRewrites(String prefix, int keys, int size, int replicas) {
        this.prefix = prefix;
        this.keys = keys;
        this.size = size;
        this.plain = PutOptions.DEFAULT.withReplicas(replicas);
        this.completed = new AtomicLongArray(keys);
        this.writes = new AtomicLongArray(keys);
        this.uncertain = new AtomicIntegerArray(keys);
    }

    /**
     * Tolerates failed writes (their keys uncertain until rewritten) and reads that answer one of {@code codes} (a
     * server down or recovering); returns this.
     */
    ConcurrentRewrites withFaults(Set<ErrorCode> codes) {
        this.outageCodes = Set.copyOf(codes);
        return this;
    }

    /** Writes that failed (with {@link #withFaults}). */
    long failedWrites() {
        return failedWrites.get();
    }

    /** Keys written, and values read, after the event had run. */
    long writesAfterEvent() {
        return writesAfterEvent.get();
    }

    long valuesAfterEvent() {
        return valuesAfterEvent.get();
    }

    /**
     * Writes generation 1 of every key, then rewrites random keys for {@code traffic} while one thread per entry
     * of {@code readers} reads; returns the rewrites done.
     */
    long run(TiffinClient writer, List<TiffinClient> readers, Duration traffic) throws Exception {
        return run(writer, readers, traffic, Duration.ZERO, () -> { });
    }

    /** As {@link #run(TiffinClient, List, Duration)}, running {@code event} {@code after} into the traffic. */
    long run(TiffinClient writer, List<TiffinClient> readers, Duration traffic, Duration after, Runnable event)
            throws Exception {
        for (int k = 0; k < keys; k++) {
            writer.put(key(k), value(k, 1), plain);
            completed.set(k, 1);
        }
        AtomicBoolean stop = new AtomicBoolean();
        try (ExecutorService threads = Executors.newFixedThreadPool(readers.size() + 1)) {
            List<Future<?>> running = new ArrayList<>();
            for (int t = 0; t < readers.size(); t++) {
                TiffinClient reader = readers.get(t);
                SplittableRandom random = new SplittableRandom(t);
                running.add(threads.submit(() -> readLoop(reader, random, stop)));
            }
            Future<?> happened = threads.submit(() -> {
                java.util.concurrent.locks.LockSupport.parkNanos(after.toNanos());
                writeLog.add((System.nanoTime() - startNanos) / 1_000_000 + " ms: the event begins");
                event.run();
                writeLog.add((System.nanoTime() - startNanos) / 1_000_000 + " ms: the event ended");
                eventDone.set(true);
                return null;
            });
            running.add(happened);
            try {
                return writeLoop(writer, new SplittableRandom(42), System.nanoTime() + traffic.toNanos());
            } finally {
                stop.set(true);
                for (Future<?> f : running) {
                    f.get();
                }
            }
        }
    }

    /**
     * Asserts what every run must show: no wrong answer, more rewrites than keys ({@code rewrites}, as {@link #run}
     * returned), more than a hundred answers checked, and most of them values rather than transient errors.
     */
    void assertNoWrongAnswer(long rewrites) {
        assertThat(violations()).as("stale, torn or wrongly missing reads; the writer's log:%n%s",
                String.join("\n", writeLog)).isEmpty();
        assertThat(rewrites).as("rewrites done").isGreaterThan(keys);
        assertThat(reads()).as("answers checked").isGreaterThan(100);
        assertThat(transientFailures()).as("reads that failed without a wrong answer").isLessThan(reads() / 2);
    }

    /** The keys' names, in order. */
    List<String> keyNames() {
        return java.util.stream.IntStream.range(0, keys).mapToObj(this::key).toList();
    }

    /** The bytes key {@code k} must hold once every write has returned: its last written generation's. */
    byte[] expected(int k) {
        return value(k, completed.get(k));
    }

    /** Every wrong answer a reader saw, described. */
    List<String> violations() {
        return List.copyOf(violations);
    }

    /** Answers checked (a batch of two keys gives two). */
    long reads() {
        return reads.get();
    }

    /** Answers that were a transient error rather than a value. */
    long transientFailures() {
        return transientFailures.get();
    }

    private long writeLoop(TiffinClient writer, SplittableRandom random, long endNanos) {
        long generation = 1;
        long done = 0;
        PutOptions forced = plain.withUpsert(true).withReplaceLeased(true);
        PutOptions upsert = plain.withUpsert(true);
        while (System.nanoTime() < endNanos) {
            int k = random.nextInt(keys);
            int other = (k + 1 + random.nextInt(keys - 1)) % keys;
            int op = random.nextInt(4);
            int[] written = op == 3 ? new int[] {k, other} : new int[] {k};
            long[] generations = new long[written.length];
            for (int i = 0; i < written.length; i++) {
                generations[i] = ++generation;
                writes.incrementAndGet(written[i]);
            }
            byte[] v = value(k, generations[0]);
            try {
                retryingBusy(() -> {
                    switch (op) {
                        case 0 -> writer.put(key(k), v, forced);
                        case 1 -> {
                            try {
                                writer.remove(key(k), true);
                            } catch (TiffinException e) {
                                if (e.code() != ErrorCode.OBJECT_NOT_FOUND) { // removed by an earlier attempt
                                    throw e;
                                }
                            }
                            writer.put(key(k), v, plain);
                        }
                        case 2 -> {
                            try {
                                writer.put(key(k), v, upsert);
                            } catch (TiffinException e) {
                                if (e.code() != ErrorCode.OBJECT_HAS_LEASE) {
                                    throw e;
                                }
                                writer.put(key(k), v, forced); // a reader holds a lease: replace it anyway
                            }
                        }
                        default -> {
                            // both keys in one batch; one a node is copying to SSD or back goes on its own (retried)
                            Map<String, byte[]> batch = new LinkedHashMap<>();
                            batch.put(key(k), v);
                            batch.put(key(other), value(other, generations[1]));
                            for (KeyResult<Void> r : writer.batchPut(batch, forced)) {
                                if (r.code() == ErrorCode.OBJECT_HAS_REPLICATION_TASK) {
                                    writer.put(r.key(), batch.get(r.key()), forced);
                                } else {
                                    r.valueOrThrow();
                                }
                            }
                        }
                    }
                });
                for (int i = 0; i < written.length; i++) {
                    completed.set(written[i], generations[i]);
                    uncertain.set(written[i], 0);
                }
                logWrite(op, written, generations, "returned");
                done += written.length;
                if (eventDone.get()) {
                    writesAfterEvent.addAndGet(written.length);
                }
            } catch (TiffinException e) {
                if (outageCodes == null) {
                    throw e;
                }
                failedWrites.incrementAndGet();
                logWrite(op, written, generations, "failed: " + e.getMessage());
                for (int w : written) {
                    uncertain.set(w, 1); // before the write count moves: no read may take the key as quiet
                }
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
            } finally {
                for (int w : written) {
                    writes.incrementAndGet(w);
                }
            }
        }
        return done;
    }

    private void logWrite(int op, int[] written, long[] generations, String outcome) {
        StringBuilder b = new StringBuilder().append((System.nanoTime() - startNanos) / 1_000_000).append(" ms: ")
                .append(switch (op) {
                    case 0 -> "forced put";
                    case 1 -> "remove, put";
                    case 2 -> "upsert";
                    default -> "forced batch put";
                });
        for (int i = 0; i < written.length; i++) {
            b.append(' ').append(key(written[i])).append(" gen ").append(generations[i]);
        }
        writeLog.add(b.append(": ").append(outcome).toString());
    }

    /**
     * Runs {@code write} again while it fails with {@link ErrorCode#OBJECT_HAS_REPLICATION_TASK} (a node is copying
     * the object to SSD or back), as its documentation asks of callers; at most for ten seconds.
     */
    private static void retryingBusy(Runnable write) {
        long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            try {
                write.run();
                return;
            } catch (TiffinException e) {
                if (e.code() != ErrorCode.OBJECT_HAS_REPLICATION_TASK || System.nanoTime() > end) {
                    throw e;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
            }
        }
    }

    private void readLoop(TiffinClient reader, SplittableRandom random, AtomicBoolean stop) {
        try (Arena arena = Arena.ofConfined()) {
            List<MemorySegment> buffers = List.of(arena.allocate(size), arena.allocate(size));
            while (!stop.get()) {
                int k = random.nextInt(keys);
                int other = (k + 1 + random.nextInt(keys - 1)) % keys;
                int[] ks = {k, other};
                // the write counts first: when they show no write under way, the generations read next are current
                long[] writesBefore = {writes.get(k), writes.get(other)};
                long[] before = {completed.get(k), completed.get(other)};
                boolean[] certain = {uncertain.get(k) == 0, uncertain.get(other) == 0};
                int api = random.nextInt(6);
                List<Answer> answers = read(reader, api, key(k), key(other), buffers);
                for (int i = 0; i < answers.size(); i++) {
                    boolean quiet = writesBefore[i] % 2 == 0 && writes.get(ks[i]) == writesBefore[i] && certain[i]
                            && uncertain.get(ks[i]) == 0;
                    check(ks[i], before[i], quiet, answers.get(i), api);
                }
            }
        } catch (RuntimeException | Error e) {
            violations.add("reader failed: " + e);
        }
    }

    private record Answer(ErrorCode code, byte[] value) {
    }

    private interface Read {
        byte[] run();
    }

    /** Reads {@code key} (APIs 0-2) or {@code key} and {@code other} (3-5) through API {@code api}. */
    private static List<Answer> read(TiffinClient reader, int api, String key, String other,
                                     List<MemorySegment> buffers) {
        List<Answer> answers = new ArrayList<>(2);
        try {
            readInto(answers, reader, api, key, other, buffers);
        } catch (TiffinException e) { // a batch call failed as a whole (its master unreachable): both keys' answer
            answers.clear();
            answers.add(new Answer(e.code(), null));
            answers.add(new Answer(e.code(), null));
        }
        return answers;
    }

    private static void readInto(List<Answer> answers, TiffinClient reader, int api, String key, String other,
                                 List<MemorySegment> buffers) {
        switch (api) {
            case 0 -> answers.add(single(() -> reader.get(key)));
            case 1 -> answers.add(single(() -> bytes(buffers.getFirst(), reader.getInto(key, buffers.getFirst()))));
            case 2 -> answers.add(single(() -> {
                try (PinnedValue v = reader.getPinned(key)) {
                    return bytes(v);
                }
            }));
            case 3 -> reader.batchGet(List.of(key, other))
                    .forEach(r -> answers.add(new Answer(r.code(), r.isOk() ? r.value() : null)));
            case 4 -> {
                List<KeyResult<Long>> rs = reader.batchGetInto(List.of(key, other), buffers);
                for (int i = 0; i < 2; i++) {
                    KeyResult<Long> r = rs.get(i);
                    answers.add(new Answer(r.code(), r.isOk() ? bytes(buffers.get(i), r.value()) : null));
                }
            }
            default -> {
                for (KeyResult<PinnedValue> r : reader.batchGetPinned(List.of(key, other))) {
                    if (!r.isOk()) {
                        answers.add(new Answer(r.code(), null));
                        continue;
                    }
                    try (PinnedValue v = r.value()) {
                        answers.add(new Answer(ErrorCode.OK, bytes(v)));
                    }
                }
            }
        }
    }

    private static Answer single(Read read) {
        try {
            return new Answer(ErrorCode.OK, read.run());
        } catch (TiffinException e) {
            return new Answer(e.code(), null);
        }
    }

    /**
     * @param before the generation of the key's last write that had returned when the read started
     * @param quiet  whether no write of the key was under way at any moment of the read
     */
    private void check(int k, long before, boolean quiet, Answer a, int api) {
        reads.incrementAndGet();
        String what = key(k) + " (read API " + api + "): ";
        if (a.code() != ErrorCode.OK) {
            Set<ErrorCode> outage = outageCodes;
            if (outage != null && outage.contains(a.code())) {
                transientFailures.incrementAndGet();
                return;
            }
            if (!TRANSIENT.contains(a.code()) || (quiet && a.code() == ErrorCode.OBJECT_NOT_FOUND)) {
                violations.add(what + a.code() + (quiet ? " with no write under way" : ""));
            }
            transientFailures.incrementAndGet();
            return;
        }
        if (eventDone.get()) {
            valuesAfterEvent.incrementAndGet();
        }
        if (a.value().length != size) {
            violations.add(what + a.value().length + " bytes");
            return;
        }
        ByteBuffer head = ByteBuffer.wrap(a.value());
        long generation = head.getLong();
        int owner = head.getInt();
        if (owner != k || !Arrays.equals(a.value(), value(k, generation))) {
            violations.add(what + "torn or foreign bytes (header: key " + owner + ", generation " + generation + ")");
        } else if (generation < before) {
            violations.add(what + "stale generation " + generation + " after " + before + " had returned");
        } else if (quiet && generation != before) {
            violations.add(what + "generation " + generation + " while " + before
                    + " was the last written and no write was under way");
        }
    }

    private String key(int k) {
        return prefix + k;
    }

    /** Key {@code k}'s value of {@code generation}: the generation, the key, then bytes only they give. */
    private byte[] value(int k, long generation) {
        byte[] v = new byte[size];
        new SplittableRandom(generation * 1_000 + k).nextBytes(v);
        ByteBuffer.wrap(v).putLong(generation).putInt(k);
        return v;
    }

    private static byte[] bytes(MemorySegment segment, long n) {
        return segment.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE);
    }

    private static byte[] bytes(PinnedValue v) {
        byte[] out = new byte[(int) v.size()];
        v.copyTo(MemorySegment.ofArray(out));
        return out;
    }
}
