package io.tiffin.bench;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.config.Sizes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tiffin bench failover}: kills the leading master with SIGKILL, again and again, in a cluster of real
 * processes (masters and nodes started from the distribution's launcher, the coordination service in this JVM
 * unless {@code --coordinator} names one), and measures per kill: how long until another master leads
 * ({@code detect_ms}), until the first put through it succeeds ({@code first_put_ms}, as a client that knows every
 * master sees it), until a get sent right after the kill returns the bytes of an object put before the first kill and
 * never read since (so no client knows where it is: the get needs a master; {@code first_get_ms}, -1 when it answered
 * anything else, a miss an engine would have recomputed),
 * and how many of the objects acknowledged before the kill read back byte-exact afterwards. Prints CSV rows
 * {@code event,detect_ms,first_put_ms,objects_before,objects_after,lost,first_get_ms} and a final line
 * {@code lost objects: N}. Every process runs with the default settings.
 *
 * <p>Not thread-safe: one instance runs once.
 */
@Command(name = "failover", mixinStandardHelpOptions = true,
        description = "Kills the leading master repeatedly; measures detection, the first put through the new leader"
                + " and objects lost.")
public final class BenchFailoverCommand implements Callable<Integer> {
    static final String HEADER = "event,detect_ms,first_put_ms,objects_before,objects_after,lost,first_get_ms";

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--masters", defaultValue = "3", description = "masters (default ${DEFAULT-VALUE})")
    int masters;

    @Option(names = "--nodes", defaultValue = "3", description = "nodes (default ${DEFAULT-VALUE})")
    int nodes;

    @Option(names = "--kills", defaultValue = "5", description = "times the leader is killed (default ${DEFAULT-VALUE})")
    int kills;

    @Option(names = "--coordinator", description = "zk://host:port[/root] of a running ZooKeeper; default: one in"
            + " this JVM")
    String coordinator;

    @Option(names = "--objects", defaultValue = "2000", description = "objects put before the first kill"
            + " (default ${DEFAULT-VALUE})")
    int objects;

    @Option(names = "--value-size", defaultValue = "16KiB", description = "bytes per object (default ${DEFAULT-VALUE})")
    String valueSize;

    @Option(names = "--replicas", defaultValue = "2", description = "replicas per object (default ${DEFAULT-VALUE})")
    int replicas;

    @Option(names = "--segment-size", defaultValue = "256MiB", description = "each node's segment"
            + " (default ${DEFAULT-VALUE})")
    String segmentSize;

    @Option(names = "--dir", description = "where the processes' logs go (default: a new temporary directory)")
    Path dir;

    @Option(names = "--csv", description = "append the rows to this CSV file")
    Path csv;

    /** One kill's measurements. Thread-safe (immutable). */
    record Row(String event, long detectMillis, long firstPutMillis, int before, int after, long firstGetMillis) {
        String csv() {
            return event + "," + detectMillis + "," + firstPutMillis + "," + before + "," + after + "," + (before - after)
                    + "," + firstGetMillis;
        }
    }

