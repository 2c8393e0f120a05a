package io.tiffin.core.client;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaType;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;

/**
 * Where this client last saw each key's bytes — the first memory replica its last lookup named or its
 * last put wrote — so that a get can send the node read together with the master lookup (one round
 * trip of waiting instead of two) and keep the bytes only if the lookup confirms them.
 *
 * <p><b>Why a confirmed read is the object's bytes.</b> A hint is a replica the master reported complete
 * at some moment t0 (the lookup's answer, or the PutEnd of this client's own put). The speculative read
 * reaches the node at some moment tr, and the lookup sent with it is answered at tl. The read counts only
 * if that answer names the same replica: same replica id, mount epoch, node endpoint, segment, offset and
 * size. The master never gives a replica id twice (ids are drawn from a counter seeded with its start
 * time), never changes a complete replica's bytes in place (an upsert, a promotion or a re-put creates a
 * new replica), and a replica that is gone never comes back. So the replica existed without a change from
 * t0 to tl; if tr fell in between, the bytes read are its bytes, and if tr came after tl, the lease the
 * lookup granted covers the read, exactly as for a get that waits for its lookup (the read must end
 * within that lease). The node checks the mount epoch as for any read, so a hint from before a master
 * restart or a re-mount never reaches the segment's new bytes. A read the lookup does not confirm — the
 * key was removed, evicted, re-put or moved — is not received into the caller's memory: its answer is
 * read and thrown away (or its connection closed), and the get reads the replica the lookup named.
 *
 * <p><b>What it costs.</b> A stale hint costs a wasted node read; the master sees the same lookups as
 * without hints (leases, eviction order and metrics do not change). About 150 bytes of heap per key
 * besides the key itself (the replica's segment and endpoint are shared between keys). Objects with a
 * replica this client reads through a memory mapping (same JVM, same-host shared memory) get no hint.
 *
 * <p>Thread-safe (Caffeine caches; counters are {@link LongAdder}s). Holds no off-heap memory.
 */
public final class ReadHints {
    /** Default of {@code client.read-hint-cache-size}. */
    public static final long DEFAULT_SIZE = io.tiffin.core.config.TiffinConfigKeys.DEFAULT_READ_HINT_CACHE_SIZE;

    /** Counters since the client started: reads the lookup confirmed, reads it did not (dropped). */
    public record Stats(long confirmed, long refuted, long size) {
    }

    /** A segment on a node, shared by the hints of all keys with a replica there. */
    public record Place(String segment, String endpoint) {
    }

    /**
     * A remembered memory replica: where it is ({@code place}, {@code offset}, {@code size}) and what
     * identifies it ({@code replicaId}, {@code mountEpoch}); {@code grant} is the descriptor's (null: none), sent
     * with the read (a node refuses an expired one, and the get reads what the lookup names).
     */
    public record Hint(Place place, long replicaId, long offset, long size, long mountEpoch,
                       io.tiffin.api.DataGrant grant) {
        public String segment() {
            return place.segment();
        }

        public String endpoint() {
            return place.endpoint();
        }

        boolean is(ReplicaDescriptor d) {
            return d.type() == ReplicaType.MEMORY && d.replicaId() == replicaId && d.mountEpoch() == mountEpoch
                    && d.offset() == offset && d.size() == size && d.segment().equals(place.segment())
                    && d.endpoint().equals(place.endpoint());
        }
    }

    private final Cache<String, Hint> hints;
    /** Segment name → its place; bounded, since node restarts bring new segment names. */
    private final Cache<String, Place> places = Caffeine.newBuilder().maximumSize(4096).executor(Runnable::run).build();
    private final LongAdder confirmed = new LongAdder();
    private final LongAdder refuted = new LongAdder();

    /** @param maxEntries most hints kept (least recently used ones go first); > 0 */
    public ReadHints(long maxEntries) {
        if (maxEntries <= 0) {
            throw new IllegalArgumentException("client.read-hint-cache-size = " + maxEntries + " (expected: > 0 here)");
        }
        this.hints = Caffeine.newBuilder().maximumSize(maxEntries)
                .executor(Runnable::run) // maintenance on the calling thread: no pool threads of its own
                .build();
    }

    /** The replica to read {@code key} from while it is looked up, or null. */
    public Hint get(String key) {
        return hints.getIfPresent(key);
    }

    /**
     * Remembers the first memory replica of {@code replicas} (a lookup's answer, or the replicas of a put
     * that just ended) as {@code key}'s hint. Forgets the key's hint instead when the object has a memory
     * replica read through a mapping ({@code direct}: the usual read copies it from memory, no socket), or
     * when the first one carries no mount epoch for the node to check.
     */
    public void remember(String key, List<ReplicaDescriptor> replicas, Predicate<ReplicaDescriptor> direct) {
        ReplicaDescriptor first = null;
        for (ReplicaDescriptor d : replicas) {
            if (d.type() == ReplicaType.MEMORY) {
                if (direct.test(d)) {
                    hints.invalidate(key);
                    return;
                }
                if (first == null) {
                    first = d;
                }
            }
        }
        if (first == null || first.mountEpoch() == 0) {
            hints.invalidate(key);
            return;
        }
        hints.put(key, new Hint(placeOf(first), first.replicaId(), first.offset(), first.size(), first.mountEpoch(),
                first.grant()));
    }

    private Place placeOf(ReplicaDescriptor d) {
        Place p = places.getIfPresent(d.segment());
        if (p == null || !p.endpoint().equals(d.endpoint())) {
            p = new Place(d.segment(), d.endpoint());
            places.put(d.segment(), p);
        }
        return p;
    }

    /**
     * Whether {@code loc}, the master's answer to the lookup sent with a read of {@code hint}, names that
     * very replica (see the class comment); counts the outcome.
     */
    public boolean confirms(ObjectLocation loc, Hint hint) {
        if (loc.size() == hint.size()) {
            for (ReplicaDescriptor d : loc.replicas()) {
                if (hint.is(d)) {
                    confirmed.increment();
                    return true;
                }
            }
        }
        refuted.increment();
        return false;
    }

    /** Forgets {@code key}'s hint (this client removed or wrote it, or its lookup failed). */
    public void invalidate(String key) {
        hints.invalidate(key);
    }

    /** Forgets the hints of matching keys. */
    public void invalidateMatching(Predicate<String> keys) {
        hints.asMap().keySet().removeIf(keys);
    }

    public Stats stats() {
        hints.cleanUp();
        return new Stats(confirmed.sum(), refuted.sum(), hints.estimatedSize());
    }
}
