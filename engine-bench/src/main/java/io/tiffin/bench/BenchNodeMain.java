package io.tiffin.bench;

import io.tiffin.core.config.Sizes;
import io.tiffin.core.node.NodeServer;
import io.tiffin.core.transport.TlsSettings;
import io.tiffin.core.transport.TransportSettings;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A storage node in its own process for {@code tiffin bench kv}: {@code BenchNodeMain <master host:port>
 * <node id> <segment size> [event-loop threads] [shared-memory directory] [TLS cert key CA]} (with the three
 * PEM files the node serves, and reaches its master, over TLS). Prints {@code READY <endpoint>} once its segment is mounted, then serves
 * until its standard input closes (the bench closes it, or dies), and shuts down cleanly.
 *
 * <p>Not thread-safe; the process's single main thread runs it.
 */
public final class BenchNodeMain {
    private BenchNodeMain() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 3 || (args.length > 5 && args.length != 9)) {
            System.err.println("usage: BenchNodeMain <master host:port> <node id> <segment size, e.g. 2GiB>"
                    + " [event-loop threads, 0 = default] [shared-memory directory, empty = none]"
                    + " [TLS certificate, key and CA PEM files, TLS provider (auto, openssl or jdk)]");
            System.exit(2);
        }
        int ioThreads = args.length >= 4 ? Integer.parseInt(args[3]) : 0;
        java.nio.file.Path sharedDir = args.length >= 5 && !args[4].isEmpty() ? java.nio.file.Path.of(args[4]) : null;
        TlsSettings tls = args.length == 9 ? TlsSettings.of(Path.of(args[5]), Path.of(args[6]), Path.of(args[7]))
                .withProvider(TlsSettings.Provider.parse(args[8])) : TlsSettings.OFF;
        NodeServer node = NodeServer.start(NodeServer.Options.builder(args[0])
                .nodeId(args[1]).segmentSize(Sizes.parse(args[2])).pingInterval(Duration.ofSeconds(1))
                .transport(TransportSettings.defaults().withIoThreads(ioThreads).withTls(tls)).build()
                .withSharedMemoryDir(sharedDir));
        System.out.println("READY " + node.endpoint());
        System.out.flush();
        while (System.in.read() >= 0) {
            // serve until the parent closes our stdin
        }
        node.close();
        System.exit(0);
    }
}
