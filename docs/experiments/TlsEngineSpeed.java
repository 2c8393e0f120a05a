import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import java.io.File;
import java.nio.ByteBuffer;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;

/**
 * Experiment behind docs/BENCHMARKS.md "TLS at 6fa0b30": how fast do the TLS engines themselves encrypt and decrypt
 * 1 MiB, with no socket? A server and a client engine (TLS 1.3, AES-128-GCM) shake hands in memory, then the server
 * wraps one 1 MiB buffer into records and the client unwraps them, 500 times a round, six rounds. Also the JDK's
 * AES-GCM cipher alone on 16 KiB records. Not part of the build; run it with the JDK's source launcher and the
 * distribution's jars, from a directory holding a certificate and its PKCS#8 key:
 *
 * <pre>
 *   openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout key.pem -out cert.pem \
 *     -days 2 -subj /CN=localhost
 *   openssl pkcs8 -topk8 -nocrypt -in key.pem -out key8.pem
 *   java -cp "$TIFFIN_HOME/lib/*" docs/experiments/TlsEngineSpeed.java openssl|jdk|jce
 * </pre>
 *
 * <p>Thread-safety: a program, not a library; one thread.
 */
public final class TlsEngineSpeed {
    private static final int MIB = 1 << 20;

    public static void main(String[] args) throws Exception {
        if (args.length != 1 || !(args[0].equals("openssl") || args[0].equals("jdk") || args[0].equals("jce"))) {
            System.err.println("usage: java TlsEngineSpeed.java openssl|jdk|jce");
            System.exit(2);
        }
        if (args[0].equals("jce")) {
            cipherAlone();
            return;
        }
        SslProvider provider = args[0].equals("jdk") ? SslProvider.JDK : SslProvider.OPENSSL;
        SslContext serverContext = SslContextBuilder.forServer(new File("cert.pem"), new File("key8.pem"))
                .sslProvider(provider).protocols("TLSv1.3").build();
        SslContext clientContext = SslContextBuilder.forClient().sslProvider(provider).protocols("TLSv1.3")
                .trustManager(InsecureTrustManagerFactory.INSTANCE).build();
        SSLEngine server = serverContext.newEngine(ByteBufAllocator.DEFAULT);
        SSLEngine client = clientContext.newEngine(ByteBufAllocator.DEFAULT, "localhost", 1);
        ByteBuffer toServer = ByteBuffer.allocateDirect(MIB);
        ByteBuffer toClient = ByteBuffer.allocateDirect(MIB);
        ByteBuffer scratch = ByteBuffer.allocateDirect(2 * MIB);
        client.beginHandshake();
        server.beginHandshake();
        for (int i = 0; i < 50 && (client.getHandshakeStatus() != HandshakeStatus.NOT_HANDSHAKING
                || server.getHandshakeStatus() != HandshakeStatus.NOT_HANDSHAKING); i++) {
            step(client, toClient, toServer, scratch);
            step(server, toServer, toClient, scratch);
        }
        // what the server sent after its handshake (TLS 1.3 session tickets): the client reads it, so the records
        // below follow it in sequence
        toClient.flip();
        while (toClient.hasRemaining()) {
            scratch.clear();
            if (client.unwrap(toClient, scratch).bytesConsumed() == 0) {
                break;
            }
        }
        System.out.println("cipher suite: " + server.getSession().getCipherSuite());
        ByteBuffer plain = ByteBuffer.allocateDirect(MIB);
        ByteBuffer wire = ByteBuffer.allocateDirect(2 * MIB);
        ByteBuffer out = ByteBuffer.allocateDirect(2 * MIB);
        for (int round = 0; round < 6; round++) {
            long wrapNanos = 0;
            long unwrapNanos = 0;
            int n = 500;
            for (int i = 0; i < n; i++) {
                plain.clear();
                wire.clear();
                long t0 = System.nanoTime();
                while (plain.hasRemaining()) {
                    server.wrap(plain, wire);
                }
                long t1 = System.nanoTime();
                wire.flip();
                out.clear();
                while (wire.hasRemaining()) {
                    SSLEngineResult r = client.unwrap(wire, out);
                    if (r.bytesConsumed() == 0) {
                        throw new IllegalStateException("unwrap consumed nothing: " + r);
                    }
                }
                long t2 = System.nanoTime();
                wrapNanos += t1 - t0;
                unwrapNanos += t2 - t1;
            }
            System.out.printf("%s wrap %.1f us/MiB (%.2f GB/s), unwrap %.1f us/MiB (%.2f GB/s)%n", args[0],
                    wrapNanos / 1e3 / n, (double) n * MIB / wrapNanos, unwrapNanos / 1e3 / n,
                    (double) n * MIB / unwrapNanos);
        }
    }

    /** Runs {@code e}'s handshake as far as it goes without the peer: reads {@code in}, writes {@code out}. */
    private static void step(SSLEngine e, ByteBuffer in, ByteBuffer out, ByteBuffer scratch) throws Exception {
        while (true) {
            HandshakeStatus hs = e.getHandshakeStatus();
            if (hs == HandshakeStatus.NEED_TASK) {
                for (Runnable r; (r = e.getDelegatedTask()) != null; ) {
                    r.run();
                }
            } else if (hs == HandshakeStatus.NEED_WRAP) {
                e.wrap(ByteBuffer.allocate(0), out);
            } else if (hs == HandshakeStatus.NEED_UNWRAP) {
                in.flip();
                SSLEngineResult r = e.unwrap(in, scratch);
                in.compact();
                scratch.clear();
                if (r.getStatus() == SSLEngineResult.Status.BUFFER_UNDERFLOW
                        || (r.bytesConsumed() == 0 && r.getHandshakeStatus() == HandshakeStatus.NEED_UNWRAP)) {
                    return; // waits for the peer
                }
            } else {
                return;
            }
        }
    }

    /** The JDK's AES-GCM on 16 KiB records (a TLS record's largest plaintext), six rounds of 6,400. */
    private static void cipherAlone() throws Exception {
        Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
        SecretKeySpec key = new SecretKeySpec(new byte[16], "AES");
        byte[] record = new byte[16384];
        byte[] sealed = new byte[16384 + 16];
        for (int round = 0; round < 6; round++) {
            int n = 6400;
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                byte[] iv = new byte[12];
                iv[0] = (byte) i;
                iv[1] = (byte) (i >> 8);
                iv[2] = (byte) round; // a fresh nonce per record, as GCM requires
                cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(128, iv));
                cipher.doFinal(record, 0, record.length, sealed, 0);
            }
            System.out.printf("jce encrypt %.2f GB/s%n", (double) n * record.length / (System.nanoTime() - t0));
        }
    }
}
