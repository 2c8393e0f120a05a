package io.tiffin.core.coordination;

/**
 * Picks one leader among the masters of a cluster and tells each master whether it leads. Implemented on a
 * coordination service ({@link ZooKeeperCoordination}, through Apache Curator's {@code LeaderLatch}); another
 * (etcd) can be a plugin behind this interface.
 *
 * <p>Implementations are thread-safe.
 */
public interface LeaderElection extends AutoCloseable {
    /**
     * What a candidate learns, on a thread of the implementation's.
     *
     * <p>Implementations must be thread-safe.
     */
    interface Listener {
        /** This master now leads. */
        void elected();

        /**
         * This master no longer leads, or may not (its session with the coordination service is suspended or
         * expired): it must stop accepting writes at once.
         */
        void lost(String why);
    }

    /** Joins the election as {@code candidate} (this master's {@code host:port}); the listener hears the outcome. */
    void start(String candidate, Listener listener);

    /** The leader's {@code host:port} as the coordination service knows it, or empty. */
    String leader();

    /**
     * Until when ({@link System#nanoTime()}) this master may act as the leader without hearing from the coordination
     * service again: its leader lease. The coordination service names no other leader before this master's session
     * ends, and the session cannot end sooner than its timeout after the service last heard from this master; so a
     * leader that acts only within its lease never acts beside a successor, even when it was paused (a stopped
     * process, a frozen VM, a long collection) and has not yet been told that it lost. {@link Long#MIN_VALUE} while
     * this master has not been elected, or its lease has not been confirmed since.
     */
    long leaseDeadlineNanos();

    /**
     * Confirms the leader lease now with a round trip to the coordination service, on the calling thread (it may
     * block for the service's timeouts); the lease is renewed in the background as well.
     *
     * @return whether the lease was renewed (false: not elected, the session changed, or the service did not answer)
     */
    boolean renewLease();

    /** Where this election keeps the cluster facts. */
    StateStore stateStore();

    @Override
    void close();
}
