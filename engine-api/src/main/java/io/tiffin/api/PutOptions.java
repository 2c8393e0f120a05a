package io.tiffin.api;

import java.util.Objects;
import java.util.Optional;

/**
 * How an object is written.
 *
 * <p>Thread-safe (immutable).
 *
 * @param replicas number of memory replicas wanted (best effort: the put succeeds with at least one,
 *     each on a distinct segment); must be at least 1
 * @param preferredSegment segment name tried first for the first replica, or empty
 * @param softPin keep the object out of the first eviction pass; evicted only when nothing else can
 *     be (unless soft-pinned eviction is disabled on the master)
 * @param hardPin never evict the object; it leaves only through remove
 * @param upsert replace an existing object with this key instead of keeping the old one (a plain put
 *     of an existing key is a successful no-op)
 * @param replaceLeased with {@code upsert}: replace (or with a condition, check) at once even an object being
 *     read; its readers finish reading the old bytes, kept until their read leases end
 * @param ttlMillis the object expires this long after the master starts the put (0 = never): then it is gone
 *     for every client, as if removed
 * @param keepTtl an upsert keeps the replaced object's expiry deadline ({@code ttlMillis} must be 0)
 * @param condition stores the object only if the key holds none ({@link Condition#IF_ABSENT}: else
 *     OBJECT_ALREADY_EXISTS) or only if it holds one ({@link Condition#IF_PRESENT}: else OBJECT_NOT_FOUND),
 *     or only if it holds the object of version {@code expectedVersion} ({@link Condition#IF_VERSION}: else
 *     OBJECT_NOT_FOUND when it holds none, OBJECT_ALREADY_EXISTS when it holds another; also checked when the new
 *     object replaces it at PutEnd, which then fails with OBJECT_NOT_FOUND), checked by the master under the key's
 *     lock; a condition needs {@code upsert}
 * @param expectedVersion with {@link Condition#IF_VERSION}: the version the key must hold (from a read); else 0
 */
public record PutOptions(int replicas, Optional<String> preferredSegment, boolean softPin, boolean hardPin,
                         boolean upsert, boolean replaceLeased, long ttlMillis, boolean keepTtl, Condition condition,
                         long expectedVersion) {

    /** One replica, no preference, no pins, no upsert. */
    public static final PutOptions DEFAULT = new PutOptions(1, Optional.empty(), false, false, false);

    /** When a put stores its object, checked by the master with the key locked. */
    public enum Condition {
        /** Whatever the key holds. */
        ALWAYS,
        /** Only if the key holds no object (Redis {@code SET NX}). */
        IF_ABSENT,
        /** Only if the key holds an object (Redis {@code SET XX}). */
        IF_PRESENT,
        /** Only if the key holds the object of version {@code expectedVersion} (read, then replace: SET ... GET). */
        IF_VERSION
    }

    public PutOptions {
        if (replicas < 1) {
            throw new IllegalArgumentException("replicas = " + replicas + " (expected: >= 1)");
        }
        Objects.requireNonNull(preferredSegment, "preferredSegment");
        Objects.requireNonNull(condition, "condition");
        if (ttlMillis < 0) {
            throw new IllegalArgumentException("ttlMillis = " + ttlMillis + " (expected: >= 0; 0 = never expires)");
        }
        if (keepTtl && ttlMillis != 0) {
            throw new IllegalArgumentException("keepTtl with ttlMillis = " + ttlMillis + ": one or the other");
        }
        if (condition != Condition.ALWAYS && !upsert) {
            throw new IllegalArgumentException("condition " + condition + " needs upsert (a plain put of an existing"
                    + " key is a no-op)");
        }
        if ((condition == Condition.IF_VERSION) != (expectedVersion > 0)) {
            throw new IllegalArgumentException("condition " + condition + " with expectedVersion = " + expectedVersion
                    + " (IF_VERSION needs a version > 0, the other conditions none)");
        }
    }

    /** Without an expected version. */
    public PutOptions(int replicas, Optional<String> preferredSegment, boolean softPin, boolean hardPin,
                      boolean upsert, boolean replaceLeased, long ttlMillis, boolean keepTtl, Condition condition) {
        this(replicas, preferredSegment, softPin, hardPin, upsert, replaceLeased, ttlMillis, keepTtl, condition, 0);
    }

    /** Without the replace, expiry and condition settings. */
    public PutOptions(int replicas, Optional<String> preferredSegment, boolean softPin, boolean hardPin,
                      boolean upsert) {
        this(replicas, preferredSegment, softPin, hardPin, upsert, false, 0, false, Condition.ALWAYS);
    }

    public static PutOptions replicas(int replicas) {
        return DEFAULT.withReplicas(replicas);
    }

    public PutOptions withReplicas(int n) {
        return new PutOptions(n, preferredSegment, softPin, hardPin, upsert, replaceLeased, ttlMillis, keepTtl,
                condition, expectedVersion);
    }

    public PutOptions withPreferredSegment(String segment) {
        return new PutOptions(replicas, Optional.of(segment), softPin, hardPin, upsert, replaceLeased, ttlMillis, keepTtl,
                condition, expectedVersion);
    }

    public PutOptions withSoftPin(boolean pin) {
        return new PutOptions(replicas, preferredSegment, pin, hardPin, upsert, replaceLeased, ttlMillis, keepTtl,
                condition, expectedVersion);
    }

    public PutOptions withHardPin(boolean pin) {
        return new PutOptions(replicas, preferredSegment, softPin, pin, upsert, replaceLeased, ttlMillis, keepTtl,
                condition, expectedVersion);
    }

    public PutOptions withUpsert(boolean replace) {
        return new PutOptions(replicas, preferredSegment, softPin, hardPin, replace, replaceLeased, ttlMillis, keepTtl,
                condition, expectedVersion);
    }

    /** Replaces at once even an object being read (see {@code replaceLeased}); needs {@link #withUpsert}. */
    public PutOptions withReplaceLeased(boolean replace) {
        return new PutOptions(replicas, preferredSegment, softPin, hardPin, upsert, replace, ttlMillis, keepTtl,
                condition, expectedVersion);
    }

    /** Expires the object {@code millis} after the put starts (0 = never); clears {@code keepTtl}. */
    public PutOptions withTtlMillis(long millis) {
        return new PutOptions(replicas, preferredSegment, softPin, hardPin, upsert, replaceLeased, millis, false,
                condition, expectedVersion);
    }

    /** Keeps the replaced object's expiry deadline; clears {@code ttlMillis}. */
    public PutOptions withKeepTtl(boolean keep) {
        return new PutOptions(replicas, preferredSegment, softPin, hardPin, upsert, replaceLeased, keep ? 0 : ttlMillis,
                keep, condition, expectedVersion);
    }

    /** Stores the object only under {@code c} (needs {@link #withUpsert}; for {@link Condition#IF_VERSION} see
     * {@link #withExpectedVersion}). */
    public PutOptions withCondition(Condition c) {
        return new PutOptions(replicas, preferredSegment, softPin, hardPin, upsert, replaceLeased, ttlMillis, keepTtl,
                c, 0);
    }

    /** Stores the object only over the object of {@code version} ({@link Condition#IF_VERSION}; needs upsert). */
    public PutOptions withExpectedVersion(long version) {
        return new PutOptions(replicas, preferredSegment, softPin, hardPin, upsert, replaceLeased, ttlMillis, keepTtl,
                Condition.IF_VERSION, version);
    }
}
