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
 */
public record PutOptions(int replicas, Optional<String> preferredSegment, boolean softPin, boolean hardPin,
                         boolean upsert) {

    /** One replica, no preference, no pins, no upsert. */
    public static final PutOptions DEFAULT = new PutOptions(1, Optional.empty(), false, false, false);

    public PutOptions {
        if (replicas < 1) {
            throw new IllegalArgumentException("replicas = " + replicas + " (expected: >= 1)");
        }
        Objects.requireNonNull(preferredSegment, "preferredSegment");
    }

    public static PutOptions replicas(int replicas) {
        return DEFAULT.withReplicas(replicas);
    }

    public PutOptions withReplicas(int n) {
        return new PutOptions(n, preferredSegment, softPin, hardPin, upsert);
    }

    public PutOptions withPreferredSegment(String segment) {
        return new PutOptions(replicas, Optional.of(segment), softPin, hardPin, upsert);
    }

    public PutOptions withSoftPin(boolean pin) {
        return new PutOptions(replicas, preferredSegment, pin, hardPin, upsert);
    }

    public PutOptions withHardPin(boolean pin) {
        return new PutOptions(replicas, preferredSegment, softPin, pin, upsert);
    }

    public PutOptions withUpsert(boolean replace) {
        return new PutOptions(replicas, preferredSegment, softPin, hardPin, replace);
    }
}
