package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * {@link RestartGuard}: which mounts reveal that clients may still read objects of a previous master run,
 * and until when answers wait.
 */
class RestartGuardTest {
    private static final long START = 1_000_000;
    /** Lease 10 s: a client reuses a lookup for at most 5 s; with a quarter more and 1 ms, 6251 ms. */
    private static final long LEASE = 10_000;
    private static final long GUARD_END = START + 6_251;

    private final RestartGuard guard = new RestartGuard(START, LEASE);

    @Test
    void aNodeMountedToAPreviousRunArmsTheGuardUntilTheLongestCacheWindowEnds() {
        guard.noteMount("fresh", 1, START + 10); // epoch 1: its first mount anywhere
        assertThat(guard.untilMillis()).isZero();

        guard.noteMount("old", 3, START + 20);
        assertThat(guard.untilMillis()).isEqualTo(GUARD_END);
    }

    @Test
    void onlyANodesFirstMountHereWithinTheWindowCounts() {
        guard.noteMount("n", 1, START + 10);
        guard.noteMount("n", 2, START + 20); // re-mounts to this master (its epoch moved here)
        assertThat(guard.untilMillis()).isZero();

        guard.noteMount("late", 5, GUARD_END); // the window is over: nothing cached from a previous run is left
        assertThat(guard.untilMillis()).isZero();
    }

    @Test
    void aRemovalWaitsForAnArmedGuardUntilItPasses() {
        CacheHold before = new CacheHold();
        guard.cover(before, START);
        assertThat(before.untilMillis()).as("not armed").isZero();

        guard.noteMount("old", 2, START);
        CacheHold during = new CacheHold();
        guard.cover(during, START + 1);
        assertThat(during.untilMillis()).isEqualTo(GUARD_END);
        CacheHold after = new CacheHold();
        guard.cover(after, GUARD_END);
        assertThat(after.untilMillis()).isZero();
        guard.cover(null, START); // a removal without hold
    }
}
