package io.tiffin.core.client;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.hotcache.LocalHotCache;
import io.tiffin.core.transport.BlockingConnection;
import io.tiffin.core.transport.BlockingConnectionPool;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.proto.DataRequest;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Speculative reads: a get of a key whose replica this client saw before ({@link ReadHints}) sends the read
 * of that replica on an idle pooled connection, then looks the key up; the bytes are kept only if the
 * lookup names that very replica ({@link ReadHints#confirms}), else the read's answer is thrown away and the
 * get reads the location the usual way. See {@link ReadHints} for why a confirmed read is the object's bytes.
 *
 * <p>Thread-safe (no state of its own; each get's {@link Speculation} is confined to its thread). Uses, but
 * does not own, the client's connection pool.
 */
final class HintedReads {
    private static final Logger LOG = LogManager.getLogger(HintedReads.class);
    /** Largest hinted read whose unwanted answer is read and thrown away rather than its connection closed. */
    private static final long DISCARD_MAX_BYTES = 1L << 20;
    /** Longest wait for an unwanted answer before its connection is closed instead. */
    private static final long DISCARD_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private final BlockingConnectionPool connections;
    private final long sliceSize;
    /** Null when disabled (then no read is hinted). */
    private final ReadHints hints;
    /** Null when disabled. */
    private final LocalHotCache hotCache;
    private final Locator locator;
    private final LeaseClock clock;
    private final Checksums checks;

    HintedReads(BlockingConnectionPool connections, long sliceSize, ClientCaches caches, Locator locator,
                LeaseClock clock, Checksums checks) {
        this.checks = checks;
        this.connections = connections;
        this.sliceSize = sliceSize;
        this.hints = caches.hints();
        this.hotCache = caches.hotCache();
        this.locator = locator;
        this.clock = clock;
    }

    /**
     * The replica to read {@code key} from while it is looked up, or null: none is known, or the read
     * should wait for the lookup (the hot cache may hold or keep the object).
     */
    ReadHints.Hint hintFor(String key) {
        if (hints == null) {
            return null;
        }
        ReadHints.Hint hint = hints.get(key);
        if (hint == null || (hotCache != null && hotCache.accepts(hint.size()))) {
            return null;
        }
        return hint;
    }

    /**
     * Sends the read of {@code hint} on an idle pooled connection to its node (if there is one: a hint
     * never waits for a connect), then looks {@code key} up. When the answer names the hinted replica
     * the bytes stay in the socket for {@link Speculation#receiveInto}; else the read's answer is thrown
     * away (or its connection closed, for large reads or a node the answer no longer names) and the
     * caller reads the location the usual way.
     *
     * @throws TiffinException what the lookup fails with (OBJECT_NOT_FOUND, ...); the key's hint is dropped
     */
    Speculation speculate(String key, ReadHints.Hint hint) {
        Speculation s = new Speculation(hint);
        BlockingConnection c = connections.acquireIdle(hint.endpoint());
        if (c != null) {
            try {
                s.first = c.send(Opcode.DATA_READ, s.requests, null);
                s.connection = c;
            } catch (TiffinException e) {
                connections.release(c); // closed by the failed send
            }
        }
        try {
            s.location = locator.lookUp(key);
        } catch (RuntimeException | Error e) {
            hints.invalidate(key);
            // a key that is gone (evicted, removed) is common; its node is most likely fine
            s.abandon(e instanceof TiffinException t && t.code() == ErrorCode.OBJECT_NOT_FOUND);
            throw e;
        }
        if (s.connection != null) {
            s.confirmed = hints.confirms(s.location, hint);
            if (!s.confirmed) {
                s.abandon(namesEndpoint(s.location, hint.endpoint()));
            }
        }
        return s;
    }

    private static boolean namesEndpoint(ObjectLocation loc, String endpoint) {
        for (ReplicaDescriptor d : loc.replicas()) {
            if (d.endpoint().equals(endpoint)) {
                return true;
            }
        }
        return false;
    }

    /**
     * One get's speculative read ({@link #speculate}): the lookup's answer and, while the read's answer
     * has not been received, the lent connection it will arrive on.
     *
     * <p>Not thread-safe: used by the calling thread only. Gives its lent connection back exactly once
     * (received, discarded or closed).
     */
    final class Speculation {
        private final ReadHints.Hint hint;
        private final List<DataRequest> requests = new ArrayList<>();
        private ObjectLocation location;
        private boolean confirmed;
        private BlockingConnection connection;
        private long first;

        private Speculation(ReadHints.Hint hint) {
            this.hint = hint;
            io.tiffin.core.transport.proto.DataGrant grant = hint.grant() == null ? null
                    : io.tiffin.core.transport.proto.DataGrant.newBuilder().setOps(hint.grant().ops())
                    .setExpiresMs(hint.grant().expiresAtMillis()).setMacHigh(hint.grant().macHigh())
                    .setMacLow(hint.grant().macLow()).setOffset(hint.offset()).setLength(hint.size()).build();
            for (long off = 0; off < hint.size(); off += sliceSize) {
                DataRequest.Builder req = DataRequest.newBuilder().setSegment(hint.segment())
                        .setMountEpoch(hint.mountEpoch()).setOffset(hint.offset() + off)
                        .setLength(Math.min(sliceSize, hint.size() - off));
                if (grant != null) {
                    req.setGrant(grant);
                }
                requests.add(req.build());
            }
        }

        /** The master's answer to the lookup. */
        ObjectLocation location() {
            return location;
        }

        /** Whether the lookup named the hinted replica and its answer waits in the socket. */
        boolean confirmed() {
            return confirmed;
        }

        /**
         * Gives the connection back without the read's answer: read and thrown away when it is small and
         * its node is alive ({@code nodeAlive}: the master still names it), else the connection is closed.
         */
        private void abandon(boolean nodeAlive) {
            BlockingConnection c = connection;
            connection = null;
            if (c == null) {
                return;
            }
            if (nodeAlive && hint.size() <= DISCARD_MAX_BYTES) {
                c.discardAnswers(Opcode.DATA_READ, first, requests.size(), clock.now() + DISCARD_WAIT_NANOS);
            } else {
                c.close();
            }
            connections.release(c);
        }

        /**
         * Receives the confirmed read into {@code dst} (size {@code hint.size()}) within the lookup's lease,
         * counted from {@code startNanos}. Returns whether {@code dst} holds the object; false when the
         * read failed otherwise (the caller reads the location the usual way).
         *
         * @throws TiffinException LEASE_EXPIRED when the node did not answer within the lease (as any read)
         */
        boolean receiveInto(MemorySegment dst, long startNanos) {
            BlockingConnection c = connection;
            connection = null;
            List<MemorySegment> bulks = new ArrayList<>(requests.size());
            for (DataRequest r : requests) {
                bulks.add(dst.asSlice(r.getOffset() - hint.offset(), r.getLength()));
            }
            TiffinException[] outcome;
            try {
                outcome = c.receive(Opcode.DATA_READ, first, requests.size(), bulks,
                        startNanos + TimeUnit.MILLISECONDS.toNanos(location.leaseTtlMillis()));
            } finally {
                connections.release(c);
            }
            for (TiffinException e : outcome) {
                if (e != null) {
                    if (e.code() == ErrorCode.LEASE_EXPIRED) {
                        throw e; // the node may be stalled; after the lease no replica's bytes can be trusted
                    }
                    LOG.debug("speculative read of {} failed ({}); reading it again", location.key(), e.getMessage());
                    return false;
                }
            }
            clock.checkLease(location, startNanos);
            TiffinException bad = checks.mismatch(location, hinted(), dst);
            if (bad != null) {
                LOG.warn("{}; reading it again", bad.getMessage()); // the usual way: other replicas after this one
                return false;
            }
            return true;
        }

        /** The replica of the location the hint named (confirmed). */
        private ReplicaDescriptor hinted() {
            for (ReplicaDescriptor d : location.replicas()) {
                if (d.replicaId() == hint.replicaId() && d.offset() == hint.offset()) {
                    return d;
                }
            }
            return location.replicas().getFirst();
        }
    }
}
