package io.tiffin.bench;

import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.netty.channel.EventLoopGroup;
import io.tiffin.core.transport.BlockingConnectionPool;
import io.tiffin.core.transport.EventLoops;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportClient;
import io.tiffin.core.transport.TransportSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The {@code tiffin bench master} clients' connections to the master: {@code --num-clients} clients, each one
 * {@link BlockingConnectionPool} as a {@code TiffinClient}'s master stub uses (a calling thread writes its request
 * and reads the answer on a connection it holds for the call: no event-loop hand-off), or, with {@code
 * --client-transport event-loop}, each one multiplexed Netty {@link TransportClient} whose event loop carries every
 * call of its threads (caller, client event loop, master, client event loop, caller).
 *
 * <p>Thread-safe: {@link #call} may run on many threads at once. Owns its pools, clients and event loops, released
 * by {@link #close} (once).
 */
final class MasterBenchClients implements AutoCloseable {

    /** How the bench's callers reach the master. */
    enum Transport {
        /** Each caller drives a pooled blocking connection itself, as the client library's master stub does. */
        BLOCKING("blocking"),
        /** Each client is one Netty connection shared by its threads; calls complete on its event loop. */
        EVENT_LOOP("event-loop");

        final String flag;

        Transport(String flag) {
            this.flag = flag;
        }

        /** The transport {@code --client-transport} names, or null for an unknown name. */
        static Transport of(String flag) {
            for (Transport t : values()) {
                if (t.flag.equals(flag)) {
                    return t;
                }
            }
            return null;
        }
    }

    private final String address;
    private final List<BlockingConnectionPool> pools = new ArrayList<>();
    private final List<TransportClient> clients = new ArrayList<>();
    private final EventLoopGroup group;

    /**
     * Connects {@code count} clients to {@code host:port} (an event-loop client connects at once; a pool opens
     * connections as its callers need them), each on {@code ioThreads} event-loop threads for {@link
     * Transport#EVENT_LOOP}.
     */
    MasterBenchClients(Transport transport, String address, int count, int ioThreads) {
        this.address = address;
        TransportSettings settings = TransportSettings.defaults();
        if (transport == Transport.BLOCKING) {
            group = null;
            for (int c = 0; c < count; c++) {
                pools.add(new BlockingConnectionPool("bench-master-" + c, settings, "bench-client-" + c));
            }
            return;
        }
        group = EventLoops.newGroup("bench-master", ioThreads, true);
        String[] hp = BenchSupport.hostPort(address);
        try {
            for (int c = 0; c < count; c++) {
                clients.add(TransportClient.connect(hp[0], Integer.parseInt(hp[1]), settings, "bench-client-" + c,
                        group));
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** One synchronous call of client {@code client} (0-based) on the calling thread; throws the master's refusal. */
    <T extends MessageLite> T call(int client, Opcode opcode, MessageLite request, Parser<T> parser) {
        if (group == null) {
            return pools.get(client).call(address, opcode, request, parser);
        }
        return clients.get(client).callSync(opcode, request, parser);
    }

    @Override
    public void close() {
        pools.forEach(BlockingConnectionPool::close);
        clients.forEach(TransportClient::close);
        if (group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
    }
}
