package io.tiffin.core.master;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One of the master's 1024 metadata shards: a key → {@link ObjectMetadata} map ({@link ObjectMap}) and the lock that guards
 * it and every object in it. A key's shard is fixed by its hash ({@link #indexOf}).
 *
 * <p>Thread-safe only under {@link #lock}: callers take it around every access.
 */
final class MetadataShard {
    static final int BITS = 10;
    static final int COUNT = 1 << BITS;

    final ReentrantLock lock = new ReentrantLock();
    final ObjectMap objects = new ObjectMap();
    /**
     * Keys the master forgot while clients may still read their last object through cached locations
     * ({@link ObjectMetadata#cachedUntilMillis}): key → until when (ms) a put of the key is refused. Null
     * until the first; entries go at that instant's first put or {@link #purgeHeld} after it.
     */
    private Map<String, Long> held;
    /**
     * Replacements being written: key → the new object (still processing) of an upsert of a complete object,
     * which stays in {@link #objects}, readable, until the new one's PutEnd swaps it in. Null until the first.
     */
    private Map<String, ObjectMetadata> replacing;
    /**
     * The puts in progress granted here (objects and replacements still being written), oldest first: a list
     * through the objects themselves ({@link ObjectMetadata#prevPut}, {@link ObjectMetadata#nextPut}), so a put's
     * start and end cost two links, with no map and nothing shared between the event loops. The sweep of stuck puts
     * takes them from the head ({@link #takePutsStartedBy}). An object erased while listed (its node left, a forced
     * removal) stays until then; the sweep checks that it is still its key's put.
     */
    private ObjectMetadata putsHead;
    private ObjectMetadata putsTail;
    private int putsListed;

    /** The replacement of {@code key} being written, or null. Caller holds the lock. */
    ObjectMetadata replacement(String key) {
        return replacing == null ? null : replacing.get(key);
    }

    /** Notes {@code m} as the replacement of its key being written. Caller holds the lock. */
    void startReplacement(ObjectMetadata m) {
        if (replacing == null) {
            replacing = new HashMap<>();
        }
        replacing.put(m.key, m);
    }

    /** Forgets the replacement of {@code key} (swapped in, revoked or released). Caller holds the lock. */
    void endReplacement(String key) {
        if (replacing != null && replacing.remove(key) != null && replacing.isEmpty()) {
            replacing = null;
        }
    }

    /** The replacements being written, a copy. Caller holds the lock. */
    java.util.List<ObjectMetadata> replacements() {
        return replacing == null ? java.util.List.of() : java.util.List.copyOf(replacing.values());
    }

    /** Lists {@code m}, whose put just started, as the newest put in progress. Caller holds the lock. */
    void putStarted(ObjectMetadata m) {
        if (m.inPutList()) {
            return;
        }
        m.putListLinks(true, putsTail, null);
        if (putsTail == null) {
            putsHead = m;
        } else {
            putsTail.nextPut(m);
        }
        putsTail = m;
        putsListed++;
    }

    /** The put of {@code m} ended (completed, revoked or pre-empted): it leaves the list. Caller holds the lock. */
    void putEnded(ObjectMetadata m) {
        if (!m.inPutList()) {
            return;
        }
        ObjectMetadata prev = m.prevPut();
        ObjectMetadata next = m.nextPut();
        if (prev == null) {
            putsHead = next;
        } else {
            prev.nextPut(next);
        }
        if (next == null) {
            putsTail = prev;
        } else {
            next.prevPut(prev);
        }
        m.putListLinks(false, null, null);
        putsListed--;
    }

    /**
     * Takes out of the list, oldest first, the puts that started at or before {@code startedBy} (ms). Puts are
     * listed in the order they started (to within the few milliseconds by which two event loops' clocks of a
     * batch differ), so this reads from the head until a put is younger. Caller holds the lock.
     */
    java.util.List<ObjectMetadata> takePutsStartedBy(long startedBy) {
        java.util.List<ObjectMetadata> due = java.util.List.of();
        while (putsHead != null && putsHead.putStartMillis() <= startedBy) {
            if (due.isEmpty()) {
                due = new java.util.ArrayList<>();
            }
            ObjectMetadata m = putsHead;
            putEnded(m);
            due.add(m);
        }
        return due;
    }

    /** How many puts are listed as in progress. Caller holds the lock. */
    int putsListed() {
        return putsListed;
    }

    /** Refuses puts of {@code key} until {@code untilMillis}. Caller holds the lock. */
    void hold(String key, long untilMillis) {
        if (held == null) {
            held = new HashMap<>();
        }
        held.merge(key, untilMillis, Math::max);
    }

    /** Until when (ms) puts of {@code key} are refused, or 0; drops a passed entry. Caller holds the lock. */
    long heldUntil(String key, long now) {
        if (held == null) {
            return 0;
        }
        Long until = held.get(key);
        if (until == null) {
            return 0;
        }
        if (until <= now) {
            held.remove(key);
            return 0;
        }
        return until;
    }

    /** The latest hold of a key that {@code matches} accepts, or 0. Caller holds the lock. */
    long heldUntilMatching(java.util.function.Predicate<String> matches, long now) {
        long latest = 0;
        if (held != null) {
            for (Map.Entry<String, Long> e : held.entrySet()) {
                if (e.getValue() > now && e.getValue() > latest && matches.test(e.getKey())) {
                    latest = e.getValue();
                }
            }
        }
        return latest;
    }

    /** Drops the holds that have passed; returns how many are left. Caller holds the lock. */
    int purgeHeld(long now) {
        if (held == null) {
            return 0;
        }
        held.values().removeIf(until -> until <= now);
        if (held.isEmpty()) {
            held = null;
            return 0;
        }
        return held.size();
    }

    /**
     * The shard of {@code key}: the top bits of a multiplicative (Fibonacci) hash. The shard must not
     * be taken from the bits the shard's own table indexes by ({@link ObjectMap}'s low bits of a mixed
     * hash), or every key of a shard would share them and pile into a few slots (seen in
     * {@code tiffin bench master} when the table was a HashMap).
     */
    static int indexOf(String key) {
        return (key.hashCode() * 0x9E3779B9) >>> (Integer.SIZE - BITS);
    }
}
