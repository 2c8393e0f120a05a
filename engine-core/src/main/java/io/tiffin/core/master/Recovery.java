package io.tiffin.core.master;

import io.tiffin.core.util.Ticker;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The moments after a master took over (or restarted with its state), until every node it restored has attached and
 * reported its objects (the commit records of its segment and, for a node with an SSD tier, the copies of its scan),
 * or the longest a client may still reuse a location cached from the previous master has passed: meanwhile a key
 * this master does not know may still come back with a node, so a lookup of it answers "not ready" (retry) instead
 * of "not found", removals are refused (retry), and PutEnds are answered only at the end (no client may read the
 * key's previous object from a node that has not attached yet after its new put was acknowledged). All live nodes
 * attach within about a heartbeat, so this usually lasts a second. For the first moments of it
 * ({@code master.recovery-read-wait}) such lookups are refused instead, for the client to retry, so that they are
 * answered once the nodes are back rather than as misses ({@link #holdsLookups}).
 *
 * <p>Thread-safe: concurrent collections, a future and synchronized changes.
 */
final class Recovery {
    private final Ticker ticker;
    private final Set<String> awaiting = ConcurrentHashMap.newKeySet();
    /** Node id → its segment, for nodes that attached and whose SSD scan has not been reported yet. */
    private final Map<String, String> scans = new ConcurrentHashMap<>();
    private volatile long deadlineMillis;
    private volatile long lookupsHeldUntilMillis;
    private volatile CompletableFuture<Void> ended = CompletableFuture.completedFuture(null);

    Recovery(Ticker ticker) {
        this.ticker = ticker;
    }

    /**
     * Starts a recovery waiting for {@code segments} for at most {@code windowMillis}; lookups of objects it may
     * still bring back are refused for the first {@code lookupWaitMillis} of it.
     */
    synchronized void begin(Set<String> segments, long windowMillis, long lookupWaitMillis) {
        awaiting.addAll(segments);
        long now = ticker.millis();
        deadlineMillis = now + windowMillis;
        lookupsHeldUntilMillis = now + Math.min(windowMillis, lookupWaitMillis);
        ended = new CompletableFuture<>();
        check();
    }

    /** The segment went (or came back empty): nothing of it to wait for. */
    void settled(String segment) {
        boolean scanDropped = scans.values().remove(segment);
        if (awaiting.remove(segment) || scanDropped) {
            check();
        }
    }

    /**
     * {@code segment} attached with its commit records; when {@code scanOf} is not null, its node ({@code scanOf})
     * reports the copies of its SSD tier next, and the recovery waits for that too ({@link #scanned}): until then
     * a key only that SSD holds would read as missing.
     */
    synchronized void attached(String segment, String scanOf) {
        if (scanOf != null && !ended.isDone() && awaiting.contains(segment)) {
            scans.put(scanOf, segment);
        }
        if (awaiting.remove(segment)) {
            check();
        }
    }

    /** Node {@code nodeId} has reported every copy its SSD tier holds. */
    void scanned(String nodeId) {
        if (scans.remove(nodeId) != null) {
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

    /**
     * Whether a lookup that needs an object this recovery may still bring back is refused for now (the client
     * retries it) rather than answered "not ready": the recovery runs and began less than
     * {@code master.recovery-read-wait} ago.
     */
    boolean holdsLookups() {
        return !ended.isDone() && ticker.millis() < lookupsHeldUntilMillis && active(); // no clock read in the common case
    }

    /** Completes when the recovery ends (at once when none runs). */
    CompletableFuture<Void> ended() {
        return ended;
    }

    /** Segments not attached yet. */
    Set<String> awaiting() {
        return Set.copyOf(awaiting);
    }

    /** Whether a segment still awaits its node's attach (false once all have attached, or the recovery ended). */
    boolean attachesPending() {
        return !awaiting.isEmpty();
    }

    /** Ends the recovery when nothing is awaited or its time is up; called on events and periodically. */
    synchronized void check() {
        if (!ended.isDone() && (awaiting.isEmpty() && scans.isEmpty() || ticker.millis() >= deadlineMillis)) {
            awaiting.clear();
            scans.clear();
            ended.complete(null);
        }
    }
}
