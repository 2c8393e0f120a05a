package io.tiffin.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.transport.EventLoops;
import io.tiffin.core.transport.Messages;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportClient;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.ExpireReply;
import io.tiffin.core.transport.proto.ExpireRequest;
import io.tiffin.core.transport.proto.PutStartReply;
import io.tiffin.core.transport.proto.PutStartRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * Failover with real processes: masters and nodes are JVMs started from this test's class path and killed with
 * real signals ({@code kill -9}, {@code SIGSTOP}/{@code SIGCONT}); the coordination service is a real ZooKeeper
 * server in this JVM. Checks the outcome the failover design promises: no acknowledged put is lost while one of
 * its replicas lives, no get returns wrong bytes or an object removed before it started, a paused or isolated
 * leader changes nothing, and a single master restarted with its state directory gets its objects back.
 */
class FailoverProcessTest {
    private static final List<String> JVM = List.of("-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-XX:CICompilerCount=1", "-Xshare:auto", "-Dlog4j2.configurationFile="
                    + FailoverProcessTest.class.getResource("/failover-processes-log4j2.xml"));
    private static final FailoverCluster.Settings SETTINGS = new FailoverCluster.Settings(
            List.of("master.lease-ttl=2s", "master.node-ttl=4s", "master.node-check-interval=500ms",
                    "master.worker-threads=2", "transport.io-threads=1"),
            List.of("node.ping-interval=250ms", "node.io-threads=1"), JVM, "64MiB", Duration.ofSeconds(2));
    private static final Duration START = Duration.ofSeconds(90);
    private static final PutOptions TWO = PutOptions.DEFAULT.withReplicas(2);

    @TempDir(cleanup = CleanupMode.ON_SUCCESS) // the processes' logs stay when a test fails
    Path dir;

    /** The bytes a key holds (the same for every put of it, so any version's bytes are the right bytes). */
    static byte[] valueOf(String key) {
        SplittableRandom r = new SplittableRandom(key.hashCode() * 0x9E3779B97F4A7C15L);
        byte[] v = new byte[512 + r.nextInt(8 * 1024)];
        for (int i = 0; i < v.length; i += 8) {
            long x = r.nextLong();
            for (int b = 0; b < 8 && i + b < v.length; b++) {
                v[i + b] = (byte) (x >>> (8 * b));
            }
        }
        return v;
    }

    private static TiffinClient client(String masters) {
        return TiffinClient.connect(TiffinClient.Options.builder(masters).failoverTimeout(Duration.ofSeconds(40))
                .transport(TransportSettings.defaults().withRpcTimeout(Duration.ofSeconds(4))).build());
    }

    /** The segments of a key's memory replicas, asked until the master answers (null if it never does). */
    private static Set<String> segmentsOf(TiffinClient c, String key) {
        for (int attempt = 0; attempt < 5; attempt++) {
            try {
                Optional<ObjectLocation> loc = c.locate(key);
                if (loc.isPresent()) {
                    Set<String> s = new HashSet<>();
                    for (ReplicaDescriptor d : loc.get().replicas()) {
                        s.add(d.segment());
                    }
                    return s;
                }
            } catch (TiffinException e) {
                pause(200);
            }
        }
        return null;
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis); // paces retries and the load of the workers
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** What a get may answer during a failover besides the right bytes: errors a retry can get past. */
    private static final Set<ErrorCode> RETRYABLE = java.util.EnumSet.of(ErrorCode.RPC_FAIL, ErrorCode.RPC_TIMEOUT,
            ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, ErrorCode.REPLICA_IS_NOT_READY, ErrorCode.TRANSFER_FAIL,
            ErrorCode.REPLICA_IS_GONE, ErrorCode.LEASE_EXPIRED);

