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
 * key was removed, evicted, re-put or moved — is dropped without waiting for its answer (its connection
 * is closed), and the get reads the replica the lookup named, as usual.
 *
 * <p><b>What it costs.</b> A stale hint costs a wasted node read; the master sees the same lookups as
 * without hints (leases, eviction order and metrics do not change). Gets whose destination the caller's
 * thread confines, gets of objects the hot cache may keep, and zero-copy or batch gets do not speculate.
 * Speculation only uses a connection to the hinted node that is already open and idle: a hint never makes
 * a get wait for a connect to a node that may be gone.
 *
 * <p>Thread-safe (a Caffeine cache; counters are {@link LongAdder}s). Holds no off-heap memory.
 */
public final class ReadHints {
    /** Default of {@code client.read-hint-cache-size}. */
    public static final long DEFAULT_SIZE = 100_000;

    /** Counters since the client started: reads the lookup confirmed, reads it did not (dropped). */
    public record Stats(long confirmed, long refuted, long size) {
    }

    private final Cache<String, ReplicaDescriptor> hints;
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
    public ReplicaDescriptor get(String key) {
        return hints.getIfPresent(key);
    }

    /**
     * Remembers the first memory replica of {@code replicas} (a lookup's answer, or the replicas of a put
     * that just ended) as {@code key}'s hint; forgets the key's hint when that replica cannot be read
     * speculatively: read through a memory mapping ({@code direct}), or without a mount epoch the node
     * would check.
     */
    public void remember(String key, List<ReplicaDescriptor> replicas, Predicate<ReplicaDescriptor> direct) {
        for (ReplicaDescriptor d : replicas) {
            if (d.type() == ReplicaType.MEMORY) {
                if (d.mountEpoch() != 0 && !direct.test(d)) {
                    hints.put(key, d);
                } else {
                    hints.invalidate(key);
                }
                return;
            }
        }
        hints.invalidate(key);
    }

    /**
     * Whether {@code loc}, the master's answer to the lookup sent with a read of {@code hint}, names that
     * very replica (see the class comment); counts the outcome.
     */
    public boolean confirms(ObjectLocation loc, ReplicaDescriptor hint) {
        if (loc.size() == hint.size()) {
            for (ReplicaDescriptor d : loc.replicas()) {
                if (sameReplica(d, hint)) {
                    confirmed.increment();
                    return true;
                }
            }
        }
        refuted.increment();
        return false;
    }

    static boolean sameReplica(ReplicaDescriptor a, ReplicaDescriptor b) {
        return a.type() == ReplicaType.MEMORY && b.type() == ReplicaType.MEMORY && a.replicaId() == b.replicaId()
                && a.mountEpoch() == b.mountEpoch() && a.offset() == b.offset() && a.size() == b.size()
                && a.segment().equals(b.segment()) && a.endpoint().equals(b.endpoint());
    }

    /** Forgets {@code key}'s hint (this client removed or wrote it). */
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
