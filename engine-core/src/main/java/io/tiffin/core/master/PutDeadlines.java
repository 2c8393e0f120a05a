package io.tiffin.core.master;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * When puts in progress ({@code master.put-timeout}) and SSD-tier tasks ({@code master.put-start-release-timeout})
 * time out, so the sweep ({@link PutCoordinator#releaseStuckPuts}) looks at what is due instead of every object.
 * Each kind has one timeout, so entries become due in the order they were started: an insertion-ordered map
 * (one entry per key, a restart of the key moves it to the end) is read from its head until an entry is not due.
 * An entry only says "look at this key then": the sweep checks under the key's shard lock that the object is still
 * that put (its start instant) or task before it acts. A put that ends drops its entry; a task's entry stays until
 * due (at most one per key). Timed-out puts are remembered for one more timeout (at most {@link #TIMED_OUT_KEPT}),
 * so that their writer's late PutEnd hears why it is refused.
 *
 * <p>Thread-safe: every method is synchronized (taken inside shard locks, never the other way round).
 */
final class PutDeadlines {
    /** Most timed-out puts remembered for late PutEnds. */
    static final int TIMED_OUT_KEPT = 100_000;

    /** A put or task to look at: its key and the instant it started. */
    record Due(String key, long startedMillis) {
    }

    private final long putTimeoutMillis;
    private final long taskTimeoutMillis;
    private final LinkedHashMap<String, Long> puts = new LinkedHashMap<>();
    private final LinkedHashMap<String, Long> tasks = new LinkedHashMap<>();
    /** Key → when its put timed out (ms), oldest first. */
    private final LinkedHashMap<String, Long> timedOut = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
            return size() > TIMED_OUT_KEPT;
        }
    };

    PutDeadlines(long putTimeoutMillis, long taskTimeoutMillis) {
        this.putTimeoutMillis = putTimeoutMillis;
        this.taskTimeoutMillis = taskTimeoutMillis;
    }

    long putTimeoutMillis() {
        return putTimeoutMillis;
    }

    synchronized void putStarted(String key, long startMillis) {
        puts.remove(key);
        puts.put(key, startMillis);
        timedOut.remove(key);
    }

    /** The put of {@code key} started at {@code startMillis} ended (completed or revoked). */
    synchronized void putEnded(String key, long startMillis) {
        puts.remove(key, startMillis);
    }

    synchronized void taskStarted(String key, long startMillis) {
        tasks.remove(key);
        tasks.put(key, startMillis);
    }

    /** Takes the puts whose timeout has passed at {@code now}. */
    synchronized List<Due> duePuts(long now) {
        return takeDue(puts, putTimeoutMillis, now);
    }

    /** Takes the tasks whose timeout has passed at {@code now}. */
    synchronized List<Due> dueTasks(long now) {
        return takeDue(tasks, taskTimeoutMillis, now);
    }

    private static List<Due> takeDue(LinkedHashMap<String, Long> entries, long timeout, long now) {
        List<Due> due = new ArrayList<>();
        for (Iterator<Map.Entry<String, Long>> it = entries.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Long> e = it.next();
            if (e.getValue() + timeout > now) {
                break;
            }
            due.add(new Due(e.getKey(), e.getValue()));
            it.remove();
        }
        return due;
    }

    /** The put of {@code key} was freed at {@code now} after its timeout. */
    synchronized void timedOut(String key, long now) {
        timedOut.put(key, now);
    }

    /** When the last put of {@code key} timed out (ms), if within the last timeout; else -1. */
    synchronized long timedOutAt(String key, long now) {
        Long at = timedOut.get(key);
        if (at == null || at + putTimeoutMillis <= now) {
            return -1;
        }
        return at;
    }

    /** The keys of the SSD-tier tasks being watched (a copy): every task started within its timeout. */
    synchronized List<String> taskKeys() {
        return new ArrayList<>(tasks.keySet());
    }

    /** Puts and tasks being watched (for tests and metrics). */
    synchronized int watched() {
        return puts.size() + tasks.size();
    }
}
