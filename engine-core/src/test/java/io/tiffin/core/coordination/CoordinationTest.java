package io.tiffin.core.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Leader election and the facts' compare-and-set on a real ZooKeeper server in this JVM, and the state file. */
class CoordinationTest {
    @TempDir
    Path dir;

    private static LeaderElection.Listener listener(AtomicBoolean leads, AtomicReference<String> lost) {
        return new LeaderElection.Listener() {
            @Override
            public void elected() {
                leads.set(true);
            }

            @Override
            public void lost(String why) {
                leads.set(false);
                lost.set(why);
            }
        };
    }

    @Test
    void oneCandidateLeadsItsSuccessorTakesOverAndAStaleWriteConflicts() {
        try (EmbeddedZooKeeper zk = new EmbeddedZooKeeper("127.0.0.1", 0, dir.resolve("zk"))) {
            String url = zk.url("/t1");
            AtomicBoolean aLeads = new AtomicBoolean();
            AtomicBoolean bLeads = new AtomicBoolean();
            AtomicReference<String> aLost = new AtomicReference<>();
            AtomicReference<String> bLost = new AtomicReference<>();
            ZooKeeperCoordination a = new ZooKeeperCoordination(url, Duration.ofSeconds(2), Duration.ofSeconds(10));
            try (ZooKeeperCoordination b = new ZooKeeperCoordination(url, Duration.ofSeconds(2),
                    Duration.ofSeconds(10))) {
                a.start("a:1", listener(aLeads, aLost));
                await().atMost(Duration.ofSeconds(10)).untilTrue(aLeads);
                b.start("b:1", listener(bLeads, bLost));
                await().atMost(Duration.ofSeconds(10)).until(() -> "a:1".equals(b.leader()));
                assertThat(bLeads).isFalse();
                StateStore.Snapshot s = a.stateStore().read();
                assertThat(s.version()).isEqualTo(-1);
                long v = a.stateStore().write(new byte[] {1}, s.version());
                a.close(); // the leader leaves: the standby leads
                await().atMost(Duration.ofSeconds(10)).untilTrue(bLeads);
                StateStore.Snapshot seen = b.stateStore().read();
                assertThat(seen.data()).containsExactly(1);
                b.stateStore().write(new byte[] {2}, seen.version());
                // the deposed leader's next write (with the version it knew) is refused
                assertThatThrownBy(() -> b.stateStore().write(new byte[] {3}, v))
                        .isInstanceOf(StateConflictException.class);
            }
        }
    }

    @Test
    void theLeadersLeaseIsRenewedWhileTheEnsembleAnswersAndLapsesWithinTheSessionWhenItStops() {
        Duration session = Duration.ofSeconds(2);
        EmbeddedZooKeeper zk = new EmbeddedZooKeeper("127.0.0.1", 0, dir.resolve("zk"));
        AtomicBoolean zkClosed = new AtomicBoolean();
        try (ZooKeeperCoordination a = new ZooKeeperCoordination(zk.url("/t3"), session, Duration.ofSeconds(10));
             ZooKeeperCoordination b = new ZooKeeperCoordination(zk.url("/t3"), session, Duration.ofSeconds(10))) {
            AtomicBoolean aLeads = new AtomicBoolean();
            AtomicBoolean bLeads = new AtomicBoolean();
            a.start("a:1", listener(aLeads, new AtomicReference<>()));
            await().atMost(Duration.ofSeconds(10)).untilTrue(aLeads);
            b.start("b:1", listener(bLeads, new AtomicReference<>()));
            await().atMost(Duration.ofSeconds(10)).until(() -> "a:1".equals(b.leader()));
            assertThat(b.leaseDeadlineNanos()).as("a standby has no lease").isEqualTo(Long.MIN_VALUE);
            assertThat(b.renewLease()).isFalse();
            assertThat(a.renewLease()).isTrue();
            long first = a.leaseDeadlineNanos();
            long left = first - System.nanoTime();
            assertThat(left).as("at most four fifths of the session from now").isPositive()
                    .isLessThanOrEqualTo(session.toNanos() * 4 / 5);
            // renewed in the background, a fifth of the session apart
            await().atMost(Duration.ofSeconds(5)).until(() -> a.leaseDeadlineNanos() - first > 0);
            zkClosed.set(true);
            zk.close(); // the ensemble stops answering: no renewal, and the lease ends before the session could
            long stopped = System.nanoTime();
            // lapsed by then, or ended (Long.MIN_VALUE) when the coordination client gave up the latch
            await().atMost(Duration.ofSeconds(5)).until(() -> a.leaseDeadlineNanos() == Long.MIN_VALUE
                    || System.nanoTime() - a.leaseDeadlineNanos() > 0);
            long last = a.leaseDeadlineNanos();
            if (last != Long.MIN_VALUE) {
                assertThat(last - stopped).as("no renewal sent after the ensemble stopped")
                        .isLessThanOrEqualTo(session.toNanos() * 4 / 5);
            }
        } finally {
            if (!zkClosed.get()) {
                zk.close();
            }
        }
    }

    @Test
    void theStateFileIsReplacedAtomicallyAndLockedAgainstASecondMaster() {
        try (FileStateStore store = new FileStateStore(dir.resolve("state"))) {
            assertThat(store.read().data()).isEmpty();
            long v = store.write(new byte[] {7, 8}, store.read().version());
            assertThat(store.read().data()).containsExactly(7, 8);
            assertThatThrownBy(() -> store.write(new byte[] {9}, v - 1)).isInstanceOf(StateConflictException.class);
            assertThatThrownBy(() -> new FileStateStore(dir.resolve("state")))
                    .isInstanceOfSatisfying(io.tiffin.api.TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(io.tiffin.api.ErrorCode.FILE_LOCK_FAIL))
                    .hasMessageContaining("master.state-dir = ").hasMessageContaining("in use by another master");
        }
        try (FileStateStore again = new FileStateStore(dir.resolve("state"))) {
            assertThat(again.read().data()).containsExactly(7, 8);
        }
    }

    /** A state directory that is a file, or cannot be made, is refused naming master.state-dir. */
    @Test
    void aStateDirectoryThatCannotBeOneIsRefusedNamingTheKey() throws Exception {
        java.nio.file.Path file = java.nio.file.Files.writeString(dir.resolve("a-file"), "x");
        for (java.nio.file.Path bad : java.util.List.of(file, java.nio.file.Path.of("/proc/no-such-dir"))) {
            assertThatThrownBy(() -> new FileStateStore(bad)).isInstanceOfSatisfying(io.tiffin.api.TiffinException.class,
                    e -> assertThat(e.code()).isEqualTo(io.tiffin.api.ErrorCode.FILE_OPEN_FAIL))
                    .hasMessageContaining("master.state-dir = " + bad + " cannot be the master's state directory");
        }
    }

    @Test
    void masterAddressesParseAList() {
        assertThat(MasterAddresses.parse(" a:1, b:2 ,a:1").all()).containsExactly("a:1", "b:2");
        assertThatThrownBy(() -> MasterAddresses.parse(" , ")).isInstanceOf(IllegalArgumentException.class);
    }
}