    /** What the workers saw: acknowledged puts (key → replica segments), removals, and any wrong answer. */
    private static final class Ledger {
        final Map<String, Set<String>> acked = new ConcurrentHashMap<>();
        final Map<String, Long> removedAt = new ConcurrentHashMap<>();
        /** Removals that failed, key → their codes: named when an acknowledged key is missing at the end. */
        final Map<String, List<ErrorCode>> failedRemoves = new ConcurrentHashMap<>();
        /** Keys an upsert failed on: it may or may not have replaced the object, whose replicas are then unknown. */
        final Set<String> ambiguous = ConcurrentHashMap.newKeySet();
        final AtomicLong rewrites = new AtomicLong();
        final ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
        final AtomicLong gets = new AtomicLong();
        final AtomicLong errors = new AtomicLong();
        final Map<String, AtomicLong> errorCodes = new ConcurrentHashMap<>(); // "operation code" → count
        final List<String> keys = java.util.Collections.synchronizedList(new ArrayList<>());

        String randomKey(SplittableRandom r) {
            synchronized (keys) {
                return keys.isEmpty() ? null : keys.get(r.nextInt(keys.size()));
            }
        }

        /** A get (or a batch get's key) failed with {@code code}: a violation unless retrying may get past it. */
        void checkGetError(String key, ErrorCode code) {
            if (!RETRYABLE.contains(code)) {
                violations.add("get of " + key + " failed with " + code + ", not an error a retry gets past");
            }
        }

        /** A get of {@code key} started at {@code startNanos} answered {@code bytes} (null = not found). */
        void checkGet(String key, long startNanos, byte[] bytes) {
            gets.incrementAndGet();
            if (bytes == null) {
                return;
            }
            Long removed = removedAt.get(key);
            if (removed != null && removed < startNanos) {
                violations.add("get of " + key + " found it after its removal returned");
            } else if (!Arrays.equals(bytes, valueOf(key))) {
                violations.add("get of " + key + " returned wrong bytes (" + bytes.length + " bytes)");
            }
        }
    }

    /**
     * One worker: puts of new keys, gets, batch gets and removals of known keys, and rewrites of its own keys that
     * are never removed (plain puts of an existing key, which are no-ops, and upserts), until {@code stop}.
     */
    private static void work(TiffinClient c, int id, Ledger ledger, AtomicBoolean stop) {
        SplittableRandom r = new SplittableRandom(id);
        long seq = 0;
        List<String> mine = new ArrayList<>(); // this worker's rewritten keys
        while (!stop.get()) {
            int op = r.nextInt(100);
            String name = op < 40 ? "put" : op < 68 ? "get" : op < 80 ? "batch-get" : op < 88 ? "rewrite" : "remove";
            try {
                if (op >= 80 && op < 88) {
                    rewrite(c, id, r, mine, ledger);
                } else if (op < 40) {
                    String key = "w" + id + "-" + seq++;
                    c.put(key, valueOf(key), TWO);
                    Set<String> segs = segmentsOf(c, key);
                    ledger.acked.put(key, segs == null ? Set.of() : segs);
                    ledger.keys.add(key);
                } else if (op < 68) {
                    String key = ledger.randomKey(r);
                    if (key != null) {
                        long start = System.nanoTime();
                        byte[] got;
                        try {
                            got = c.get(key);
                        } catch (TiffinException e) {
                            got = null;
                            if (e.code() != ErrorCode.OBJECT_NOT_FOUND) {
                                ledger.checkGetError(key, e.code());
                                throw e;
                            }
                        }
                        ledger.checkGet(key, start, got);
                    }
                } else if (op < 80) {
                    List<String> batch = new ArrayList<>();
                    for (int i = 0; i < 6; i++) {
                        String key = ledger.randomKey(r);
                        if (key != null && !batch.contains(key)) {
                            batch.add(key);
                        }
                    }
                    long start = System.nanoTime();
                    List<KeyResult<byte[]>> got = c.batchGet(batch);
                    for (KeyResult<byte[]> k : got) {
                        if (k.isOk()) {
                            ledger.checkGet(k.key(), start, k.value());
                        } else if (k.code() != ErrorCode.OBJECT_NOT_FOUND) {
                            ledger.checkGetError(k.key(), k.code());
                        }
                    }
                } else {
                    String key = ledger.randomKey(r);
                    if (key != null && ledger.acked.containsKey(key) && !ledger.removedAt.containsKey(key)) {
                        try {
                            c.remove(key);
                        } catch (TiffinException e) {
                            ledger.failedRemoves.computeIfAbsent(key, k -> new java.util.concurrent.CopyOnWriteArrayList<>())
                                    .add(e.code());
                            throw e;
                        }
                        ledger.removedAt.put(key, System.nanoTime());
                    }
                }
            } catch (TiffinException e) {
                ledger.errors.incrementAndGet(); // an error during a failover (a get's is checked above)
                ledger.errorCodes.computeIfAbsent(name + " " + e.code(), k -> new AtomicLong()).incrementAndGet();
                pause(20);
            }
        }
    }

