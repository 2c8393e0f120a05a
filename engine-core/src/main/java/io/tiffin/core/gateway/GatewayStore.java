package io.tiffin.core.gateway;

import io.netty.buffer.ByteBuf;
import io.tiffin.api.KeyResult;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.OptionalLong;

/**
 * The store as the Redis gateway sees it: the one door through which every RESP command reaches Tiffin.
 * Values travel as Netty buffers so that a value moves from the socket to the store (and back) without
 * a heap copy. {@link TiffinGatewayStore} implements it over Tiffin's client; nothing else in the gateway
 * knows the client.
 *
 * <p>Semantics the commands rely on: {@link #put} replaces an existing value at once and {@link #remove} removes
 * it at once, even while the value is being read (readers that already hold its location finish reading the
 * old bytes); a value may carry an expiry deadline, kept by the master, after which it is gone for everyone. Keys are Unicode strings (the gateway refuses keys that are not UTF-8).
 *
 * <p>Errors: single-key calls throw {@link io.tiffin.api.TiffinException}; batch calls return one
 * {@link KeyResult} per key, in order, and throw only when the whole call failed.
 *
 * <p>Implementations must be thread-safe: every connection calls them from its own thread.
 */
public interface GatewayStore extends AutoCloseable {

    /**
     * Gives the buffer a value of {@code size} bytes is read into.
     *
     * <p>Not thread-safe unless an implementation says so: a store calls it on the thread of the read.
     */
    @FunctionalInterface
    interface ValueBuffers {
        /**
         * A buffer with at least {@code size} writable bytes, owned by the caller of the read until it is
         * handed back in a result (then owned by whoever receives the result).
         *
         * @throws io.tiffin.api.TiffinException when no memory can be had
         */
        ByteBuf allocate(int size);

        /**
         * Releases {@code buf}, a buffer of this call that no result will carry (a key found missing, a value that
         * did not fit), so that its memory serves the call's next buffers.
         */
        default void giveBack(ByteBuf buf) {
            buf.release();
        }
    }

    /**
     * The value of {@code key} in a buffer from {@code buffers} (readable bytes = the value), or null when
     * the key holds no value.
     */
    ByteBuf get(String key, ValueBuffers buffers);

    /**
     * Up to {@code length} bytes of the value of {@code key} from {@code offset} on, in a buffer from {@code buffers}
     * (fewer when the value ends first; none when it ends before {@code offset}), or null when the key holds no
     * value. The default reads the whole value and keeps the range; a store that can read ranges moves only them.
     */
    default ByteBuf getRange(String key, long offset, int length, ValueBuffers buffers) {
        ByteBuf value = get(key, buffers);
        if (value == null) {
            return null;
        }
        long from = Math.min(offset, value.readableBytes());
        int n = (int) Math.min(length, value.readableBytes() - from);
        ByteBuf range = value.retainedSlice(value.readerIndex() + (int) from, n);
        value.release();
        return range;
    }

    /**
     * The value of {@code key} if the store has it at hand: no network call, no transfer, no wait (the caller may
     * be an event loop; a store may ask a master of its own JVM directly, as that master's event loops do). The bytes are lent, not copied: read-only views of memory the store holds for this value
     * until the {@link Lent} is closed, and at most for {@link Lent#validForNanos()}. {@link #MISSING} when the
     * store knows at hand that the key holds no value now (as {@link #get} would answer). Null when the store does
     * not have it at hand (then use {@link #get}, which also tells a missing key); the default never has.
     */
    default Lent lend(String key) {
        return null;
    }

    /**
     * Whether {@code key} holds a value, if the store knows without a wait (the caller may be an event loop; as
     * {@link #lend}, a store may ask a master of its own JVM directly); null when it would have to wait (then
     * use {@link #exists}). The default never knows.
     */
    default Boolean existsAtHand(String key) {
        return null;
    }

