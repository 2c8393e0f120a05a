package io.tiffin.core.master;

import io.tiffin.core.util.Ticker;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The moments after a master took over (or restarted with its state), until every node it restored has attached
 * and reported its objects, or the longest a client may still reuse a location cached from the previous master has
 * passed: meanwhile a key this master does not know may still come back with a node, so a lookup of it answers
 * "not ready" (retry) instead of "not found", removals are refused (retry), and PutEnds are answered only at the end
 * (no client may read the key's previous object from a node that has not attached yet after its new put was
 * acknowledged). All live nodes attach within about a heartbeat, so this usually lasts a second.
 *
 * <p>Thread-safe: a concurrent set and a future.
 */
final class Recovery {
    private final Ticker ticker;
    private final Set<String> awaiting = ConcurrentHashMap.newKeySet();
    private volatile long deadlineMillis;
    private volatile CompletableFuture<Void> ended = CompletableFuture.completedFuture(null);

    Recovery(Ticker ticker) {
        this.ticker = ticker;
    }

    /** Starts a recovery waiting for {@code segments} for at most {@code windowMillis}. */
    synchronized void begin(Set<String> segments, long windowMillis) {
        awaiting.addAll(segments);
        deadlineMillis = ticker.millis() + windowMillis;
        ended = new CompletableFuture<>();
        check();
    }

    /** The segment attached (or went): one fewer to wait for. */
    void settled(String segment) {
        if (awaiting.remove(segment)) {
            check();
        }
    }

    /** Whether the recovery still runs; ends it when its time is up. */
    boolean active() {
        if (ended.isDone()) {
            return false;
        }
        check();
        return !ended.isDone();
    }

    /** Completes when the recovery ends (at once when none runs). */
    CompletableFuture<Void> ended() {
        return ended;
    }

    /** Segments not attached yet. */
    Set<String> awaiting() {
        return Set.copyOf(awaiting);
    }

    /** Ends the recovery when nothing is awaited or its time is up; called on events and periodically. */
    synchronized void check() {
        if (!ended.isDone() && (awaiting.isEmpty() || ticker.millis() >= deadlineMillis)) {
            awaiting.clear();
            ended.complete(null);
        }
    }
}
