package io.tiffin.core.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tiffin.core.Tiffin;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.transport.TestCertificates;
import io.tiffin.core.transport.TlsContexts;
import io.tiffin.core.util.Ticker;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client that reads a large reply slowly holds the gateway's memory for longer than a waiting GET's patience
 * ({@link MemoryBudget#VALUE_WAIT_SECONDS}) without releasing any of it; as long as its reply's bytes keep
 * reaching it, another client's GET that waits for that memory is served once it is released, not failed (as
 * LMCache's 64 concurrent 32 MiB GETs were on a loaded machine) — in plaintext, inside TLS (where the reply leaves
 * as many encrypted records), and for an MGET (an array reply whose values leave one by one). The store lends nothing ({@link ForwardingStore}), so every GET reads into
 * memory counted in {@code gateway.max-memory}.
 */
class GatewaySlowReaderTest {
    private static final int VALUE = 32 << 20;

    @TempDir
    Path dir;

    /** A gateway with room for one 32 MiB reply in flight, not two. */
    private static TiffinConfig config() {
        return TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("node.segment-size", "256MiB").set("gateway.port", "0").set("gateway.max-memory", "40MiB")
                .build();
    }

    @Test
    void aGetWaitingForMemoryHeldByASlowReaderIsServedNotFailed() throws Exception {
        onGateway(null, gateway -> () -> plain(gateway.address().getPort()), 1);
    }

    @Test
    void aGetWaitingForMemoryHeldByASlowReaderIsServedNotFailedOverTls() throws Exception {
        TestCertificates certs = TestCertificates.create(dir);
        SSLContext trusting = trusting(certs.server.ca());
        onGateway(TlsContexts.load(certs.server.settings()),
                gateway -> () -> tls(trusting, gateway.address().getPort()), 1);
    }

    @Test
    void aGetWaitingForMemoryHeldByAnMgetToASlowReaderIsServedNotFailed() throws Exception {
        // four 8 MiB values in one array reply: each leaves as a buffer of its own
        onGateway(null, gateway -> () -> plain(gateway.address().getPort()), 4);
    }

    /**
     * Runs {@link #slowReaderAndWaitingGet} on a fresh Tiffin and gateway ({@code tls} null: plaintext), with
     * the connections {@code connections} makes to it, then checks the gateway gave back all it held.
     */
    private static void onGateway(TlsContexts tls, Function<GatewayServer, Supplier<Socket>> connections, int parts)
            throws Exception {
        LeakCheck.install();
        TiffinConfig config = config();
        try (Tiffin tiffin = Tiffin.embedded(config)) {
            String master = "127.0.0.1:" + tiffin.master().address().getPort();
            GatewayServer gateway = GatewayServer.start(new ForwardingStore(TiffinGatewayStore.over(tiffin.client(), 1,
                    master)), GatewaySettings.from(config), Ticker.SYSTEM, tls, Duration.ofSeconds(5));
            try {
                slowReaderAndWaitingGet(gateway, connections.apply(gateway), parts);
            } finally {
                gateway.close();
            }
            LeakCheck.assertClean(gateway);
        }
    }

    /**
     * The slow client reads a reply of {@code VALUE} bytes of values — a GET of one value, or an MGET of
     * {@code parts} values — while another GETs a value of {@code VALUE} bytes that cannot fit beside it.
     */
    private static void slowReaderAndWaitingGet(GatewayServer gateway, Supplier<Socket> connect, int parts)
            throws Exception {
        byte[][] a = new byte[parts][];
        byte[] b = GatewayFixture.randomValue(VALUE, 100);
        try (Socket s = connect.get()) {
            for (int i = 0; i < parts; i++) {
                a[i] = GatewayFixture.randomValue(VALUE / parts, i + 1);
                send(s, RespSocket.command("SET", "a" + i, a[i]));
                assertThat(line(s.getInputStream())).isEqualTo("+OK");
            }
            send(s, RespSocket.command("SET", "b", b));
            assertThat(line(s.getInputStream())).isEqualTo("+OK");
        }
        java.io.ByteArrayOutputStream expected = new java.io.ByteArrayOutputStream();
        if (parts > 1) {
            expected.writeBytes(("*" + parts + "\r\n").getBytes(StandardCharsets.US_ASCII));
        }
        for (byte[] v : a) {
            expected.writeBytes(("$" + v.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
            expected.writeBytes(v);
            expected.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        try (Socket slow = connect.get(); Socket waiting = connect.get()) {
            Object[] command = new Object[parts + 1];
            command[0] = parts > 1 ? "MGET" : "GET";
            for (int i = 0; i < parts; i++) {
                command[i + 1] = "a" + i;
            }
            send(slow, RespSocket.command(command));
            await().atMost(Duration.ofSeconds(10)).until(() -> gateway.bufferedBytes() >= VALUE);
            CompletableFuture<byte[]> got = CompletableFuture.supplyAsync(() -> {
                send(waiting, RespSocket.command("GET", "b"));
                return bulk(waiting);
            });
            // the slow reply trickles out at ~1.7 MiB/s (256 KiB every 150 ms, however many reads that takes: inside
            // TLS a read returns one 16 KiB record): the last of it leaves the gateway well after the 10 s that a
            // GET waits for memory while nothing is released and nothing written
            InputStream in = slow.getInputStream();
            byte[] reply = new byte[expected.size()];
            int n = 0;
            long start = System.nanoTime();
            while (n < reply.length) {
                int tick = Math.min(n + 256 * 1024, reply.length);
                while (n < tick) {
                    int r = in.read(reply, n, tick - n);
                    if (r < 0) {
                        throw new IOException("the gateway closed the slow reader's connection after " + n + " bytes");
                    }
                    n += r;
                }
                if (!got.isDone()) {
                    Thread.sleep(150);
                }
            }
            long took = System.nanoTime() - start;
            byte[] value = got.get(30, TimeUnit.SECONDS);
            assertThat(Arrays.equals(value, b)).as("the waiting GET's value").isTrue();
            assertThat(took).as("the slow read outlasted a GET's wait for memory")
                    .isGreaterThan(TimeUnit.SECONDS.toNanos(MemoryBudget.VALUE_WAIT_SECONDS));
            assertThat(Arrays.equals(reply, expected.toByteArray())).as("the slow reply's bytes").isTrue();
        }
    }

    private static Socket plain(int port) {
        try {
            Socket s = new Socket();
            s.setReceiveBufferSize(64 * 1024);
            s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
            s.setSoTimeout(60_000);
            return s;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Socket tls(SSLContext context, int port) {
        try {
            SSLSocket s = (SSLSocket) context.getSocketFactory().createSocket();
            s.setReceiveBufferSize(64 * 1024);
            s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
            s.setSoTimeout(60_000);
            s.startHandshake();
            return s;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A TLS client context that trusts the CA in {@code caPem}. */
    private static SSLContext trusting(Path caPem) throws Exception {
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        try (InputStream in = Files.newInputStream(caPem)) {
            store.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(store);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, tmf.getTrustManagers(), null);
        return context;
    }

    private static void send(Socket s, byte[] bytes) {
        try {
            OutputStream out = s.getOutputStream();
            out.write(bytes);
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One reply line without its CRLF. */
    private static String line(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder();
        int c;
        while ((c = in.read()) != '\n') {
            if (c < 0) {
                throw new IOException("connection closed after " + b);
            }
            b.append((char) c);
        }
        return b.substring(0, b.length() - 1);
    }

    /** A bulk reply's bytes; an error reply fails with its text. */
    private static byte[] bulk(Socket s) {
        try {
            InputStream in = s.getInputStream();
            String head = line(in);
            assertThat(head).as("the reply").startsWith("$");
            byte[] value = in.readNBytes(Integer.parseInt(head.substring(1)));
            assertThat(line(in)).isEmpty();
            return value;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
