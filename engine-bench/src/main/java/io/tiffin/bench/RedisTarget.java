package io.tiffin.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

/**
 * Target {@code redis}: the same workload against a Redis server (SET, GET, MGET and, when batch puts
 * are measured, MSET), one connection per client thread. Each case's keys are removed afterwards, so a
 * run leaves the server as it found it.
 *
 * <p>Not thread-safe (see {@link KvTarget}).
 */
final class RedisTarget implements KvTarget {
    private final String[] hostPort;
    private final KvLoad load;
    private final KvWorkload workload;

    /**
     * @param address host:port of the server, already {@link #check}ed
     * @param load runs the cases
     * @param workload the operations and key counts
     */
    RedisTarget(String address, KvLoad load, KvWorkload workload) {
        this.hostPort = BenchSupport.hostPort(address);
        this.load = load;
        this.workload = workload;
    }

    /**
     * Fails before any case runs (they take minutes) when {@code address} names no Redis server: not
     * host:port, or nothing there answers PING.
     *
     * @throws IllegalArgumentException saying which, as a message about the {@code --redis} option
     */
    static void check(String address) {
        String[] hp;
        try {
            hp = BenchSupport.hostPort(address);
            Integer.parseInt(hp[1]);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--redis " + address + ": expected host:port of a Redis server,"
                    + " e.g. 127.0.0.1:6379", e);
        }
        try (Jedis j = connection(hp)) {
            j.ping();
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("--redis " + address + ": no Redis server answers there ("
                    + e.getMessage() + "); start one (redis-server --port " + hp[1]
                    + " --save \"\" --appendonly no) or leave --redis out", e);
        }
    }

    /**
     * A Redis connection in the server's default protocol (RESP2 for Redis): no HELLO is sent, so Jedis logs
     * no negotiation warning per connection and servers without HELLO answer too.
     */
    private static Jedis connection(String[] hp) {
        return new Jedis(new HostAndPort(hp[0], Integer.parseInt(hp[1])),
                DefaultJedisClientConfig.builder().serverDefaultProtocol().timeoutMillis(30_000).build());
    }

    private Jedis connect(List<Jedis> open) {
        Jedis j = connection(hostPort);
        synchronized (open) {
            open.add(j);
        }
        return j;
    }

    @Override
    public void measure(long size, MemorySegment valueSegment, Arena arena) throws Exception {
        byte[] value = valueSegment.toArray(ValueLayout.JAVA_BYTE);
        int keys = KvWorkload.keyCount(size);
        byte[][] names = new byte[keys][];
        String prefix = "tiffin-bench-" + Long.toHexString(System.nanoTime()) + "-" + size + "-";
        try (Jedis j = connection(hostPort)) {
            for (int k = 0; k < keys; k++) {
                names[k] = (prefix + k).getBytes(StandardCharsets.UTF_8);
                j.set(names[k], value);
            }
            if (!Arrays.equals(j.get(names[0]), value)) {
                throw new IllegalStateException("Redis returned other bytes than were set");
            }
        }
        List<Jedis> open = new ArrayList<>();
        int batch = workload.batchOf(size, keys);
        try {
            load.measure("redis", "put", size, 1, t -> {
                Jedis j = connect(open);
                return i -> j.set(KvWorkload.putKey(prefix, t, i & 3).getBytes(StandardCharsets.UTF_8), value);
            });
            load.measure("redis", "get", size, 1, t -> {
                Jedis j = connect(open);
                SplittableRandom r = new SplittableRandom(t);
                return i -> {
                    if (j.get(names[r.nextInt(keys)]) == null) {
                        throw new IllegalStateException("Redis lost a key");
                    }
                };
            });
            load.measure("redis", "batch_get", size, batch, t -> {
                Jedis j = connect(open);
                SplittableRandom r = new SplittableRandom(t);
                byte[][] chosen = new byte[batch][];
                return i -> {
                    int first = r.nextInt(keys);
                    for (int b = 0; b < batch; b++) {
                        chosen[b] = names[(first + b) % keys];
                    }
                    j.mget(chosen);
                };
            });
            if (workload.measures("batch_put")) {
                load.measure("redis", "batch_put", size, batch, t -> {
                    Jedis j = connect(open);
                    byte[][] keysAndValues = new byte[2 * batch][];
                    for (int b = 0; b < batch; b++) {
                        keysAndValues[2 * b] = KvWorkload.batchPutKey(prefix, t, b).getBytes(StandardCharsets.UTF_8);
                        keysAndValues[2 * b + 1] = value;
                    }
                    return i -> j.mset(keysAndValues);
                });
            }
        } finally {
            open.forEach(Jedis::close);
            try (Jedis j = connection(hostPort)) {
                j.del(names);
                for (int t = 0; t < load.clients(); t++) {
                    for (int k = 0; k < 4; k++) {
                        j.del(KvWorkload.putKey(prefix, t, k).getBytes(StandardCharsets.UTF_8));
                    }
                    for (int b = 0; b < batch; b++) {
                        j.del(KvWorkload.batchPutKey(prefix, t, b).getBytes(StandardCharsets.UTF_8));
                    }
                }
            }
        }
    }
}
