package io.tiffin.core.master;

/**
 * What a node's heartbeat learns ({@link MasterService#ping(String, long)}).
 *
 * <p>Thread-safe (immutable).
 */
public enum PingOutcome {
    /** The node is known; its TTL starts again. */
    OK,
    /** The master does not know the node: it must re-mount its segments. */
    UNKNOWN,
    /**
     * The master restored the node's segment (it took over, or restarted with its state): the node attaches it,
     * reporting the objects it holds, which stay.
     */
    ATTACH,
    /** Another process of this node.id has mounted since: the pinging one is out of the cluster. */
    SUPERSEDED
}
