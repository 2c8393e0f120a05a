package io.tiffin.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * What every target of {@code tiffin bench kv} is given to do: the value sizes, the operations, how
 * many keys a case stores and reads and how many a batch takes, the keys' names and the values' bytes.
 *
 * <p>Thread-safe (immutable; the value sizes are copied).
 *
 * @param valueSizes the sizes measured, in order
 * @param operations of put, get, batch_get and batch_put, those measured on the Tiffin targets
 * @param batchSize keys per batch call at most (see {@link #batchOf})
 * @param replicas memory replicas of every object the Tiffin targets put
 */
record KvWorkload(long[] valueSizes, List<String> operations, int batchSize, int replicas) {
    KvWorkload {
        valueSizes = valueSizes.clone();
        operations = List.copyOf(operations);
        if (replicas < 1) {
            throw new IllegalArgumentException("replicas = " + replicas + " (expected: >= 1)");
        }
    }

    /** One replica per object. */
    KvWorkload(long[] valueSizes, List<String> operations, int batchSize) {
        this(valueSizes, operations, batchSize, 1);
    }

    /** The options of the Tiffin targets' puts: {@link #replicas} replicas; with {@code upsert}, replacing. */
    io.tiffin.api.PutOptions putOptions(boolean upsert) {
        return io.tiffin.api.PutOptions.DEFAULT.withReplicas(replicas).withUpsert(upsert);
    }

    @Override
    public long[] valueSizes() {
        return valueSizes.clone();
    }

    /** The same workload with only {@code ops} measured. */
    KvWorkload withOperations(List<String> ops) {
        return new KvWorkload(valueSizes, ops, batchSize, replicas);
    }

    boolean measures(String operation) {
        return operations.contains(operation);
    }

    /** The largest value size. */
    long maxSize() {
        return Arrays.stream(valueSizes).max().orElse(1);
    }

    /** The largest number of value bytes one case reads from: {@link #keyCount} values of its size. */
    long maxWorkingSet() {
        return Arrays.stream(valueSizes).map(v -> keyCount(v) * v).max().orElse(1);
    }

    /** Keys stored per size: about 128 MiB worth, between 8 and 1024. */
    static int keyCount(long size) {
        return (int) Math.max(8, Math.min(1024, (128L << 20) / size));
    }

    /** Keys per batch call for values of {@code size} among {@code keys}: at most the batch size and 64 MiB. */
    int batchOf(long size, int keys) {
        return (int) Math.max(1, Math.min(Math.min(batchSize, keys), (64L << 20) / size));
    }

    /** Key of client thread {@code thread}'s put case, one of 4 slots it upserts in turn. */
    static String putKey(String prefix, int thread, long slot) {
        return prefix + "put-" + thread + "-" + slot;
    }

    /** Key {@code b} of client thread {@code thread}'s batch-put case (the same keys every call). */
    static String batchPutKey(String prefix, int thread, int b) {
        return prefix + "batch-put-" + thread + "-" + b;
    }

    /** A value of {@code size} random bytes, the same for the same size, 64-byte aligned in {@code arena}. */
    static MemorySegment randomValue(Arena arena, long size) {
        MemorySegment v = arena.allocate(size, 64);
        SplittableRandom r = new SplittableRandom(size);
        for (long off = 0; off + 8 <= size; off += 8) {
            v.set(ValueLayout.JAVA_LONG_UNALIGNED, off, r.nextLong());
        }
        return v;
    }
}
