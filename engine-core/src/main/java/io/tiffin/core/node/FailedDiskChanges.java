package io.tiffin.core.node;

import java.util.ArrayList;
import java.util.List;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Changes to SSD copies that a task poll's answer asked for and the backend failed (a full disk refusing the journal
 * entry, an I/O error), kept until the next poll tells the master, which asks for them again: deletions of removed
 * objects' copies ({@code TaskPollRequest.undeleted}), or new expiry deadlines for the copies' stamps ({@code
 * unstamped}; the master answers the object's current deadline). A FORGET's failures are answered in its reply instead
 * ({@code ForgetReply}). Also throttles the warning such failures log: a disk that stays broken fails the same changes
 * at every poll. One instance per {@link Kind}.
 *
 * <p>At most {@link #MAX_KEPT} copies are kept: a poll's answer names at most 1,000 changes of a kind and the node
 * polls again only once they were tried, so more means the master could not be told for long; beyond it the newest
 * are dropped and logged (a dropped deletion stays listed by the master until the node's next poll acknowledges it;
 * a dropped deadline stays out of the copy's stamp until the object's deadline changes again).
 *
 * <p>Thread-safe: every method is synchronized.
 */
final class FailedDiskChanges {
    private static final Logger LOG = LogManager.getLogger(FailedDiskChanges.class);

    /** What failed, and what the node's log says of it. */
    enum Kind {
        DELETIONS("failed SSD deletions", "could not delete {} SSD copies of removed objects ({}){}; they stay on the"
                + " disk, and the master records their deletions (no master adopts them from a later scan) and asks"
                + " again"),
        DEADLINES("failed writes of new SSD deadlines", "could not write the new expiry deadlines of {} SSD copies"
                + " into their stamps ({}){}; the stamps keep the old deadlines until the master answers the next task"
                + " poll with the objects' current ones");

        private final String kept;
        private final String warning;

        Kind(String kept, String warning) {
            this.kept = kept;
            this.warning = warning;
        }
    }

    /** Most failed changes kept for the next poll. */
    static final int MAX_KEPT = 100_000;
    /** Most copies one poll names. */
    static final int MAX_PER_POLL = 1_000;
    /** Least time between two warnings of failed deletions. */
    static final long WARN_INTERVAL_NANOS = 60_000_000_000L;

    /**
     * Copies (keys, and the versions a master named, 0 = any; parallel) whose deletions failed, or (from {@link
     * DiskCopies#setDeadlines}) whose new deadlines could not be written.
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
    private final Kind kind;
    private final List<String> keys = new ArrayList<>();
    private final List<Long> versions = new ArrayList<>();
    private long lastWarnNanos;
    private boolean warned;
    private long unwarned;

    FailedDiskChanges(String nodeId, Kind kind) {
        this.nodeId = nodeId;
        this.kind = kind;
    }

    /** Keeps {@code failed} for the next poll. */
    synchronized void add(Batch failed) {
        int room = MAX_KEPT - keys.size();
        int n = Math.min(room, failed.keys().size());
        keys.addAll(failed.keys().subList(0, n));
        versions.addAll(failed.versions().subList(0, n));
        if (n < failed.keys().size()) {
            LOG.error("Node {} keeps {} {} for its next task poll and drops {} more (the master has not been told for"
                    + " long); check that it reaches the master and that its SSD tier's disk (node.storage-path) has"
                    + " free space and is writable", nodeId, keys.size(), kind.kept, failed.keys().size() - n);
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
     * Logs that the backend failed {@code count} changes ({@code cause}): at most once per {@link
     * #WARN_INTERVAL_NANOS}, naming how many failures went unlogged since.
     */
    synchronized void warn(int count, RuntimeException cause, long nowNanos) {
        if (warned && nowNanos - lastWarnNanos < WARN_INTERVAL_NANOS) {
            unwarned += count;
            LOG.debug("Node {}: {} {} ({})", nodeId, count, kind.kept, cause.toString());
            return;
        }
        LOG.warn("Node {} " + kind.warning + "; check that the SSD tier's disk (node.storage-path) has free space and"
                + " is writable", nodeId, count, cause.toString(),
                unwarned == 0 ? "" : " (and " + unwarned + " since the last warning)");
        warned = true;
        lastWarnNanos = nowNanos;
        unwarned = 0;
    }
}
