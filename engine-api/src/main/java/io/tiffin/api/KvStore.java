package io.tiffin.api;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The Tiffin client: stores and reads objects (byte values under string keys) in a cluster's pooled
 * memory.
 *
 * <p><b>Semantics</b> (those of Mooncake Store):
 * <ul>
 *   <li>A put of a key that already holds a complete object is a successful no-op: the old bytes stay
 *       (ask for {@link PutOptions#upsert()} to replace them).</li>
 *   <li>Each replica lives on a distinct segment; the put succeeds when at least one replica could be
 *       placed (best effort).</li>
 *   <li>Every read takes a read lease (default 10 s). A read that does not finish within the lease
 *       fails with {@link ErrorCode#LEASE_EXPIRED}: the bytes may have been evicted and reused. A
 *       leased object cannot be removed without {@code force}.</li>
 *   <li>Objects may be evicted when memory runs short: a get may answer
 *       {@link ErrorCode#OBJECT_NOT_FOUND} for a key that was put earlier.</li>
 * </ul>
 *
 * <p><b>Errors</b>: single-key calls throw {@link TiffinException}; batch calls return one
 * {@link KeyResult} per key, in request order, and throw only when the whole call failed (for example
 * the master is unreachable). A missing key is {@link ErrorCode#OBJECT_NOT_FOUND}. Every call may also
 * fail with:
 * <ul>
 *   <li>{@link ErrorCode#INVALID_KEY}: a null or empty key, one longer than {@code master.max-key-length}
 *       bytes of UTF-8, or one that is not valid Unicode (an unpaired surrogate);</li>
 *   <li>{@link ErrorCode#INVALID_PARAMS}: other arguments the call cannot use (a null value, list or
 *       option; a closed or, as a destination, read-only segment; a value over {@code master.max-object-size};
 *       a request over the transport's limits). A value of 0 bytes is stored, as Mooncake stores it;</li>
 *   <li>{@link ErrorCode#RPC_FAIL}, {@link ErrorCode#RPC_TIMEOUT}: the master could not be reached or did
 *       not answer in time (the client reconnects by itself on the next call);
 *       {@link ErrorCode#TRANSFER_FAIL}: moving bytes to or from a node failed (every replica tried). A
 *       calling thread interrupted while it waited fails with one of these, its message saying so;</li>
 *   <li>{@link ErrorCode#UNAVAILABLE_IN_CURRENT_STATUS}: the client is closed.</li>
 * </ul>
 *
 * <p><b>Threads</b>: implementations are thread-safe; one instance serves many threads and should be
 * shared. {@link #close()} releases connections and any memory the client owns; calls after close
 * fail with {@link ErrorCode#UNAVAILABLE_IN_CURRENT_STATUS}.
 *
 * <p><b>Zero-copy forms</b>: {@link #putFrom} and {@link #getInto} read from / write into a caller's
 * {@link MemorySegment}. The caller owns the segment and must keep it alive (not close its arena)
 * until the call returns; the client never retains it. Bytes move on the client's network threads, so
 * a segment of an {@code Arena.ofShared()}, global or automatic arena is used directly; a
 * thread-confined one ({@code Arena.ofConfined()}) works too but costs one extra copy on the calling
 * thread.
 */
public interface KvStore extends AutoCloseable {

    /** Stores {@code value} under {@code key} with {@link PutOptions#DEFAULT}. */
    default void put(String key, byte[] value) {
        put(key, value, PutOptions.DEFAULT);
    }

    /**
     * Stores {@code value} under {@code key}. A put of an existing complete key is a no-op.
     *
     * @throws TiffinException {@link ErrorCode#NO_AVAILABLE_HANDLE} when no segment has room (after
     *     eviction was given a moment); with upsert, {@link ErrorCode#OBJECT_HAS_LEASE} while the old
     *     object is being read (any get, exists or locate of it in the last lease period),
     *     {@link ErrorCode#OBJECT_HAS_REPLICATION_TASK} while a node copies it to or from SSD,
     *     {@link ErrorCode#REPLICA_IS_NOT_READY} while it is being written; see also the class comment
     */
    void put(String key, byte[] value, PutOptions options);

    /** Stores the bytes of {@code value} (its whole length) under {@code key}, without a heap copy. */
    void putFrom(String key, MemorySegment value, PutOptions options);

    /**
     * Returns the object's bytes.
     *
     * @throws TiffinException {@link ErrorCode#OBJECT_NOT_FOUND} when absent,
     *     {@link ErrorCode#REPLICA_IS_NOT_READY} while it is being written, {@link ErrorCode#LEASE_EXPIRED}
     *     when the read outlived its lease, {@link ErrorCode#BUFFER_OVERFLOW} for an object too large for
     *     a {@code byte[]} (use {@link #getInto}); see also the class comment
     */
    byte[] get(String key);

    /**
     * Reads the object into {@code destination} and returns its size. Throws
     * {@link ErrorCode#BUFFER_OVERFLOW} when the destination is smaller than the object.
     */
    long getInto(String key, MemorySegment destination);

    /** Stores several objects in one round trip per phase; one result per key, in order. */
    List<KeyResult<Void>> batchPut(Map<String, byte[]> values, PutOptions options);

    /**
     * Zero-copy batch put: {@code keys.get(i)} takes the bytes of {@code values.get(i)}. A key that
     * appears twice is put once, with its first value; the later occurrence reports OK as a put of an
     * existing key does (with upsert too: the later occurrence's value is not stored). A null key, or one that is not valid Unicode, refuses the whole batch with
     * {@link ErrorCode#INVALID_KEY}; other per-key problems fail that key only.
     */
    List<KeyResult<Void>> batchPutFrom(List<String> keys, List<MemorySegment> values, PutOptions options);

    /** Reads several objects; one result per key, in order. */
    List<KeyResult<byte[]>> batchGet(List<String> keys);

    /** Zero-copy batch read into {@code destinations.get(i)}; each result holds the object size. */
    List<KeyResult<Long>> batchGetInto(List<String> keys, List<MemorySegment> destinations);

    /** True if the key holds a readable object (grants a read lease when true). */
    boolean exists(String key);

    /** {@link #exists} for several keys; one result per key, in order. */
    List<KeyResult<Boolean>> batchExists(List<String> keys);

    /** Removes the object; fails with {@link ErrorCode#OBJECT_HAS_LEASE} while it is being read. */
    default void remove(String key) {
        remove(key, false);
    }

    /**
     * Removes the object; {@code force} ignores read leases.
     *
     * @throws TiffinException {@link ErrorCode#OBJECT_NOT_FOUND}, {@link ErrorCode#OBJECT_HAS_LEASE}
     *     (without force), {@link ErrorCode#REPLICA_IS_NOT_READY} while it is being written,
     *     {@link ErrorCode#OBJECT_HAS_REPLICATION_TASK} while a node copies it to or from SSD
     */
    void remove(String key, boolean force);

    /** Removes several objects; one result per key, in order. */
    List<KeyResult<Void>> batchRemove(List<String> keys, boolean force);

    /**
     * Removes every object whose key matches {@code regex} (RE2 syntax, searched anywhere in the key,
     * so anchor with {@code ^} for a prefix) and returns how many were removed. Leased objects are
     * skipped unless {@code force}. An invalid pattern fails with {@link ErrorCode#INVALID_PARAMS}.
     */
    long removeByRegex(String regex, boolean force);

    /** Removes every object (leased ones only with {@code force}); returns how many. */
    long removeAll(boolean force);

    /** The replicas of the key, with a read lease; empty when the key is absent. */
    Optional<ObjectLocation> locate(String key);

    /**
     * The replicas of every key matching {@code regex} (RE2 syntax), with read leases.
     *
     * @throws TiffinException {@link ErrorCode#INVALID_PARAMS} for an invalid pattern, or when the
     *     matches' locations do not fit one answer (about 16 MiB): narrow the pattern
     */
    Map<String, ObjectLocation> locateByRegex(String regex);

    /** Releases connections and owned memory. Idempotent. */
    @Override
    void close();
}
