package io.tiffin.core.transport;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

/**
 * A bare TLS client (the JDK's {@link SSLSocket}) for tests: it completes a handshake with a server and says which
 * certificate the server presented.
 *
 * <p>Thread-safe (stateless).
 */
public final class TlsProbe {
    private TlsProbe() {
    }

    /**
     * The subject of the certificate the server at {@code host:port} presents to a new connection, trusting the
     * authorities in {@code ca}.
     *
     * @throws IOException if the handshake fails (the server's certificate is not trusted, or the server is down)
     */
    public static String presentedSubject(String host, int port, Path ca) throws IOException {
        try (SSLSocket s = (SSLSocket) context(ca).getSocketFactory().createSocket(host, port)) {
            s.setSoTimeout(5_000);
            s.startHandshake();
            return ((X509Certificate) s.getSession().getPeerCertificates()[0]).getSubjectX500Principal().getName();
        }
    }

    private static SSLContext context(Path ca) throws IOException {
        try (InputStream in = Files.newInputStream(ca)) {
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            int i = 0;
            for (var c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                trust.setCertificateEntry("ca-" + i++, c);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, tmf.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot trust " + ca + ": " + e, e);
        }
    }
}