    /**
     * {@link #lend}, but the store may wait for what it needs to know (e.g. where the value is): for a command
     * thread, never an event loop. Null when it cannot lend the value (then use {@link #get}).
     */
    default Lent lendAfterLookUp(String key) {
        return null;
    }

    /** {@link #lend}'s answer for a key that holds no value: nothing to read or close. */
    Lent MISSING = new Lent() {
        @Override
        public List<ByteBuffer> parts() {
            return List.of();
        }

        @Override
        public long size() {
            return 0;
        }

        @Override
        public long validForNanos() {
            return 0;
        }

        @Override
        public void close() {
            // nothing was lent
        }

        @Override
        public String toString() {
            return "MISSING";
        }
    };

    /**
     * Bytes of a value lent by {@link #lend}: its owner (whoever holds it) closes it exactly once, after the
     * last use of {@link #parts()}.
     *
     * <p>Thread-safe: the parts may be read from any thread, and closed from another.
     */
    interface Lent extends AutoCloseable {
        /** The value's bytes in order: read-only direct buffers (their position and limit are the caller's). */
        List<ByteBuffer> parts();

        /** The value's size, bytes. */
        long size();

        /**
         * How much longer the parts hold this value's bytes, nanoseconds ({@link Long#MAX_VALUE}: until
         * closed). After that they may hold another value's bytes: whatever still reads them must stop first.
         */
        long validForNanos();

        /**
         * A new loan of the same bytes at the same addresses (the same value, {@link #parts()} of identical
         * memory), valid for longer than this one, for a reader that needs them past {@link #validForNanos()}; null
         * when the store cannot give one (the value was replaced, removed or moved, or the store does not renew).
         * May wait (a lookup): for a command thread, never an event loop. The caller closes both loans. The
         * default never renews.
         */
        default Lent renew() {
            return null;
        }

        /** Ends the loan; idempotent. */
        @Override
        void close();
    }

    /**
     * {@link #get} for several keys in one call; a missing key is {@code OBJECT_NOT_FOUND}. The buffers of
     * the OK results belong to the caller.
     */
    List<KeyResult<ByteBuf>> getAll(List<String> keys, ValueBuffers buffers);

    /** Stores the readable bytes of {@code value} under {@code key}, replacing any value; the caller keeps the buffer. */
    void put(String key, ByteBuf value);

    /**
     * {@link #put} made without any wait (the caller may be an event loop), when the store can: null when it
     * cannot (nothing stored; then {@link #put}); the default never can. Otherwise the value is stored when this
     * returns and the caller may release the buffer; the future completes when {@link #put} would have returned,
     * or exceptionally with what it would have thrown.
     */
    default java.util.concurrent.CompletableFuture<Void> putWithoutWaiting(String key, ByteBuf value) {
        return null;
    }

    /**
     * {@link #put} under {@code terms}: only if the key holds no value or only if it holds one (checked by the
     * master with the put, as one step), with a time to live or keeping the replaced value's. Returns false when
     * the condition did not hold (nothing stored).
     */
    boolean put(String key, ByteBuf value, PutTerms terms);

    /**
     * Gives {@code key}'s value a time to live of {@code ttlMillis} (0: it goes now); false when the key holds
     * none.
     */
    boolean expire(String key, long ttlMillis);

    /**
     * {@link #expire(String, long)} only if {@code condition} holds, checked with the set as one step; false when
     * the key holds none or the condition does not hold.
     */
    boolean expire(String key, long ttlMillis, io.tiffin.core.client.ExpireCondition condition);

    /** Drops {@code key}'s time to live; false when it had none or the key holds no value. */
    boolean persist(String key);

    /** {@code key}'s time to live in ms, -1 when it has none, -2 when the key holds no value. */
    long ttlMillis(String key);

