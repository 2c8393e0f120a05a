package io.tiffin.core.master;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.ReplicaStatus;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.proto.CommitRecord;
import io.tiffin.core.transport.proto.Segment;
import io.tiffin.core.util.Ticker;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Takes a restored segment into service when its node attaches ({@code ATTACH_SEGMENT}): rebuilds the segment's
 * allocator from the objects the node reports (its {@code SegmentLedger}) and adds them to the object table, with the
 * version, put id, pins and expiry deadline their writers recorded (or a later EXPIRE set). A key already known at a
 * lower version (another node's older copy) is replaced by the newer; a record older than the known version, or
 * overlapping another, is dropped and the node told to forget it. A put of the key started during the recovery, ended
 * or not, yields to the record (it was a put of an existing key; upserts, like removals, are refused until the recovery
 * ends), and so does, at a later takeover, the record such a put left ({@code CommitRecord.yields}) to any other record
 * of its key, whatever the versions. Recovered objects start leased for one {@code master.lease-ttl} (the previous
 * master's leases are unknown) and soft-pinned for a full soft-pin TTL if they were.
 *
 * <p>Thread-safe: chunks are gathered under this object's monitor; the segment is taken into service under the
 * membership's mount monitor (lock order: membership → shard → segment).
 */
final class SegmentAttachment {
    private static final Logger LOG = LogManager.getLogger(SegmentAttachment.class);

    private final SegmentRegistry segments;
    private final ObjectTable table;
    private final Removal removal;
    private final Recovery recovery;
    private final MasterSettings settings;
    private final Ticker ticker;
    private final LongSupplier term;
    private final Map<String, List<CommitRecord>> gathering = new HashMap<>();
    /**
     * Keys whose object this recovery took from a yielding record ({@code CommitRecord.yields}), so a later record of
     * the key is weighed against it ({@link #beats}). Guarded by the membership's mount monitor (every attach holds
     * it); emptied when the recovery ends.
     */
    private final java.util.Set<String> yielding = new java.util.HashSet<>();

    SegmentAttachment(SegmentRegistry segments, ObjectTable table, Removal removal, Recovery recovery,
                      MasterSettings settings, Ticker ticker, LongSupplier term) {
        this.segments = segments;
        this.table = table;
        this.removal = removal;
        this.recovery = recovery;
        this.settings = settings;
        this.ticker = ticker;
        this.term = term;
    }

    /**
     * One chunk of a node's attach; the last takes the segment into service. Returns the number of objects
     * recovered (0 until the last chunk). {@code scanFollows} (on the last chunk): the node reports the copies of its
     * SSD tier next, and the recovery waits for them ({@link Recovery#attached}).
     *
     * @throws TiffinException {@code UNAVAILABLE_IN_CURRENT_STATUS} when the segment is not awaiting its node
     *     (unknown, already attached, or the recovery ended: the node re-mounts empty), {@code INVALID_VERSION}
     *     for another term
     */
    int attach(Segment segment, long nodeTerm, List<CommitRecord> records, boolean first, boolean last,
               boolean scanFollows, Object mountMonitor, byte[] accessKey) {
        if (nodeTerm != term.getAsLong()) {
            throw new TiffinException(ErrorCode.INVALID_VERSION, "attach for term " + nodeTerm + ", this master serves"
                    + " term " + term.getAsLong());
        }
        List<CommitRecord> all;
        synchronized (this) {
            if (first) {
                gathering.put(segment.getName(), new ArrayList<>(records));
            } else {
                List<CommitRecord> so = gathering.get(segment.getName());
                if (so == null) {
                    throw new TiffinException(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, "attach of " + segment.getName()
                            + ": a chunk without its first; attach again");
                }
                so.addAll(records);
            }
            if (!last) {
                return 0;
            }
            all = gathering.remove(segment.getName());
        }
        synchronized (mountMonitor) {
            MountedSegment s = segments.get(segment.getName());
            if (s == null || !s.awaitingAttach() || s.incarnation() != segment.getIncarnation() || !recovery.active()) {
                throw new TiffinException(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, "segment " + segment.getName()
                        + " is not awaiting its node (unknown, attached, or the recovery ended); re-mount it");
            }
            int n = takeIntoService(s, segment.getMountEpoch(), accessKey, all);
            LOG.info("Segment {} of node {} attached: {} of its {} objects recovered", s.name(), s.nodeId(), n,
                    all.size());
            recovery.attached(s.name(), scanFollows ? s.nodeId() : null);
            if (!recovery.attachesPending()) {
                yielding.clear(); // no attach comes after the last
            }
            return n;
        }
    }

    private int takeIntoService(MountedSegment s, long mountEpoch, byte[] accessKey, List<CommitRecord> records) {
        long[] offsets = new long[records.size()];
        long[] sizes = new long[records.size()];
        String[] keys = new String[records.size()];
        for (int i = 0; i < offsets.length; i++) {
            offsets[i] = records.get(i).getOffset();
            sizes[i] = records.get(i).getSize();
            keys[i] = records.get(i).getKey();
        }
        s.mountedAgain(mountEpoch, accessKey); // first: a bad key leaves the segment awaiting its node
        long[] handles = s.restore(offsets, sizes, keys);
        long now = ticker.millis();
        int recovered = 0;
        for (int i = 0; i < handles.length; i++) {
            CommitRecord c = records.get(i);
            table.noteVersion(c.getVersion());
            if (handles[i] < 0) {
                s.release(-1, c.getOffset(), c.getVersion()); // overlaps another record: the node forgets it
                continue;
            }
            ReplicaRecord r = new ReplicaRecord(table.nextReplicaId(), s, handles[i], c.getOffset());
            r.status(ReplicaStatus.COMPLETE);
            if (c.getKey().isEmpty() || table.validateKey(c.getKey()) != ErrorCode.OK) {
                r.free(c.getVersion());
                continue;
            }
            if (table.inShard(c.getKey(), shard -> adopt(shard, c, r, now))) {
                recovered++;
            }
        }
        s.attached();
        return recovered;
    }

    /** Adds {@code r} (the replica of record {@code c}) to its object; false when the record was stale. */
    private boolean adopt(MetadataShard shard, CommitRecord c, ReplicaRecord r, long now) {
        ObjectMetadata m = shard.objects.get(c.getKey());
        List<ReplicaRecord> writing = List.of(); // of a put that yields to the record
        String yieldedWriter = null;
        long yieldedVersion = 0;
        if (m != null && m.version == c.getVersion() && m.size() == c.getSize() && !m.processing()) {
            m.replicas().add(r); // another replica of the same object
            return true;
        }
        if (m != null && m.grantedHere()) {
            // A put of the key started during the recovery (upserts wait for its end; an object a node's SSD tier
            // reported meanwhile has a disk replica, and is ordered by version below): the key held this acknowledged
            // object all along, so that put is a put of an existing key, a successful no-op (its PutEnd, answered
            // at the recovery's end, finds this object and answers OK). Nobody read it: objects put during the
            // recovery are not readable until it ends (ReplicaLookup).
            LOG.debug("{}: the put v{} started during the recovery yields to the record v{} in {}", c.getKey(),
                    m.version, c.getVersion(), r.segment.name());
            if (m.processing()) {
                // its buffers stay reserved until its PutEnd or its writer's put timeout: it may still be writing
                writing = new ArrayList<>(m.replicas().size());
                for (ReplicaRecord w : m.replicas()) {
                    if (w.status() == ReplicaStatus.PROCESSING) {
                        writing.add(w);
                    }
                }
                yieldedWriter = m.writerId;
                yieldedVersion = m.version;
                removal.preempt(shard, m, m.putStartMillis() + settings.putTimeout().toMillis());
            } else {
                removal.erase(shard, m); // written and ended: its writer writes there no more
            }
        } else if (m != null && beats(m, c)) {
            LOG.debug("{}: record v{}{} in {} loses to the known v{}; dropped", c.getKey(), c.getVersion(),
                    c.getYields() ? " (yielding)" : "", r.segment.name(), m.version);
            r.free(c.getVersion()); // an older copy: the node forgets it
            return false;
        } else if (m != null) {
            LOG.debug("{}: v{} replaced by the record v{}{} in {}", c.getKey(), m.version, c.getVersion(),
                    c.getYields() ? " (yielding)" : "", r.segment.name());
            removal.erase(shard, m); // an older object of the key (another node's copy)
        }
        ObjectMetadata o = new ObjectMetadata(c.getKey(), "", c.getSize(), now, c.getHardPin(), c.getSoftPin(),
                List.of(r));
        o.version = c.getVersion();
        o.putId = c.getPutId();
        o.crc32c = c.getCrc32C();
        // the put's deadline, or the one a later EXPIRE or PERSIST set (a passed one too: the expiry sweep then takes
        // the object as any expired one, and no read finds it meanwhile)
        o.expireAtMillis = c.getExpireAtMs();
        o.complete();
        o.markRecovered();
        o.leaseTimeoutMillis = now + settings.leaseTtl().toMillis(); // the previous master's leases are unknown
        // and so are the lookups it answered: any client may read this object through a location it cached from the
        // previous master, so a forced replacement or removal waits as long as the longest such reuse may last
        o.noteCachedLookup(now, settings.leaseTtl().toMillis(), Long.MAX_VALUE, 0);
        if (c.getSoftPin()) {
            o.softPinUntil(now + settings.softPinTtl().toMillis());
        }
        if (yieldedWriter != null) {
            o.noteYielded(yieldedWriter, yieldedVersion, writing);
        }
        table.insert(shard, o);
        if (c.getYields()) {
            yielding.add(o.key);
        } else {
            yielding.remove(o.key);
        }
        return true;
    }

    /**
     * Whether the object the master knows of {@code c}'s key (recovered from another record, or reported by an SSD
     * tier) wins over the record {@code c}. A record of a put granted during a recovery ({@code yields}) may be a
     * put of an existing key, which was a no-op: it loses to any other, and of two such records the older put's
     * wins. Otherwise the higher version wins (an upsert's replacement; its forget of the older may not have reached
     * every node).
     */
    private boolean beats(ObjectMetadata m, CommitRecord c) {
        boolean known = yielding.contains(m.key);
        if (known != c.getYields()) {
            return c.getYields();
        }
        return known ? m.version < c.getVersion() : m.version > c.getVersion();
    }
}