    /**
     * A put of a new key of this worker's, or a plain put (a no-op) or an upsert of one it put before, all with the
     * key's one value; these keys are never removed. A key's replicas are asked after each success; a failed upsert
     * leaves them unknown (it may have replaced the object before it failed).
     */
    private static void rewrite(TiffinClient c, int id, SplittableRandom r, List<String> mine, Ledger ledger) {
        boolean fresh = mine.isEmpty() || r.nextInt(3) == 0;
        String key = fresh ? "u" + id + "-" + mine.size() : mine.get(r.nextInt(mine.size()));
        boolean upsert = !fresh && r.nextBoolean();
        try {
            c.put(key, valueOf(key), upsert ? TWO.withUpsert(true) : TWO);
        } catch (TiffinException e) {
            if (upsert) {
                ledger.ambiguous.add(key);
            }
            throw e;
        }
        if (fresh) {
            mine.add(key);
        }
        ledger.rewrites.incrementAndGet();
        Set<String> segs = segmentsOf(c, key);
        ledger.acked.put(key, segs == null ? Set.of() : segs);
    }

    /**
     * Three masters, three nodes, two replicas, four client threads putting, getting, batch-getting, rewriting
     * (plain puts of existing keys and upserts, which wait out a recovery) and removing: the leader is killed five
     * times and a node twice. Afterwards every acknowledged put whose replicas did not all die reads back
     * byte-exact, removed keys stay removed, and no get ever returned wrong bytes.
     */
    @Test
    void chaosKillsTheLeaderFiveTimesAndANodeTwiceAndLosesNothingAcknowledged() throws Exception {
        try (FailoverCluster cluster = new FailoverCluster(dir, null, 3, 3, SETTINGS)) {
            cluster.start(START);
            Ledger ledger = new Ledger();
            Set<String> deadSegments = new HashSet<>();
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> workers = new ArrayList<>();
            try (TiffinClient c = client(cluster.masterList())) {
                for (int t = 0; t < 4; t++) {
                    int id = t;
                    Thread w = new Thread(() -> work(c, id, ledger, stop), "chaos-worker-" + t);
                    w.start();
                    workers.add(w);
                }
                for (int round = 0; round < 5; round++) {
                    pause(1500); // load between faults
                    if (round == 1 || round == 3) {
                        int j = round == 1 ? 0 : 2;
                        deadSegments.add(cluster.killNode(j));
                        pause(600);
                        cluster.startNode(j);
                        cluster.awaitNode(j, START);
                    }
                    int leader = cluster.awaitLeader(-1, Duration.ofSeconds(40));
                    long term = cluster.leaderTerm();
                    cluster.killMaster(leader);
                    cluster.awaitLeader(term, Duration.ofSeconds(40));
                    cluster.startMaster(leader);
                    cluster.master(leader).awaitLine("Tiffin master listening", START);
                }
                pause(1500);
                stop.set(true);
                for (Thread w : workers) {
                    w.join(TimeUnit.SECONDS.toMillis(60));
                }
                assertThat(ledger.violations).isEmpty();
                assertThat(ledger.acked.size()).as("acknowledged puts").isGreaterThan(40);
                int checked = 0;
                for (Map.Entry<String, Set<String>> e : ledger.acked.entrySet()) {
                    String key = e.getKey();
                    boolean removed = ledger.removedAt.containsKey(key);
                    boolean survives = !e.getValue().isEmpty() && !deadSegments.containsAll(e.getValue());
                    if (ledger.ambiguous.contains(key)) {
                        byte[] got = getOrNull(c, key);
                        assertThat(got == null || Arrays.equals(got, valueOf(key))).as("bytes of %s", key).isTrue();
                    } else if (removed) {
                        assertThat(getOrNull(c, key)).as("removed %s", key).isNull();
                    } else if (survives) {
                        assertThat(getOrNull(c, key)).as("acknowledged %s on %s (segments killed: %s; its failed"
                                + " removes: %s)", key, e.getValue(), deadSegments, ledger.failedRemoves.get(key))
                                .isEqualTo(valueOf(key));
                        checked++;
                    }
                }
                assertThat(checked).isGreaterThan(20);
                System.out.printf("chaos: %d acknowledged puts, %d checked after 5 leader kills and 2 node kills, %d"
                        + " removed, %d rewrites, %d gets, %d errors %s, %d masters restarted after losing their"
                        + " session%n", ledger.acked.size(), checked, ledger.removedAt.size(), ledger.rewrites.get(),
                        ledger.gets.get(), ledger.errors.get(), ledger.errorCodes, cluster.deposedRestarts());
            } finally {
                stop.set(true);
            }
        }
    }

