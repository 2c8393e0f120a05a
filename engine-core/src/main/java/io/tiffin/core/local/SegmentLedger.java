package io.tiffin.core.local;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The objects committed in one node segment, as their writers recorded them (the commit record of their last
 * write): key, offset, size, version, put id, pins, the object's CRC32C and its expiry deadline. With failover on, a
 * node is the source of truth for what its memory holds: a master that takes over (or restarts with {@code
 * master.state-dir}) rebuilds its objects from these records ({@code ATTACH_SEGMENT}). The master drops a record
 * ({@code FORGET}) before it reuses the object's space, so a record never names bytes that another object
 * overwrote, and sets a record's deadline when its object's changes; a commit also drops any record it overlaps.
 *
 * <p>Thread-safe: every method is synchronized. {@link LocalSegment} moves its mount epoch under this
 * object's monitor, so a commit checked against the epoch and an epoch move with a snapshot are atomic with
 * respect to each other.
 */
public final class SegmentLedger {
    /** TRACE: every record a commit displaces and every record a FORGET drops (the failover tests' trail). */
    private static final Logger LOG = LogManager.getLogger(SegmentLedger.class);

    /**
     * One committed object.
     *
     * <p>Thread-safe (immutable).
     *
     * @param offset of the whole object in the segment
     * @param crc32c the object's CRC32C as its writer computed it; 0 = none
     * @param yields the put was granted while its master recovered: at a takeover, any other record of the key
     *     wins over this one ({@code CommitRecord.yields})
     * @param expireAtMillis the object's expiry deadline as its put set it (the master's clock; 0 = none)
     */
    public record Entry(String key, long offset, long size, long version, long putId, boolean hardPin,
                        boolean softPin, int crc32c, boolean yields, long expireAtMillis) {
        /** A record without a checksum or a deadline, of a put granted outside a recovery. */
        public Entry(String key, long offset, long size, long version, long putId, boolean hardPin, boolean softPin) {
            this(key, offset, size, version, putId, hardPin, softPin, 0, false, 0);
        }

        /** The entry of a writer's record {@code c} of the object at {@code offset}. */
        public static Entry of(io.tiffin.core.transport.proto.CommitRecord c, long offset) {
            return new Entry(c.getKey(), offset, c.getSize(), c.getVersion(), c.getPutId(), c.getHardPin(),
                    c.getSoftPin(), c.getCrc32C(), c.getYields(), c.getExpireAtMs());
        }

        /** This entry with the expiry deadline {@code atMillis} (0 = none). */
        public Entry withExpireAtMillis(long atMillis) {
            return new Entry(key, offset, size, version, putId, hardPin, softPin, crc32c, yields, atMillis);
        }
    }

    private final TreeMap<Long, Entry> byOffset = new TreeMap<>();

    /** Records a committed object, dropping the records whose space it overlaps. */
    public synchronized void commit(Entry e) {
        Map.Entry<Long, Entry> below = byOffset.floorEntry(e.offset());
        if (below != null && below.getValue().offset() + below.getValue().size() > e.offset()) {
            byOffset.remove(below.getKey());
            if (LOG.isTraceEnabled() && below.getKey() != e.offset()) {
                LOG.trace("Commit of {} displaced {}", e, below.getValue());
            }
        }
        Map<Long, Entry> covered = byOffset.subMap(e.offset(), true, e.offset() + Math.max(1, e.size()), false);
        if (LOG.isTraceEnabled()) {
            covered.values().stream().filter(o -> o.offset() != e.offset() || !o.key().equals(e.key()))
                    .forEach(o -> LOG.trace("Commit of {} displaced {}", e, o));
        }
        covered.clear();
        byOffset.put(e.offset(), e);
    }

    /** Drops the record at {@code offset} if it has {@code version} (0 = any); returns whether one went. */
    public synchronized boolean forget(long offset, long version) {
        Entry e = byOffset.get(offset);
        if (e == null || (version != 0 && e.version() != version)) {
            return false;
        }
        byOffset.remove(offset);
        LOG.trace("Forgot {}", e);
        return true;
    }

    /**
     * Sets the expiry deadline of the record at {@code offset} if it has {@code version} (its object's deadline changed
     * after the put: EXPIRE, PERSIST); returns whether there was such a record.
     */
    public synchronized boolean setDeadline(long offset, long version, long expireAtMillis) {
        Entry e = byOffset.get(offset);
        if (e == null || e.version() != version) {
            return false;
        }
        byOffset.put(offset, e.withExpireAtMillis(expireAtMillis));
        return true;
    }

    /** The records, in offset order. */
    public synchronized List<Entry> snapshot() {
        return new ArrayList<>(byOffset.values());
    }

    /** Drops every record (the master forgot the segment's objects). */
    public synchronized void clear() {
        byOffset.clear();
    }

    public synchronized int size() {
        return byOffset.size();
    }
}
