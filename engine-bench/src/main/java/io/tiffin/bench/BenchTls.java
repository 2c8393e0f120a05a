package io.tiffin.bench;

import io.tiffin.core.transport.TlsSettings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.util.Base64;
import java.util.List;
import java.util.Locale;

/**
 * The throw-away certificate of {@code tiffin bench kv --tls}: a self-signed server certificate for
 * 127.0.0.1 and localhost (EC P-256, valid for a day) made for this run with the JDK's {@code keytool}, its
 * key taken from keytool's PKCS#12 file with the {@link KeyStore} API, both written as PEM files to a
 * temporary directory that {@link #close} deletes. The TLS cluster's master and nodes present the
 * certificate; the bench's client trusts it as its CA.
 *
 * <p>Not thread-safe: the bench's main thread makes and closes it. Owns the directory.
 */
final class BenchTls implements AutoCloseable {
    private static final String PASSWORD = "tiffin-bench";

    private final Path dir;
    private final Path cert;
    private final Path key;
    private final TlsSettings.Provider provider;

    private BenchTls(Path dir, Path cert, Path key, TlsSettings.Provider provider) {
        this.dir = dir;
        this.cert = cert;
        this.key = key;
        this.provider = provider;
    }

    /** Makes the certificate and its key; every side of the run uses {@code provider}'s TLS engine. */
    static BenchTls create(TlsSettings.Provider provider) throws Exception {
        Path dir = Files.createTempDirectory("tiffin-bench-tls-");
        Path store = dir.resolve("server.p12");
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        Process p = new ProcessBuilder(keytool, "-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname",
                "secp256r1", "-dname", "CN=tiffin bench server", "-ext", "san=ip:127.0.0.1,dns:localhost",
                "-validity", "1", "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", PASSWORD)
                .redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IllegalStateException("keytool could not make the bench's certificate: " + output);
        }
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (var in = Files.newInputStream(store)) {
            ks.load(in, PASSWORD.toCharArray());
        }
        Base64.Encoder pem = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII));
        String certPem = "-----BEGIN CERTIFICATE-----\n" + pem.encodeToString(ks.getCertificate("server").getEncoded())
                + "\n-----END CERTIFICATE-----\n";
        String keyPem = "-----BEGIN PRIVATE KEY-----\n" + pem.encodeToString(((PrivateKey) ks.getKey("server",
                PASSWORD.toCharArray())).getEncoded()) + "\n-----END PRIVATE KEY-----\n";
        Files.delete(store);
        return new BenchTls(dir, write(dir, "server.pem", certPem), write(dir, "server-key.pem", keyPem),
                provider);
    }

    private static Path write(Path dir, String name, String pem) throws IOException {
        return Files.writeString(dir.resolve(name), pem, StandardCharsets.US_ASCII);
    }

    /** What the servers (and their own clients) use: the certificate, trusting itself. */
    TlsSettings serverSettings() {
        return TlsSettings.of(cert, key, cert).withProvider(provider);
    }

    /** What the bench's client uses: trust in the certificate, none of its own. */
    TlsSettings clientSettings() {
        return TlsSettings.of(null, null, cert).withProvider(provider);
    }

    /** The configuration keys of {@link #serverSettings()}, as {@code key=value} overrides. */
    List<String> serverConfig() {
        return List.of("transport.tls.enabled=true", "transport.tls.cert=" + cert, "transport.tls.key=" + key,
                "transport.tls.ca=" + cert, "transport.tls.provider=" + provider.name().toLowerCase(Locale.ROOT));
    }

    @Override
    public void close() {
        BenchSupport.deleteTree(dir);
    }
}
