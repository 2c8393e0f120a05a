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
    /** Another process of this node.id has mounted since: the pinging one is out of the cluster. */
    SUPERSEDED
}
