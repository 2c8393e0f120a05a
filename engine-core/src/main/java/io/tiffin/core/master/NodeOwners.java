package io.tiffin.core.master;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.Peer;
import io.tiffin.core.transport.Role;
import io.tiffin.core.util.Ticker;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which process owns each mounted node id: the one whose connection mounted (or re-mounted, or attached) it, known
 * by the peer key its HELLO presented ({@code io.tiffin.core.transport.PeerKeys}). While that node is alive (a
 * segment mounted and heard from within three of its ping periods, at least a second), a connection presenting
 * another key may not act for it: no mount under its id, no heartbeat, no unmount, no SSD-tier report. Once the
 * owner falls silent (a crash) another process may mount the id (a restart), and the id moves to it; an admin may
 * act for any node, and an admin's unmount of its segments frees the id. This is what a shared node token cannot
 * tell apart; node certificates ({@code transport.tls.node-names}) bind ids to certificates instead.
 *
 * <p>Thread-safe: a concurrent map; the liveness read is the registry's, under its own lock.
 */
final class NodeOwners {
    /**
     * A node id's owner: its key digest ("" = an older node that presents none), its heartbeat period and when it
     * mounted (counts as heard from then: a node not yet heard from by ping is not silent since forever).
     */
    private record Owner(String keyDigest, long pingIntervalMillis, long sinceMillis) {
    }

    private final ConcurrentHashMap<String, Owner> owners = new ConcurrentHashMap<>();
    private final SegmentRegistry segments;
    private final Ticker ticker;

    NodeOwners(SegmentRegistry segments, Ticker ticker) {
        this.segments = segments;
        this.ticker = ticker;
    }

    /**
     * Refuses {@code peer} acting for {@code nodeId} ({@code what}, for the message) when another process owns that
     * node and it is alive. In-process calls and admins may act for any node.
     *
     * @throws TiffinException {@code ILLEGAL_CLIENT} naming the node, both keys' fingerprints and how to proceed;
     *     for a mount or re-mount {@code SEGMENT_ALREADY_EXISTS}, the code a restarting node retries on
     */
    void check(Peer peer, String nodeId, String what) {
        if (!peer.remote() || peer.roles().contains(Role.ADMIN)) {
            return;
        }
        Owner o = owners.get(nodeId);
        if (o == null || o.keyDigest().equals(peer.keyDigest())) {
            return;
        }
        // lastHeard is Long.MIN_VALUE before the first ping: the mount itself is the last word heard then
        long quiet = ticker.millis() - Math.max(segments.lastHeard(nodeId), o.sinceMillis());
        long lease = leaseMillis(o.pingIntervalMillis());
        if (segments.segmentNamesOf(nodeId).isEmpty() || quiet >= lease) {
            return; // its owner is gone (silent, or unmounted): a restarted process may take the id
        }
        // a mount is refused as the registry refuses a second live process of a node.id (SEGMENT_ALREADY_EXISTS),
        // which a restarting node retries until its predecessor has fallen silent
        boolean mount = what.equals("MOUNT_SEGMENT") || what.equals("REMOUNT_SEGMENT");
        throw new TiffinException(mount ? ErrorCode.SEGMENT_ALREADY_EXISTS : ErrorCode.ILLEGAL_CLIENT, what
                + " for node " + nodeId + " refused: node " + nodeId
                + " is mounted by another process (peer key " + fingerprint(o.keyDigest()) + "; this connection's is "
                + fingerprint(peer.keyDigest()) + ", " + peer.describe() + "), which was heard from " + quiet
                + " ms ago. A node id belongs to the process that mounted it until that process has been silent for "
                + lease + " ms or an admin unmounts it (transport.admin-token); give every node its own node.id");
    }

    /** {@code peer}'s connection mounted, re-mounted or attached {@code nodeId}: that process owns it now. */
    void mounted(Peer peer, String nodeId, long pingIntervalMillis) {
        if (peer.remote()) {
            owners.put(nodeId, new Owner(peer.keyDigest(), pingIntervalMillis, ticker.millis()));
        }
    }

    /** How long a silent owner keeps its id: three heartbeats (an unknown period counts as a second), at least 1 s. */
    static long leaseMillis(long pingIntervalMillis) {
        return Math.max(1000, 3 * (pingIntervalMillis > 0 ? pingIntervalMillis : 1000));
    }

    private static String fingerprint(String digest) {
        return digest.isEmpty() ? "(none)" : digest.substring(0, 12);
    }
}
