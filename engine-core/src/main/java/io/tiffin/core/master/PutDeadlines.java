package io.tiffin.core.master;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * When SSD-tier tasks time out ({@code master.put-start-release-timeout}), so the sweep
 * ({@link PutCoordinator#releaseStuckPuts}) looks at what is due instead of every object, and which puts timed out
 * lately ({@code master.put-timeout}), so that their writer's late PutEnd hears why it is refused. (The puts in
 * progress themselves are listed per metadata shard: {@link MetadataShard#putStarted}.) Tasks have one timeout, so
 * entries become due in the order they were started: an insertion-ordered map (one entry per key, a restart of the
 * key moves it to the end) is read from its head until an entry is not due. An entry only says "look at this key
 * then": the sweep checks under the key's shard lock that the object still has that task before it acts. A task's
 * entry stays until due (at most one per key). Timed-out puts are remembered for one more timeout (at most
 * {@link #TIMED_OUT_KEPT}).
 *
 * <p>Thread-safe: every method that reads or changes the maps is synchronized (taken inside shard locks, never the
 * other way round); {@link #putStarted} and {@link #timedOutAt} look at a volatile count first, so a put takes no
 * monitor while no put has timed out lately.
 */
final class PutDeadlines {
    /** Most timed-out puts remembered for late PutEnds. */
    static final int TIMED_OUT_KEPT = 100_000;

    /** A task to look at: its key and the instant it started. */
    record Due(String key, long startedMillis) {
    }

    private final long putTimeoutMillis;
    private final long taskTimeoutMillis;
    private final LinkedHashMap<String, Long> tasks = new LinkedHashMap<>();
    /** Key → when its put timed out (ms), oldest first. */
    private final LinkedHashMap<String, Long> timedOut = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
            return size() > TIMED_OUT_KEPT;
        }
    };
    /** {@code timedOut.size()}, read without the monitor. */
    private volatile int timedOutCount;

    PutDeadlines(long putTimeoutMillis, long taskTimeoutMillis) {
        this.putTimeoutMillis = putTimeoutMillis;
        this.taskTimeoutMillis = taskTimeoutMillis;
    }

    long putTimeoutMillis() {
        return putTimeoutMillis;
    }

    /** A put of {@code key} started: an earlier put of it that timed out is forgotten. */
    void putStarted(String key) {
        if (timedOutCount != 0) {
            forgetTimedOut(key);
        }
    }

    private synchronized void forgetTimedOut(String key) {
        timedOut.remove(key);
        timedOutCount = timedOut.size();
    }

    synchronized void taskStarted(String key, long startMillis) {
        tasks.remove(key);
        tasks.put(key, startMillis);
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
        timedOutCount = timedOut.size();
    }

    /** When the last put of {@code key} timed out (ms), if within the last timeout; else -1. */
    long timedOutAt(String key, long now) {
        return timedOutCount == 0 ? -1 : timedOutAtLocked(key, now);
    }

    private synchronized long timedOutAtLocked(String key, long now) {
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

    /** Tasks being watched (for tests and metrics). */
    synchronized int watchedTasks() {
        return tasks.size();
    }
}
