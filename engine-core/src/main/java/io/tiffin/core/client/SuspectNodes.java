package io.tiffin.core.client;

import io.tiffin.api.ReplicaDescriptor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The nodes this client suspects of hanging, remembered between calls for a while: a node whose memory replica did
 * not answer a read within its lease (a stopped process, a frozen VM, a long pause), or whose connection failed, is
 * noted for {@link #TTL_NANOS}; meanwhile reads try an object's replicas on other nodes first. A node is never
 * skipped (an object whose replicas are all on suspected nodes is read in the master's order), a read the node
 * answers ends its note, and a note ends on its own, so a node that comes back is used again. Without it, every new
 * read of a key whose first replica is on a hung node waited for the whole lease and failed ({@code LEASE_EXPIRED}),
 * until the master dropped the node. The Python client keeps the same memory ({@code tiffin/_suspects.py}).
 *
 * <p>Thread-safe (a concurrent map; the common case, nothing suspected, reads one size).
 */
final class SuspectNodes {
    /** How long a note lasts: the master's default node TTL, after which it has dropped a node that stayed silent. */
    static final long TTL_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** Most nodes noted at once; past it, notes are dropped (they are hints, never needed for correctness). */
    static final int MAX_NODES = 1024;

    private final ConcurrentHashMap<String, Long> until = new ConcurrentHashMap<>();
    private final LongSupplier nanos;

    SuspectNodes() {
        this(System::nanoTime);
    }

    /** On the monotonic clock {@code nanos} (tests give their own). */
    SuspectNodes(LongSupplier nanos) {
        this.nanos = nanos;
    }

    /** Suspects the node at {@code endpoint} for {@link #TTL_NANOS} from now: a read there went unanswered. */
    void note(String endpoint) {
        if (until.size() >= MAX_NODES) {
            long now = nanos.getAsLong();
            until.values().removeIf(t -> t - now <= 0);
            if (until.size() >= MAX_NODES) {
                until.clear();
            }
        }
        until.put(endpoint, nanos.getAsLong() + TTL_NANOS);
    }

    /** The node at {@code endpoint} just answered a read: no longer suspected. */
    void answered(String endpoint) {
        if (!until.isEmpty()) {
            until.remove(endpoint);
        }
    }

    boolean suspected(String endpoint) {
        if (until.isEmpty()) {
            return false;
        }
        Long t = until.get(endpoint);
        if (t == null) {
            return false;
        }
        if (t - nanos.getAsLong() > 0) {
            return true;
        }
        until.remove(endpoint, t);
        return false;
    }

    /**
     * {@code replicas} with those on suspected nodes moved behind the others (each group in its order); {@code
     * replicas} itself when none or all of them are suspected.
     */
    List<ReplicaDescriptor> order(List<ReplicaDescriptor> replicas) {
        if (until.isEmpty() || replicas.size() < 2) {
            return replicas;
        }
        List<ReplicaDescriptor> trusted = new ArrayList<>(replicas.size());
        List<ReplicaDescriptor> suspect = new ArrayList<>(1);
        for (ReplicaDescriptor d : replicas) {
            (suspected(d.endpoint()) ? suspect : trusted).add(d);
        }
        if (suspect.isEmpty() || trusted.isEmpty()) {
            return replicas;
        }
        trusted.addAll(suspect);
        return trusted;
    }
}
