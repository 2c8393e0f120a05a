package io.tiffin.core.master;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.util.function.LongSupplier;

/**
 * Whether this master serves requests: the leader does; a standby (waiting to be elected, or taking over) and a
 * deposed leader (its coordination session was suspended or expired, or a successor wrote the cluster facts) answer
 * every request but {@code SERVICE_READY} with {@code UNAVAILABLE_IN_CURRENT_STATUS} naming the leader they know, so
 * clients and nodes look for it. Without failover a master is the leader until it closes. A closing master serves no
 * new request: the replies it still held have been answered, so it must not acknowledge what they waited for.
 *
 * <p>With a coordination service a leader also needs its leader lease ({@link #leaseFrom}): while the service has not
 * confirmed it lately, a leader refuses as a standby does and says it does not lead. A leader paused longer than its
 * session (a stopped process, a frozen VM) is replaced meanwhile, and when it wakes it may run for a few hundred
 * milliseconds before its coordination client learns that; the lease, measured on this process's monotonic clock, has
 * lapsed from its first instant awake. A lease that lapsed while the session lived on (a pause shorter than the
 * session, or a slow coordination service) holds again at its next renewal.
 *
 * <p>Thread-safe: volatile fields.
 */
public final class Leadership {
    /** A master's role. */
    public enum Role { LEADER, STANDBY, DEPOSED, CLOSING }

    private volatile Role role;
    private volatile String leaderHint = "";
    /** The leader lease's deadline ({@link System#nanoTime()}, {@link Long#MIN_VALUE} = none); null = unbounded. */
    private volatile LongSupplier lease;

    private Leadership(Role role) {
        this.role = role;
    }

    /** A master without failover: leads from the start. */
    public static Leadership alwaysLeader() {
        return new Leadership(Role.LEADER);
    }

    /** A master that leads once elected. */
    static Leadership standby() {
        return new Leadership(Role.STANDBY);
    }

    public Role role() {
        return role;
    }

    /** Whether this master leads now: elected, not deposed or closing, and within its leader lease. */
    public boolean leads() {
        return role == Role.LEADER && leaseHolds();
    }

    /**
     * Bounds this master's leadership by a lease: {@code deadlineNanos} gives the {@link System#nanoTime()} until
     * which it may act as leader ({@link Long#MIN_VALUE} while it has none).
     */
    void leaseFrom(LongSupplier deadlineNanos) {
        lease = deadlineNanos;
    }

    private boolean leaseHolds() {
        LongSupplier l = lease;
        if (l == null) {
            return true;
        }
        long deadline = l.getAsLong();
        return deadline != Long.MIN_VALUE && System.nanoTime() - deadline < 0;
    }

    void lead() {
        if (role == Role.STANDBY) {
            role = Role.LEADER;
        }
    }

    /** The master closes: it serves no request from now on. */
    void close() {
        role = Role.CLOSING;
    }

    /** No longer leads, for good: a deposed master's state cannot be trusted again. */
    void depose() {
        role = Role.DEPOSED;
    }

    /** The leader's {@code host:port} as this master last heard (empty = unknown). */
    public String leaderHint() {
        return leaderHint;
    }

    void leaderHint(String hint) {
        leaderHint = hint == null ? "" : hint;
    }

    /**
     * Refuses a request unless this master leads.
     *
     * @throws TiffinException {@code UNAVAILABLE_IN_CURRENT_STATUS}, naming the leader when known
     */
    void check() {
        Role r = role;
        if (r == Role.LEADER) {
            if (!leaseHolds()) {
                // not the hint: this master may have been replaced while it was not looking
                throw new NotLeader("its leader lease lapsed (the coordination service has not confirmed it lately:"
                        + " it may have been paused or cut off); it serves again once confirmed, unless another"
                        + " master was elected meanwhile", "");
            }
        } else {
            throw new NotLeader(switch (r) {
                case DEPOSED -> "this master was deposed";
                case CLOSING -> "this master is shutting down";
                default -> "this master is a standby";
            }, leaderHint);
        }
    }

    /** The refusal of a master that does not lead; no stack trace (ordinary traffic during a failover). */
    static final class NotLeader extends TiffinException {
        private static final long serialVersionUID = 1L;

        NotLeader(String what, String leader) {
            super(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, "not the leader: " + what
                    + (leader.isEmpty() ? "; the leader is not known yet" : "; the leader is " + leader)
                    + "; ask another master (master.address lists them)");
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    }
}