    /**
     * How a SET stores: its condition and time to live.
     *
     * <p>Thread-safe (immutable).
     *
     * @param condition NX ({@code IF_ABSENT}), XX ({@code IF_PRESENT}), only over the value read
     *     ({@code IF_VERSION}, SET ... GET) or none ({@code ALWAYS})
     * @param ttlMillis time to live (> 0), or 0 for none
     * @param keepTtl keep the replaced value's time to live (KEEPTTL)
     * @param expectedVersion with {@code IF_VERSION}: the {@link Versioned#version()} read; else 0
     */
    record PutTerms(io.tiffin.api.PutOptions.Condition condition, long ttlMillis, boolean keepTtl,
                    long expectedVersion) {
        /** A plain SET: no condition, no time to live. */
        public static final PutTerms PLAIN = new PutTerms(io.tiffin.api.PutOptions.Condition.ALWAYS, 0, false);

        /** Without an expected version. */
        public PutTerms(io.tiffin.api.PutOptions.Condition condition, long ttlMillis, boolean keepTtl) {
            this(condition, ttlMillis, keepTtl, 0);
        }
    }

    /**
     * The value of {@code key} in a buffer from {@code buffers} and its version, read under a fresh lookup (not
     * a location reused from earlier): what a {@link #put} with {@code IF_VERSION} of that version replaces.
     * {@link Versioned#ABSENT} when the key holds no value.
     */
    Versioned getVersioned(String key, ValueBuffers buffers);

    /**
     * A value and its version (the store's numbering: a later value of the key has a higher one).
     *
     * <p>Thread-safe (immutable; the buffer is its receiver's).
     *
     * @param value the bytes (readable bytes = the value), or null when the key holds none
     * @param version the value's version, 0 when none
     */
    record Versioned(ByteBuf value, long version) {
        public static final Versioned ABSENT = new Versioned(null, 0);
    }

    /** {@link #put} for several distinct keys in one call. */
    List<KeyResult<Void>> putAll(List<String> keys, List<ByteBuf> values);

    /** Whether each key holds a value. */
    List<KeyResult<Boolean>> exists(List<String> keys);

    /** Removes each key's value at once; {@code OBJECT_NOT_FOUND} for a key that held none. */
    List<KeyResult<Void>> remove(List<String> keys);

    /**
     * The size the store last saw for {@code key}'s value, from memory only (no call), or -1 when it does not
     * know; a hint, which may be out of date.
     */
    long sizeHint(String key);

    /** The size of the value of {@code key}, without reading it; empty when the key holds none. */
    OptionalLong size(String key);

    /**
     * Keys starting with {@code prefix}, in {@link String#compareTo} order, at most {@code limit} (no more than
     * {@link #listLimit()}), and whether more exist.
     */
    KeyListing list(String prefix, int limit);

    /** The most keys one {@link #list} call returns. */
    int listLimit();

    /** Removes every value; returns how many. */
    long removeAll();

    /** The store's figures for INFO and DBSIZE. */
    StoreStats stats();

    /** Where the store is, for INFO (e.g. the master's address). */
    String describe();

    /** Releases what the store owns; idempotent. */
    @Override
    void close();

    /**
     * Keys of a listing.
     *
     * <p>Thread-safe (immutable).
     *
     * @param keys the keys, in order
     * @param truncated whether more keys matched than were returned
     */
    record KeyListing(List<String> keys, boolean truncated) {
        public KeyListing {
            keys = List.copyOf(keys);
        }
    }

    /**
     * The store's figures.
     *
     * <p>Thread-safe (immutable).
     *
     * @param version Tiffin version of the master
     * @param keys objects stored
     * @param capacity bytes of memory the nodes contribute
     * @param used bytes of it in use
     * @param liveNodes nodes alive
     * @param evictedKeys objects evicted since the master started
     * @param expiringKeys objects with an expiry deadline
     */
    record StoreStats(String version, long keys, long capacity, long used, int liveNodes, long evictedKeys,
                      long expiringKeys) {
    }
}