    @Override
    public Integer call() throws IOException, InterruptedException {
        if (masters < 2 || nodes < 1 || kills < 1 || objects < 1 || replicas < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--masters must be >= 2, --nodes, --kills,"
                    + " --objects and --replicas >= 1");
        }
        Path work = dir != null ? Files.createDirectories(dir) : Files.createTempDirectory("tiffin-bench-failover");
        int size = (int) Sizes.parse(valueSize);
        FailoverCluster.Settings settings = new FailoverCluster.Settings(List.of(), List.of(), List.of(), segmentSize,
                Duration.ofSeconds(3));
        List<Row> rows = new ArrayList<>();
        System.out.println("Processes and logs in " + work);
        try (FailoverCluster cluster = new FailoverCluster(work, coordinator, masters, nodes, settings)) {
            cluster.start(Duration.ofSeconds(120));
            System.out.println("Masters " + cluster.masterList() + " elect through " + cluster.coordinator());
            try (TiffinClient client = TiffinClient.connect(TiffinClient.Options.builder(cluster.masterList())
                    .failoverTimeout(Duration.ofSeconds(60)).build())) {
                PutOptions options = PutOptions.DEFAULT.withReplicas(replicas);
                List<String> acked = new ArrayList<>();
                for (int i = 0; i < objects; i++) {
                    String key = "failover-" + i;
                    client.put(key, valueOf(key, size), options);
                    acked.add(key);
                }
                for (int k = 1; k <= kills; k++) { // read by nothing before its kill's get: no client knows it
                    client.put(coldKey(k), valueOf(coldKey(k), size), options);
                }
                System.out.println(HEADER);
                for (int k = 1; k <= kills; k++) {
                    Row row = killLeader(cluster, client, k, acked, size, options);
                    rows.add(row);
                    System.out.println(row.csv());
                }
            }
        }
        long lost = rows.stream().mapToLong(r -> r.before() - r.after()).sum();
        System.out.println("lost objects: " + lost);
        BenchSupport.writeCsv(csv, HEADER, rows.stream().map(Row::csv).toList());
        return lost == 0 ? 0 : 1;
    }

    private Row killLeader(FailoverCluster cluster, TiffinClient client, int k, List<String> acked, int size,
                           PutOptions options) throws InterruptedException {
        int leader = cluster.awaitLeader(-1, Duration.ofSeconds(60));
        long term = cluster.leaderTerm();
        client.put("warm-" + k, valueOf("warm-" + k, size), options); // the leader serves (its recovery is over)
        int before = acked.size();
        long t0 = System.nanoTime();
        cluster.killMaster(leader);
        CompletableFuture<Long> detected = CompletableFuture.supplyAsync(() -> {
            cluster.awaitLeader(term, Duration.ofSeconds(60));
            return (System.nanoTime() - t0) / 1_000_000;
        });
        String known = coldKey(k);
        CompletableFuture<Long> firstGet = CompletableFuture.supplyAsync(() -> {
            try {
                return Arrays.equals(client.get(known), valueOf(known, size)) ? (System.nanoTime() - t0) / 1_000_000
                        : -1L;
            } catch (TiffinException e) {
                return -1L; // a miss: the get answered an error, not the object
            }
        });
        String probe = "first-put-" + k;
        client.put(probe, valueOf(probe, size), options);
        long firstPut = (System.nanoTime() - t0) / 1_000_000;
        long detect = detected.join();
        long firstGetMillis = firstGet.join();
        int after = readBack(client, acked, size);
        cluster.startMaster(leader); // back as a standby for the next kill
        cluster.master(leader).awaitLine("Tiffin master listening", Duration.ofSeconds(120));
        return new Row("kill-leader-" + k, detect, firstPut, before, after, firstGetMillis);
    }

    /** How many of {@code keys} read back byte-exact (retrying answers that mean "try again"). */
    private static int readBack(TiffinClient client, List<String> keys, int size) throws InterruptedException {
        int ok = 0;
        for (int from = 0; from < keys.size(); from += 200) {
            List<String> chunk = keys.subList(from, Math.min(keys.size(), from + 200));
            for (int attempt = 0; ; attempt++) {
                try {
                    List<KeyResult<byte[]>> got = client.batchGet(chunk);
                    boolean retry = got.stream().anyMatch(r -> !r.isOk() && r.code() != ErrorCode.OBJECT_NOT_FOUND);
                    if (retry && attempt < 50) {
                        Thread.sleep(100); // a node has not attached yet
                        continue;
                    }
                    for (KeyResult<byte[]> r : got) {
                        if (r.isOk() && Arrays.equals(r.value(), valueOf(r.key(), size))) {
                            ok++;
                        }
                    }
                    break;
                } catch (TiffinException e) {
                    if (attempt >= 50) {
                        throw e;
                    }
                    Thread.sleep(100); // the client looks for the leader again
                }
            }
        }
        return ok;
    }

    /** The object kill {@code k}'s first get reads: put before the first kill, never read before. */
    private static String coldKey(int k) {
        return "failover-cold-" + k;
    }

    /** The bytes of {@code key}: derived from it, so a read back can be checked without keeping them. */
    static byte[] valueOf(String key, int size) {
        byte[] v = new byte[size];
        new SplittableRandom(key.hashCode()).nextBytes(v);
        return v;
    }
}
