package io.tiffin.core.master;

import java.nio.file.Path;
import java.time.Duration;

/**
 * How a master survives its own failure: standby masters elected through a coordination service
 * ({@code master.coordinator}), or, for a single master, its cluster facts in a directory ({@code master.state-dir}).
 * With neither, a restarted master starts empty and nodes re-mount (as before failover existed).
 *
 * <p>Thread-safe (immutable).
 *
 * @param coordinator {@code zk://host:port[,host:port...][/root]}, or empty
 * @param stateDir the single master's state directory, or null
 * @param advertiseAddress the {@code host:port} clients and nodes reach this master at (named to them as leader)
 * @param sessionTimeout how long after losing its connection a master's coordination session expires (a dead
 *     leader's successor is elected about that long after it died)
 * @param exitWhenDeposed whether a leader that loses its leadership ends its process (exit code 75) so its
 *     supervisor restarts it as a standby with a clean state; otherwise it refuses every request from then on
 */
public record FailoverSettings(String coordinator, Path stateDir, String advertiseAddress, Duration sessionTimeout,
                               boolean exitWhenDeposed) {
    /**
     * @throws IllegalArgumentException if both {@code coordinator} and {@code stateDir} are set: masters with failover
     *     keep the cluster facts in the coordination service, so the directory would be ignored
     */
    public FailoverSettings {
        if (!coordinator.isEmpty() && stateDir != null) {
            throw new IllegalArgumentException("coordinator = " + coordinator + " and stateDir = " + stateDir
                    + " (expected: one of them: a single master keeps its cluster facts in stateDir; masters with"
                    + " failover keep them in the coordinator)");
        }
    }

    /** No failover. */
    public static FailoverSettings none() {
        return new FailoverSettings("", null, "", Duration.ofSeconds(3), false);
    }

    public boolean enabled() {
        return !coordinator.isEmpty() || stateDir != null;
    }
}
