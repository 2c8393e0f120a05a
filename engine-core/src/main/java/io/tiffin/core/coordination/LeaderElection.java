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

    /** Where this election keeps the cluster facts. */
    StateStore stateStore();

    @Override
    void close();
}
