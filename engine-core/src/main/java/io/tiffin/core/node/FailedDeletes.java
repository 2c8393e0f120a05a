package io.tiffin.core.node;

import java.util.ArrayList;
import java.util.List;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * SSD copies of removed objects that the backend failed to delete when a task poll's answer asked for them (a full
 * disk refusing the removal's journal entry, an I/O error), kept until the next poll tells the master, which asks
 * for them again ({@code TaskPollRequest.undeleted}). A FORGET's failed deletions are answered in its reply instead
 * ({@code ForgetReply}). Also throttles the warning such failures log: a disk that stays broken fails the same
 * deletions at every poll.
 *
 * <p>At most {@link #MAX_KEPT} copies are kept: a poll's answer names at most 1,000 deletions and the node polls
 * again only once they were tried, so more means the master could not be told for long; beyond it the newest are
 * dropped and logged (the master still lists their deletions until the node's next poll acknowledges them).
 *
 * <p>Thread-safe: every method is synchronized.
 */
final class FailedDeletes {
    private static final Logger LOG = LogManager.getLogger(FailedDeletes.class);

    /** Most failed deletions kept for the next poll. */
    static final int MAX_KEPT = 100_000;
    /** Most copies one poll names. */
    static final int MAX_PER_POLL = 1_000;
    /** Least time between two warnings of failed deletions. */
    static final long WARN_INTERVAL_NANOS = 60_000_000_000L;

    /**
     * Copies (keys, and the versions a master named, 0 = any; parallel): here those whose deletions failed, and in
     * {@link DiskCopies#setDeadlines} those whose new deadlines could not be written.
     */
    record Batch(List<String> keys, List<Long> versions) {
        static final Batch NONE = new Batch(List.of(), List.of());

        Batch {
            keys = List.copyOf(keys);
            versions = List.copyOf(versions);
            if (keys.size() != versions.size()) {
                throw new IllegalArgumentException(keys.size() + " keys and " + versions.size() + " versions");
            }
        }

        boolean isEmpty() {
            return keys.isEmpty();
        }
    }

    private final String nodeId;
    private final List<String> keys = new ArrayList<>();
    private final List<Long> versions = new ArrayList<>();
    private long lastWarnNanos;
    private boolean warned;
    private long unwarned;

    FailedDeletes(String nodeId) {
        this.nodeId = nodeId;
    }

    /** Keeps {@code failed} for the next poll. */
    synchronized void add(Batch failed) {
        int room = MAX_KEPT - keys.size();
        int n = Math.min(room, failed.keys().size());
        keys.addAll(failed.keys().subList(0, n));
        versions.addAll(failed.versions().subList(0, n));
        if (n < failed.keys().size()) {
            LOG.error("Node {} keeps {} failed SSD deletions for its next task poll and drops {} more; the master"
                    + " still lists them until that poll", nodeId, keys.size(), failed.keys().size() - n);
        }
    }

    /**
     * Takes the oldest kept copies, at most {@link #MAX_PER_POLL}, for a poll; {@link #putBack} them if the poll did
     * not reach the master.
     */
    synchronized Batch take() {
        if (keys.isEmpty()) {
            return Batch.NONE;
        }
        int n = Math.min(MAX_PER_POLL, keys.size());
        Batch b = new Batch(keys.subList(0, n), versions.subList(0, n));
        keys.subList(0, n).clear();
        versions.subList(0, n).clear();
        return b;
    }

    /** Keeps again what a poll that failed had taken. */
    void putBack(Batch taken) {
        if (!taken.isEmpty()) {
            add(taken);
        }
    }

    /**
     * Logs that the backend failed to delete {@code count} copies ({@code cause}): at most once per {@link
     * #WARN_INTERVAL_NANOS}, naming how many failures went unlogged since.
     */
    synchronized void warn(int count, RuntimeException cause, long nowNanos) {
        if (warned && nowNanos - lastWarnNanos < WARN_INTERVAL_NANOS) {
            unwarned += count;
            LOG.debug("Node {} could not delete {} SSD copies of removed objects: {}", nodeId, count, cause.toString());
            return;
        }
        LOG.warn("Node {} could not delete {} SSD copies of removed objects ({}){}; they stay on the disk, and the"
                + " master records their deletions (no master adopts them from a later scan) and asks again; check"
                + " that the SSD tier's disk (node.storage-path) has free space and is writable",
                nodeId, count, cause.toString(), unwarned == 0 ? "" : " (and " + unwarned + " since the last warning)");
        warned = true;
        lastWarnNanos = nowNanos;
        unwarned = 0;
    }
}
