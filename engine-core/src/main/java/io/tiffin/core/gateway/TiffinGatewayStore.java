package io.tiffin.core.gateway;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.netty.buffer.ByteBuf;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.ClusterStats;
import io.tiffin.core.client.PinnedValue;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.util.Ticker;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * {@link GatewayStore} over Tiffin's client. The only class of the gateway that knows {@link TiffinClient}:
 * values move with its zero-copy forms ({@code putFrom}, {@code getInto} on {@link MemorySegment} views of
 * the gateway's direct buffers); SET is a forced upsert ({@code PutOptions.replaceLeased}: the master swaps the
 * new value in at once even while the old one is being read) with its condition and time to live; DEL a forced
 * removal (in both, the master keeps the old value's bytes away from new puts until its readers' leases end, so
 * they never read another object's bytes); EXPIRE, PERSIST and TTL the master's deadlines;
 * listings and statistics come from the client's {@code listKeys} and {@code stats}.
 *
 * <p>A batch put's key that finds no room, or another client's put of it under way, is put again on its own:
 * the single put waits for eviction to make room, and for the other put to end.
 *
 * <p>A read must be given a buffer before it knows the value's size, so the store remembers the sizes it
 * saw (its puts, reads and listings) and reads into a buffer of that size; a key it knows nothing of is
 * read into a small buffer first, and only a value that does not fit costs a listing for its size and a
 * second read (the client then reuses the location it looked up).
 *
 * <p>{@link #lend} is the client's {@link TiffinClient#pinLocal}, or {@code pinLocalAskingMasterInThisJvm} once a
 * value was lent ({@link #lendAfterLookUp} its {@code pinLocalOrLookUp}): a replica in this JVM's segment (the
 * standalone's node) in place for what is left of its read lease, or the hot cache's copy pinned.
 *
 * <p>Thread-safe.
 */
public final class TiffinGatewayStore implements GatewayStore {
    /** The master lists at most this many keys per call. */
    static final int LIST_LIMIT = 100_000;
    /** Size of the first read of a key whose size is unknown. */
    static final int FIRST_READ = 16 * 1024;
    /** Keys per MGET read: bounds the first-read buffers one MGET holds at once to 4 MiB. */
    static final int READ_RUN = 256;
    /** Keys per batch call of the other multi-key commands, well under the master's transport.max-batch-keys. */
    static final int BATCH_RUN = 10_000;
    /** How long a SET waits for another client's put of the same key to end. */
    private static final long CONCURRENT_PUT_WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final TiffinClient client;
    private final boolean owned;
    private final PutOptions putOptions;
    private final String master;
    /** Last size seen per key; a hint only: a wrong one costs a second read, never a wrong answer. */
    private final Cache<String, Integer> sizes = Caffeine.newBuilder().maximumSize(100_000).build();
    /** Whether the client lent a value once: then {@link #lendAfterLookUp} is worth its lookups. */
    private volatile boolean lentBefore;

    private TiffinGatewayStore(TiffinClient client, boolean owned, int replicas, String master) {
        this.client = client;
        this.owned = owned;
        this.putOptions = PutOptions.replicas(replicas).withUpsert(true).withReplaceLeased(true);
        this.master = master;
    }

    /** Connects a client of its own with {@code options}; {@link #close()} closes it. */
    public static TiffinGatewayStore connect(TiffinClient.Options options, int replicas) {
        return new TiffinGatewayStore(TiffinClient.connect(options), true, replicas, options.masterAddress());
    }

    /** Uses {@code client}, which stays the caller's (not closed by {@link #close()}). */
    public static TiffinGatewayStore over(TiffinClient client, int replicas, String masterAddress) {
        return new TiffinGatewayStore(client, false, replicas, masterAddress);
    }

    // --------------------------------------------------------------------------------------- reads

    @Override
    public ByteBuf get(String key, ValueBuffers buffers) {
        Integer hint = sizes.getIfPresent(key);
        ByteBuf buf = buffers.allocate(hint == null ? FIRST_READ : Math.max(1, hint));
        try {
            long n = client.getInto(key, writable(buf));
            return filled(key, buf, n, hint);
        } catch (TiffinException e) {
            buffers.giveBack(buf);
            if (notThere(e.code())) {
                sizes.invalidate(key);
                return null; // absent, or a first put still under way: not there yet
            }
            if (e.code() != ErrorCode.BUFFER_OVERFLOW) {
                throw e;
            }
        }
        return readAtSize(key, buffers);
    }

    /** Only the range's bytes are read ({@link TiffinClient#getRangeInto}). */
    @Override
    public ByteBuf getRange(String key, long offset, int length, ValueBuffers buffers) {
        ByteBuf buf = buffers.allocate(Math.max(1, length));
        try {
            long n = client.getRangeInto(key, offset, writable(buf).asSlice(0, length));
            buf.writerIndex(buf.writerIndex() + (int) n);
            return buf;
        } catch (TiffinException e) {
            if (e.code() == ErrorCode.INVALID_PARAMS) {
                return buf; // replaced by a value that ends before the offset: nothing there
            }
            buf.release();
            if (notThere(e.code())) {
                return null;
            }
            throw e;
        }
    }

    @Override
    public Versioned getVersioned(String key, ValueBuffers buffers) {
        PinnedValue pinned;
        try {
            pinned = client.getPinned(key);
        } catch (TiffinException e) {
            if (notThere(e.code())) {
                return Versioned.ABSENT;
            }
            throw e;
        }
        try (pinned) {
            int size = checkedSize(key, pinned.size());
            ByteBuf buf = buffers.allocate(Math.max(1, size));
            try {
                pinned.copyTo(writable(buf));
            } catch (RuntimeException e) {
                buf.release();
                throw e;
            }
            buf.writerIndex(buf.writerIndex() + size);
            return new Versioned(buf, pinned.version());
        }
    }

    /**
     * Once a value was lent (or with a hot cache), a key whose location the client does not hold is looked up
     * when the master runs in this JVM (the standalone's): a direct call that never waits on the network.
     */
    @Override
    public Lent lend(String key) {
        if (!lentBefore && client.hotCache() == null) {
            return lent(key, client.pinLocal(key));
        }
        try {
            return lent(key, client.pinLocalAskingMasterInThisJvm(key));
        } catch (TiffinException e) {
            // the master of this JVM said so, as it would to the usual read; else it cannot answer now
            return notThere(e.code()) ? MISSING : null;
        }
    }

    /**
     * Looks the key up only once a value was lent (or with a hot cache): a client whose replicas are all on
     * other nodes and that has no cache would pay a lookup of its own per key for nothing.
     */
    @Override
    public Lent lendAfterLookUp(String key) {
        if (!lentBefore && client.hotCache() == null) {
            return null;
        }
        try {
            return lent(key, client.pinLocalOrLookUp(key));
        } catch (TiffinException e) {
            return null; // missing or not readable: the usual read answers it
        }
    }

    private Lent lent(String key, PinnedValue pinned) {
        if (pinned == null) {
            return null;
        }
        if (!lentBefore) {
            lentBefore = true;
        }
        if (pinned.size() > Integer.MAX_VALUE - 64) {
            pinned.close(); // more than one RESP reply carries: the usual path says so
            return null;
        }
        List<MemorySegment> segments = pinned.segments();
        List<ByteBuffer> parts = new ArrayList<>(segments.size());
        for (MemorySegment s : segments) {
            parts.add(s.asByteBuffer());
        }
        return new PinnedLent(client, key, pinned, parts);
    }

    /**
     * A {@link PinnedValue} of {@code key} as a loan; one in place is renewed with a new lease on the same replica
     * ({@link TiffinClient#renewInPlace}). Thread-safe (as the pinned value).
     */
    private record PinnedLent(TiffinClient client, String key, PinnedValue pinned, List<ByteBuffer> parts)
            implements Lent {
        @Override
        public Lent renew() {
            PinnedValue renewed;
            try {
                renewed = client.renewInPlace(key, pinned);
            } catch (TiffinException e) {
                return null; // removed, or the master cannot answer now: the loan ends with its lease
            } catch (IllegalStateException closed) {
                return null; // the loan ended meanwhile (its reply was written): nothing to renew
            }
            return renewed == null ? null : new PinnedLent(client, key, renewed, parts);
        }

        @Override
        public long size() {
            return pinned.size();
        }

        @Override
        public long validForNanos() {
            return pinned.validForNanos();
        }

        @Override
        public void close() {
            pinned.close();
        }
    }

    /**
     * Second try of a read whose value did not fit (every first read of a value over {@link #FIRST_READ} bytes): asks
     * the size, then reads into a buffer that fits. If that does not fit either, the listing and the client's read
     * disagree, as while the location cache still holds the object a replacement in flight replaces (the listing
     * names the replacement): then a read sized by the same lookup it reads with, copied into a gateway buffer (one
     * copy more, on that rare path). Before, the sized read was tried three times and the GET failed with
     * BUFFER_OVERFLOW for as long as the location stayed cached.
     */
    private ByteBuf readAtSize(String key, ValueBuffers buffers) {
        OptionalLong size = size(key);
        if (size.isEmpty()) {
            return null;
        }
        ByteBuf buf = buffers.allocate(checkedSize(key, size.getAsLong()));
        try {
            return filled(key, buf, client.getInto(key, writable(buf)), null);
        } catch (TiffinException e) {
            buf.release();
            if (notThere(e.code())) {
                return null;
            }
            if (e.code() != ErrorCode.BUFFER_OVERFLOW) {
                throw e;
            }
        }
        return readWhole(key, buffers);
    }

    /** The value read by {@link TiffinClient#get} (sized by its own lookup), copied into a gateway buffer. */
    private ByteBuf readWhole(String key, ValueBuffers buffers) {
        byte[] value;
        try {
            value = client.get(key);
        } catch (TiffinException e) {
            if (notThere(e.code())) {
                sizes.invalidate(key);
                return null;
            }
            throw e;
        }
        ByteBuf buf = buffers.allocate(checkedSize(key, Math.max(1, value.length)));
        buf.writeBytes(value);
        remember(key, value.length, null);
        return buf;
    }

    private static int checkedSize(String key, long size) {
        if (size > Integer.MAX_VALUE - 16) {
            throw new TiffinException(ErrorCode.BUFFER_OVERFLOW, "the value of " + key + " is " + size
                    + " bytes, more than one RESP reply can carry");
        }
        return (int) size;
    }

    /** {@code buf} with the {@code n} bytes read; the size remembered unless {@code hint} already was it. */
    private ByteBuf filled(String key, ByteBuf buf, long n, Integer hint) {
        buf.writerIndex(buf.writerIndex() + (int) n);
        remember(key, (int) n, hint);
        return buf;
    }

    private void remember(String key, int size, Integer known) {
        if (known == null || known != size) {
            sizes.put(key, size);
        }
    }

    /** A view of the writable bytes of a gateway buffer. */
    private static MemorySegment writable(ByteBuf buf) {
        return MemorySegment.ofBuffer(buf.nioBuffer(buf.writerIndex(), buf.writableBytes()));
    }

    @Override
    public List<KeyResult<ByteBuf>> getAll(List<String> keys, ValueBuffers buffers) {
        List<KeyResult<ByteBuf>> out = new ArrayList<>(keys.size());
        try {
            for (int from = 0; from < keys.size(); from += READ_RUN) {
                out.addAll(getRun(keys.subList(from, Math.min(keys.size(), from + READ_RUN)), buffers));
            }
            return out;
        } catch (RuntimeException e) {
            out.forEach(r -> {
                if (r.isOk()) {
                    r.value().release();
                }
            });
            throw e;
        }
    }

    /**
     * {@code f} of each run of at most {@link #BATCH_RUN} keys, the results in order: a command may name up to
     * gateway.max-array-length keys, a batch request to the master at most transport.max-batch-keys.
     */
    private static <T> List<KeyResult<T>> inRuns(List<String> keys,
                                                 java.util.function.BiFunction<Integer, Integer, List<KeyResult<T>>> f) {
        if (keys.size() <= BATCH_RUN) {
            return f.apply(0, keys.size());
        }
        List<KeyResult<T>> out = new ArrayList<>(keys.size());
        for (int from = 0; from < keys.size(); from += BATCH_RUN) {
            out.addAll(f.apply(from, Math.min(keys.size(), from + BATCH_RUN)));
        }
        return out;
    }

    /** {@link #getAll} of one run of keys: a first-read buffer each (the size last seen, else 16 KiB). */
    private List<KeyResult<ByteBuf>> getRun(List<String> keys, ValueBuffers buffers) {
        int n = keys.size();
        List<ByteBuf> bufs = new ArrayList<>(n);
        List<MemorySegment> segments = new ArrayList<>(n);
        List<KeyResult<ByteBuf>> out = new ArrayList<>(n);
        try {
            Integer[] hints = new Integer[n];
            for (int i = 0; i < n; i++) {
                hints[i] = sizes.getIfPresent(keys.get(i));
                ByteBuf buf = buffers.allocate(hints[i] == null ? FIRST_READ : Math.max(1, hints[i]));
                bufs.add(buf);
                segments.add(writable(buf));
            }
            List<KeyResult<Long>> read = client.batchGetInto(keys, segments);
            for (int i = 0; i < n; i++) {
                KeyResult<Long> r = read.get(i);
                ByteBuf buf = bufs.get(i);
                bufs.set(i, null);
                if (r.isOk()) {
                    out.add(KeyResult.ok(keys.get(i), filled(keys.get(i), buf, r.value(), hints[i])));
                    continue;
                }
                buffers.giveBack(buf); // its memory serves the next buffers: an MGET holds its values', not its guesses
                if (r.code() == ErrorCode.BUFFER_OVERFLOW) {
                    out.add(readOne(keys.get(i), buffers));
                } else {
                    out.add(KeyResult.failed(keys.get(i), r.code() == ErrorCode.REPLICA_IS_NOT_READY
                            ? ErrorCode.OBJECT_NOT_FOUND : r.code()));
                }
            }
            return out;
        } catch (RuntimeException e) {
            bufs.forEach(b -> {
                if (b != null) {
                    b.release();
                }
            });
            out.forEach(r -> {
                if (r.isOk()) {
                    r.value().release();
                }
            });
            throw e;
        }
    }

    private KeyResult<ByteBuf> readOne(String key, ValueBuffers buffers) {
        try {
            ByteBuf b = readAtSize(key, buffers);
            return b == null ? KeyResult.failed(key, ErrorCode.OBJECT_NOT_FOUND) : KeyResult.ok(key, b);
        } catch (TiffinException e) {
            return KeyResult.failed(key, e.code());
        }
    }

    // -------------------------------------------------------------------------------------- writes

    @Override
    public void put(String key, ByteBuf value) {
        put(key, value, PutTerms.PLAIN);
    }

    /** The client's {@link TiffinClient#tryPutInThisJvm}: in the standalone, the master and the segment are here. */
    @Override
    public java.util.concurrent.CompletableFuture<Void> putWithoutWaiting(String key, ByteBuf value) {
        var stored = client.tryPutInThisJvm(key, readable(value), putOptions);
        if (stored != null) {
            remember(key, value.readableBytes(), sizes.getIfPresent(key));
        }
        return stored;
    }

    @Override
    public boolean put(String key, ByteBuf value, PutTerms terms) {
        MemorySegment segment = readable(value);
        PutOptions options = terms.equals(PutTerms.PLAIN) ? putOptions
                : (terms.condition() == PutOptions.Condition.IF_VERSION
                        ? putOptions.withExpectedVersion(terms.expectedVersion())
                        : putOptions.withCondition(terms.condition()))
                .withTtlMillis(terms.ttlMillis()).withKeepTtl(terms.keepTtl());
        long deadline = Ticker.SYSTEM.nanos() + CONCURRENT_PUT_WAIT_NANOS;
        for (int attempt = 0; ; attempt++) {
            try {
                client.putFrom(key, segment, options);
                remember(key, value.readableBytes(), sizes.getIfPresent(key));
                return true;
            } catch (TiffinException e) {
                if (e.code() == ErrorCode.OBJECT_ALREADY_EXISTS && terms.condition() == PutOptions.Condition.IF_ABSENT
                        || e.code() == ErrorCode.OBJECT_NOT_FOUND && terms.condition() == PutOptions.Condition.IF_PRESENT) {
                    return false; // NX of a key that holds a value, XX of one that holds none
                }
                if (terms.condition() == PutOptions.Condition.IF_VERSION && (e.code() == ErrorCode.OBJECT_NOT_FOUND
                        || e.code() == ErrorCode.OBJECT_ALREADY_EXISTS || e.code() == ErrorCode.REPLICA_IS_NOT_READY)) {
                    return false; // the key no longer holds the value read (or another SET of it is under way)
                }
                // another client's put of the key is under way: ours comes after it, as Redis orders two SETs
                if (e.code() != ErrorCode.OBJECT_ALREADY_EXISTS || Ticker.SYSTEM.nanos() > deadline) {
                    throw e;
                }
                LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(Math.min(50_000, 100L << Math.min(attempt, 9))));
            }
        }
    }

    @Override
    public boolean expire(String key, long ttlMillis) {
        return client.expire(key, ttlMillis);
    }

    @Override
    public boolean expire(String key, long ttlMillis, io.tiffin.core.client.ExpireCondition condition) {
        return client.expire(key, ttlMillis, condition);
    }

    @Override
    public boolean persist(String key) {
        return client.persist(key);
    }

    @Override
    public long ttlMillis(String key) {
        return client.ttlMillis(key);
    }

    @Override
    public List<KeyResult<Void>> putAll(List<String> keys, List<ByteBuf> values) {
        return inRuns(keys, (from, to) -> putRun(keys.subList(from, to), values.subList(from, to)));
    }

    private List<KeyResult<Void>> putRun(List<String> keys, List<ByteBuf> values) {
        List<MemorySegment> segments = new ArrayList<>(values.size());
        for (ByteBuf v : values) {
            segments.add(readable(v));
        }
        List<KeyResult<Void>> results = new ArrayList<>(client.batchPutFrom(keys, segments, putOptions));
        for (int i = 0; i < results.size(); i++) {
            KeyResult<Void> r = results.get(i);
            // another client's put of the key under way, no room yet or a node copying the old value to SSD or
            // back: the single put waits for each
            if (r.code() == ErrorCode.OBJECT_ALREADY_EXISTS || r.code() == ErrorCode.NO_AVAILABLE_HANDLE
                    || r.code() == ErrorCode.REPLICA_IS_NOT_READY
                    || r.code() == ErrorCode.OBJECT_HAS_REPLICATION_TASK) {
                try {
                    put(keys.get(i), values.get(i));
                    results.set(i, KeyResult.ok(keys.get(i), null));
                } catch (TiffinException e) {
                    results.set(i, KeyResult.failed(keys.get(i), e.code()));
                }
            } else if (r.isOk()) {
                remember(keys.get(i), values.get(i).readableBytes(), sizes.getIfPresent(keys.get(i)));
            }
        }
        return results;
    }

    /** A view of the readable bytes of a value; one copy for the rare buffer that is not one piece of memory. */
    private static MemorySegment readable(ByteBuf value) {
        if (value.nioBufferCount() == 1) {
            return MemorySegment.ofBuffer(value.nioBuffer(value.readerIndex(), value.readableBytes()));
        }
        byte[] copy = new byte[value.readableBytes()];
        value.getBytes(value.readerIndex(), copy);
        return MemorySegment.ofArray(copy);
    }

    @Override
    public Boolean existsAtHand(String key) {
        try {
            return client.existsAskingMasterInThisJvm(key);
        } catch (TiffinException e) {
            // a first put under way is not there yet, as for exists(); else the master cannot answer now
            return notThere(e.code()) ? Boolean.FALSE : null;
        }
    }

    @Override
    public List<KeyResult<Boolean>> exists(List<String> keys) {
        return inRuns(keys, (from, to) -> eachResult(client.batchExists(keys.subList(from, to)),
                r -> notThere(r.code()) ? KeyResult.ok(r.key(), false) : r));
    }

    @Override
    public List<KeyResult<Void>> remove(List<String> keys) {
        keys.forEach(sizes::invalidate);
        // a first put still under way is not there yet: the removal came before it
        return inRuns(keys, (from, to) -> eachResult(client.batchRemove(keys.subList(from, to), true),
                r -> r.code() == ErrorCode.REPLICA_IS_NOT_READY ? KeyResult.failed(r.key(), ErrorCode.OBJECT_NOT_FOUND)
                        : r));
    }

    /** Whether a key's code says it holds no value for a reader: missing, or a first put still under way. */
    private static boolean notThere(ErrorCode code) {
        return code == ErrorCode.OBJECT_NOT_FOUND || code == ErrorCode.REPLICA_IS_NOT_READY;
    }

    /** The client's per-key results as the gateway answers them: {@code f} of each, in order. */
    private static <T> List<KeyResult<T>> eachResult(List<KeyResult<T>> results,
                                                    java.util.function.UnaryOperator<KeyResult<T>> f) {
        List<KeyResult<T>> out = new ArrayList<>(results.size());
        for (KeyResult<T> r : results) {
            out.add(f.apply(r));
        }
        return out;
    }

    // ------------------------------------------------------------------------- listings and figures

    @Override
    public long sizeHint(String key) {
        Integer size = sizes.getIfPresent(key);
        return size == null ? -1 : size;
    }

    @Override
    public OptionalLong size(String key) {
        List<io.tiffin.core.client.KeyListing.KeySize> listed = client.listKeys(key, 1).keys();
        if (listed.isEmpty() || !listed.getFirst().key().equals(key)) {
            sizes.invalidate(key);
            return OptionalLong.empty();
        }
        long size = listed.getFirst().size();
        if (size <= Integer.MAX_VALUE) {
            sizes.put(key, (int) size);
        }
        return OptionalLong.of(size);
    }

    @Override
    public KeyListing list(String prefix, int limit) {
        io.tiffin.core.client.KeyListing listing = client.listKeys(prefix, Math.max(1, Math.min(limit, LIST_LIMIT)));
        List<String> keys = new ArrayList<>(listing.keys().size());
        listing.keys().forEach(k -> keys.add(k.key()));
        return new KeyListing(keys, listing.truncated());
    }

    @Override
    public int listLimit() {
        return LIST_LIMIT;
    }

    @Override
    public long removeAll() {
        sizes.invalidateAll();
        return client.removeAll(true);
    }

    @Override
    public StoreStats stats() {
        ClusterStats s = client.stats();
        return new StoreStats(s.version(), s.keys(), s.capacity(), s.used(), s.liveNodes(), s.evictedKeys(), s.expiringKeys());
    }

    @Override
    public String describe() {
        return master;
    }

    @Override
    public void close() {
        if (owned) {
            client.close();
        }
    }
}