    /**
     * Puts {@code key} with two replicas until it is acknowledged: on a loaded machine a leader can lose its
     * coordinator session at any time, and a put caught in that failover fails (it was never acknowledged).
     */
    private static void put(TiffinClient c, String key) {
        for (int attempt = 1; ; attempt++) {
            try {
                c.put(key, valueOf(key), TWO);
                return;
            } catch (TiffinException e) {
                if (attempt == 5) {
                    throw e;
                }
                System.out.println("put " + key + " failed (" + e.code() + "), attempt " + attempt + "; again");
                pause(250);
            }
        }
    }

    /** The bytes of {@code key}, null when it is not found; retries while the master recovers. */
    private static byte[] getOrNull(TiffinClient c, String key) {
        TiffinException last = null;
        for (int attempt = 0; attempt < 20; attempt++) {
            try {
                return c.get(key);
            } catch (TiffinException e) {
                if (e.code() == ErrorCode.OBJECT_NOT_FOUND) {
                    return null;
                }
                last = e;
                pause(250);
            }
        }
        throw last;
    }

    /**
     * A leader paused with SIGSTOP until another is elected, then resumed, changes nothing: it serves no more
     * writes, and what was put and removed through its successor stays as it was; the new leader knows the deadlines
     * set by a put and by an EXPIRE through the old one.
     */
    @Test
    void aPausedLeaderThatWakesUpChangesNothing() throws Exception {
        try (FailoverCluster cluster = new FailoverCluster(dir, null, 3, 2, SETTINGS);
             TransportClientHolder direct = new TransportClientHolder()) {
            cluster.start(START);
            try (TiffinClient c = client(cluster.masterList())) {
                for (int i = 0; i < 30; i++) {
                    put(c, "p" + i);
                }
                c.put("p-ttl", valueOf("p-ttl"), TWO.withTtlMillis(600_000)); // deadlines go to the nodes' records
                put(c, "p-expire");
                assertThat(c.expire("p-expire", 600_000)).isTrue();
                long term = cluster.leaderTerm();
                int old = cluster.leader();
                TransportClient early = direct.open(cluster.masterAddress(old));
                cluster.master(old).pause();
                java.util.concurrent.CompletableFuture<String> staleExist;
                try {
                    cluster.awaitLeader(term, Duration.ofSeconds(40));
                    for (int i = 30; i < 45; i++) {
                        put(c, "p" + i);
                    }
                    for (int i = 0; i < 10; i++) {
                        c.remove("p" + i);
                    }
                    assertThat(direct.expireAnswered(cluster.masterAddress(cluster.leader()), "p44", 600_000)).as(
                            "an EXPIRE through the new leader").isTrue();
                    // waits in the paused master's socket: the first thing it reads when it wakes, long before its
                    // coordination client can learn that its session ended
                    staleExist = TransportClientHolder.exist(early, "p0");
                } finally {
                    cluster.master(old).resume();
                }
                // its leader lease lapsed while it slept: it refuses as a master that does not lead (or its process
                // has already ended), and never answers from the metadata of the term that ended
                assertThat(staleExist.get(30, TimeUnit.SECONDS)).as("p0, removed through the new leader, asked of the"
                        + " old one the moment it wakes").isIn(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS.name(),
                        ErrorCode.RPC_FAIL.name());
                early.close();
                // an EXPIRE through it at once fails: it stops (its connections close, as seen here), or its
                // leadership refuses, or the nodes, which follow the new term, refuse the deadline's record
                assertThat(direct.expireAnswered(cluster.masterAddress(old), "p-expire", 5_000)).as(
                        "an EXPIRE through the paused leader").isFalse();
                // the old leader learns its session is gone and stops (exit 75) or refuses writes
                await().atMost(Duration.ofSeconds(30)).until(() -> !cluster.master(old).alive()
                        || !direct.putStartAccepted(cluster.masterAddress(old)));
                assertThat(direct.putStartAccepted(cluster.masterAddress(old))).isFalse();
                for (int i = 0; i < 45; i++) {
                    String key = "p" + i;
                    assertThat(getOrNull(c, key)).as(key).isEqualTo(i < 10 ? null : valueOf(key));
                }
                for (String key : List.of("p-ttl", "p-expire")) {
                    assertThat(getOrNull(c, key)).as(key).isEqualTo(valueOf(key));
                    assertThat(c.ttlMillis(key)).as("%s: its deadline, kept by the new leader", key)
                            .isGreaterThan(60_000).isLessThanOrEqualTo(600_000);
                }
            }
        }
    }

