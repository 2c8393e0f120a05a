package io.tiffin.core.node;

import com.google.protobuf.ByteString;
import io.tiffin.api.DataGrant;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.DataAccessMac;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.util.Ticker;

/**
 * A node's check of master-signed data-plane access: every {@code DATA_READ} / {@code DATA_WRITE} must carry a
 * grant the master signed, under the key this node drew for its current mount, for that operation, covering the
 * bytes asked for, not yet expired on the master's clock. The node draws a new key with every mount epoch
 * ({@link #rekey}) and sends it with its mount, re-mount or attach; descriptors of earlier mounts fail the epoch
 * check anyway. The master's clock is estimated from its ping answers ({@link #masterTime}).
 *
 * <p>Thread-safe: the key and the clock offset are volatile; checks run on any event loop.
 */
final class DataAccessCheck {
    private record Keyed(long epoch, ByteString key, DataAccessMac mac) {
    }

    /**
     * How long after its expiry (on the estimated master clock) a grant is still honoured: room for the error of
     * the estimate (a ping's one-way delay, a pause). Leases stay the client's to enforce (a read that outlives
     * its lease fails {@code LEASE_EXPIRED} there); expiry bounds how long a grant can be used at all.
     */
    static final long EXPIRY_GRACE_MILLIS = 1000;

    private final String segment;
    private final Ticker ticker;
    private volatile Keyed current;
    /** The master's clock less this node's, as its last ping answer showed (0 until one did). */
    private volatile long masterOffsetMillis;

    DataAccessCheck(String segment, Ticker ticker) {
        this.segment = segment;
        this.ticker = ticker;
    }

    /** Draws the key of mount {@code epoch} (before the mount request names it) and returns it. */
    ByteString rekey(long epoch) {
        byte[] key = DataAccessMac.newKey();
        current = new Keyed(epoch, ByteString.copyFrom(key), new DataAccessMac(key));
        return current.key();
    }

    /** The key of the current mount, for a repeated mount request. */
    ByteString key() {
        return current.key();
    }

    /** A ping answer's {@code master_time_ms} (0 = the master sent none), taken at its arrival. */
    void masterTime(long masterMillis) {
        if (masterMillis > 0) {
            masterOffsetMillis = masterMillis - ticker.millis();
        }
    }

    /**
     * Refuses {@code req} unless its grant allows {@code op} on its bytes (and, for a write, on its commit
     * record's object).
     *
     * @param opcode the request's name, for messages
     * @throws TiffinException {@code ILLEGAL_CLIENT} for a missing, forged or altered grant, one of another
     *     operation or one that does not cover the request; {@code REPLICA_IS_GONE} for an expired one (as for a
     *     descriptor of an earlier mount: the client looks the key up again)
     */
    void check(DataRequest req, int op, String opcode) {
        if (!req.hasGrant()) {
            throw refused(ErrorCode.ILLEGAL_CLIENT, opcode, req, "it carries no access grant; a data-plane request"
                    + " needs the grant the master signs into each replica descriptor (look the key up, or start"
                    + " the put, at the master and send the descriptor's grant with the request)");
        }
        var g = req.getGrant();
        Keyed k = current;
        DataGrant grant = new DataGrant(g.getOps(), g.getExpiresMs(), g.getMacHigh(), g.getMacLow());
        if (!k.mac().verify(segment, g.getOffset(), g.getLength(), k.epoch(), grant)) {
            throw refused(ErrorCode.ILLEGAL_CLIENT, opcode, req, "its grant's MAC does not match: the grant was"
                    + " altered or forged (its range, operations or expiry changed), or signed for another node or"
                    + " another mount of this segment");
        }
        long masterNow = ticker.millis() + masterOffsetMillis;
        if (g.getExpiresMs() + EXPIRY_GRACE_MILLIS <= masterNow) {
            throw refused(ErrorCode.REPLICA_IS_GONE, opcode, req, "its grant expired " + (masterNow - g.getExpiresMs())
                    + " ms ago (grants last as long as the lookup's lease, or a put's release timeout); look the key"
                    + " up again");
        }
        if (!grant.allows(op)) {
            throw refused(ErrorCode.ILLEGAL_CLIENT, opcode, req, "its grant allows " + ops(g.getOps())
                    + ", not " + ops(op) + " (a lookup's grant reads, a put's writes)");
        }
        if (!within(req.getOffset(), req.getLength(), g)) {
            throw refused(ErrorCode.ILLEGAL_CLIENT, opcode, req, "bytes [" + Long.toUnsignedString(req.getOffset())
                    + ", +" + Long.toUnsignedString(req.getLength()) + ") are out of its grant's range ["
                    + g.getOffset() + ", +" + g.getLength() + ")");
        }
        if (req.hasCommit() && !within(req.getCommit().getOffset(), req.getCommit().getSize(), g)) {
            throw refused(ErrorCode.ILLEGAL_CLIENT, opcode, req, "its commit record's object ["
                    + Long.toUnsignedString(req.getCommit().getOffset()) + ", +"
                    + Long.toUnsignedString(req.getCommit().getSize()) + ") is out of its grant's range ["
                    + g.getOffset() + ", +" + g.getLength() + ")");
        }
    }

    /** Whether {@code [offset, offset + length)} lies within the grant's range (uint64 values that do not fit a long do not). */
    private static boolean within(long offset, long length, io.tiffin.core.transport.proto.DataGrant g) {
        long from = g.getOffset();
        long size = g.getLength();
        return offset >= 0 && length >= 0 && from >= 0 && size >= 0
                && offset >= from && length <= size && offset - from <= size - length;
    }

    private static String ops(int ops) {
        return switch (ops & (DataGrant.READ | DataGrant.WRITE)) {
            case DataGrant.READ -> "read";
            case DataGrant.WRITE -> "write";
            case DataGrant.READ | DataGrant.WRITE -> "read and write";
            default -> "nothing";
        };
    }

    private TiffinException refused(ErrorCode code, String opcode, DataRequest req, String why) {
        return new TiffinException(code, opcode + " of segment " + segment + " refused: " + why);
    }
}