    /**
     * A leader cut off from the coordination service (its connection black-holed, so its session expires) stops
     * accepting writes, and another master takes over with every object.
     */
    @Test
    void anIsolatedLeaderStopsAcceptingWrites() throws Exception {
        try (FailoverCluster cluster = new FailoverCluster(dir, null, 3, 2, SETTINGS);
             TransportClientHolder direct = new TransportClientHolder()) {
            List<BlackholeProxy> proxies = new ArrayList<>();
            String root = cluster.coordinator().substring(cluster.coordinator().indexOf('/', 5));
            for (int i = 0; i < 3; i++) {
                BlackholeProxy p = new BlackholeProxy(cluster.coordinatorPort());
                proxies.add(p);
                cluster.coordinatorOf(i, "zk://127.0.0.1:" + p.port() + root);
            }
            try {
                cluster.start(START);
                try (TiffinClient c = client(cluster.masterList())) {
                    for (int i = 0; i < 20; i++) {
                        put(c, "i" + i);
                    }
                    long term = cluster.leaderTerm();
                    int old = cluster.leader();
                    proxies.get(old).blackhole();
                    cluster.awaitLeader(term, Duration.ofSeconds(40));
                    await().atMost(Duration.ofSeconds(30)).until(() -> !direct.putStartAccepted(
                            cluster.masterAddress(old)));
                    put(c, "after");
                    for (int i = 0; i < 20; i++) {
                        assertThat(getOrNull(c, "i" + i)).isEqualTo(valueOf("i" + i));
                    }
                    assertThat(getOrNull(c, "after")).isEqualTo(valueOf("after"));
                }
            } finally {
                proxies.forEach(BlackholeProxy::close);
            }
        }
    }

    /** A single master with {@code master.state-dir}, killed with SIGKILL and restarted, has its objects back. */
    @Test
    void aSingleMasterRestartedWithItsStateDirKeepsItsObjects() throws Exception {
        int port = freePort();
        String address = "127.0.0.1:" + port;
        List<String> masterArgs = List.of("master", "--host", "127.0.0.1", "--port", Integer.toString(port),
                "--admin-port", "0", "--state-dir", dir.resolve("state").toString(), "-D", "master.lease-ttl=2s");
        TiffinProcess master = TiffinProcess.start("master", dir, masterArgs, JVM);
        List<TiffinProcess> nodes = new ArrayList<>();
        try {
            master.awaitLine("Tiffin master listening", START);
            for (int j = 0; j < 2; j++) {
                nodes.add(TiffinProcess.start("node" + j, dir, List.of("node", "--master", address, "--segment-size",
                        "32MiB", "-D", "node.id=node" + j, "-D", "node.ping-interval=250ms"), JVM));
            }
            for (TiffinProcess n : nodes) {
                n.awaitLine("Tiffin node ", START);
            }
            Map<String, Long> versions = new java.util.HashMap<>();
            try (TiffinClient c = client(address)) {
                for (int i = 0; i < 40; i++) {
                    put(c, "s" + i);
                    versions.put("s" + i, c.locate("s" + i).orElseThrow().version());
                }
            }
            master.kill9();
            master = TiffinProcess.start("master", dir, masterArgs, JVM);
            master.awaitLine("Tiffin master listening", START);
            try (TiffinClient c = client(address)) {
                await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> c.get("s0") != null);
                for (int i = 0; i < 40; i++) {
                    assertThat(getOrNull(c, "s" + i)).isEqualTo(valueOf("s" + i));
                    assertThat(c.locate("s" + i).orElseThrow().version()).isEqualTo(versions.get("s" + i));
                }
            }
        } finally {
            nodes.forEach(TiffinProcess::close);
            master.close();
        }
    }

    private static int freePort() {
        return FailoverCluster.freePort(); // the master comes back on it
    }

    /** Raw connections for asking a given master directly whether it still takes writes. */
    private static final class TransportClientHolder implements AutoCloseable {
        private final io.netty.channel.EventLoopGroup group = EventLoops.newGroup("failover-test", 1, true);

        /** Whether the master at {@code address} answers a PutStart with replicas (false: refused or gone). */
        boolean putStartAccepted(String address) {
            String[] hp = address.split(":");
            try (TransportClient t = TransportClient.connect(hp[0], Integer.parseInt(hp[1]), TransportSettings
                    .defaults().withHandshakeTimeout(Duration.ofSeconds(1)).withRpcTimeout(Duration.ofSeconds(1)),
                    "failover-test", group)) {
                PutStartReply r = t.callSync(Opcode.PUT_START, PutStartRequest.newBuilder().setClientId("probe")
                        .setKey("probe-" + System.nanoTime()).setSize(64).setOptions(Messages.toMsg(PutOptions.DEFAULT))
                        .build(), PutStartReply.parser());
                return r.getReplicasCount() > 0;
            } catch (RuntimeException e) {
                return false;
            }
        }

        /** A connection to the master at {@code address}, opened now; the caller closes it. */
        TransportClient open(String address) {
            String[] hp = address.split(":");
            return TransportClient.connect(hp[0], Integer.parseInt(hp[1]), TransportSettings.defaults()
                    .withHandshakeTimeout(Duration.ofSeconds(1)).withRpcTimeout(Duration.ofSeconds(60)),
                    "failover-test", group);
        }

        /** An EXIST_KEY of {@code key} through {@code t}: "exists", "absent", or the failure's error code. */
        static java.util.concurrent.CompletableFuture<String> exist(TransportClient t, String key) {
            return t.call(Opcode.EXIST_KEY, io.tiffin.core.transport.proto.KeyRequest.newBuilder().setKey(key).build(),
                    null).handle((frame, e) -> {
                        if (e != null) {
                            Throwable cause = e instanceof java.util.concurrent.CompletionException ? e.getCause() : e;
                            return cause instanceof TiffinException te ? te.code().name() : cause.toString();
                        }
                        try {
                            return frame.parseControl(io.tiffin.core.transport.proto.ExistReply.parser()).getExists()
                                    ? "exists" : "absent";
                        } catch (RuntimeException parse) {
                            return parse.toString();
                        } finally {
                            frame.release();
                        }
                    });
        }

        /** Whether the master at {@code address} answers an EXPIRE of {@code key} (false: refused, failed or gone). */
        boolean expireAnswered(String address, String key, long ttlMillis) {
            String[] hp = address.split(":");
            try (TransportClient t = TransportClient.connect(hp[0], Integer.parseInt(hp[1]), TransportSettings
                    .defaults().withHandshakeTimeout(Duration.ofSeconds(1)).withRpcTimeout(Duration.ofSeconds(10)),
                    "failover-test", group)) {
                t.callSync(Opcode.EXPIRE, ExpireRequest.newBuilder().setKey(key).setMode(1).setTtlMs(ttlMillis)
                        .build(), ExpireReply.parser());
                return true;
            } catch (RuntimeException e) {
                return false;
            }
        }

        @Override
        public void close() {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }
}
