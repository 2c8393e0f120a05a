package io.tiffin.core.transport;

import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * Certificates for TLS tests, made in memory (Netty's pkitesting, pure Java) and written as PEM files to a
 * directory: a CA, a server certificate it issued for 127.0.0.1 and localhost (for server and client use,
 * as a node's: it serves and calls its master), a client certificate it
 * issued, a second CA with a server certificate of its own (a server the first CA does not vouch for), and
 * a server certificate of the first CA for another host name only; {@link #issue} makes more of the first CA.
 *
 * <p>Not thread-safe: built once per test class. Owns the files it writes under the given directory.
 */
public final class TestCertificates {
    /** PEM files of one party: its chain, its key, and the CA to trust. */
    public record Party(Path cert, Path key, Path ca) {
        /** TLS settings presenting this party's certificate and trusting its CA. */
        public TlsSettings settings() {
            return TlsSettings.of(cert, key, ca);
        }

        /** TLS settings trusting this party's CA without presenting a certificate (a plain TLS client). */
        public TlsSettings trustOnly() {
            return TlsSettings.of(null, null, ca);
        }
    }

    public final Party server;
    public final Party client;
    /** A server whose certificate another CA issued. */
    public final Party strangerServer;
    /** A server of the right CA whose certificate names only {@code elsewhere.invalid}. */
    public final Party misnamedServer;

    private final X509Bundle ca;
    private final CertificateBuilder base;
    private final Path dir;

    private TestCertificates(Party server, Party client, Party strangerServer, Party misnamedServer, X509Bundle ca,
                             CertificateBuilder base, Path dir) {
        this.ca = ca;
        this.base = base;
        this.dir = dir;
        this.server = server;
        this.client = client;
        this.strangerServer = strangerServer;
        this.misnamedServer = misnamedServer;
    }

    /** Makes every certificate and writes the PEM files into {@code dir}. */
    public static TestCertificates create(Path dir) {
        try {
            Instant now = Instant.now();
            CertificateBuilder base = new CertificateBuilder().notBefore(now.minus(1, ChronoUnit.DAYS))
                    .notAfter(now.plus(1, ChronoUnit.DAYS)).ecp256();
            X509Bundle ca = base.copy().subject("CN=tiffin test CA").setIsCertificateAuthority(true).buildSelfSigned();
            X509Bundle stranger = base.copy().subject("CN=another CA").setIsCertificateAuthority(true)
                    .buildSelfSigned();
            // servers are clients too (a node calls its master): both uses, as mutual TLS needs
            X509Bundle server = base.copy().subject("CN=tiffin server").addSanIpAddress("127.0.0.1")
                    .addSanDnsName("localhost").addExtendedKeyUsageServerAuth().addExtendedKeyUsageClientAuth()
                    .buildIssuedBy(ca);
            X509Bundle client = base.copy().subject("CN=tiffin client").addExtendedKeyUsageClientAuth()
                    .buildIssuedBy(ca);
            X509Bundle strangerServer = base.copy().subject("CN=stranger").addSanIpAddress("127.0.0.1")
                    .addSanDnsName("localhost").addExtendedKeyUsageServerAuth().buildIssuedBy(stranger);
            X509Bundle misnamed = base.copy().subject("CN=elsewhere").addSanDnsName("elsewhere.invalid")
                    .addExtendedKeyUsageServerAuth().buildIssuedBy(ca);
            Path caPem = write(dir, "ca.pem", ca.getCertificatePEM());
            Path strangerCa = write(dir, "stranger-ca.pem", stranger.getCertificatePEM());
            return new TestCertificates(party(dir, "server", server, caPem), party(dir, "client", client, caPem),
                    party(dir, "stranger", strangerServer, strangerCa), party(dir, "misnamed", misnamed, caPem), ca,
                    base, dir);
        } catch (Exception e) {
            throw new IllegalStateException("cannot make the test certificates", e);
        }
    }

    /**
     * A certificate of the CA with common name {@code commonName}, for clients and servers of 127.0.0.1 and
     * localhost (a node with it both serves and calls its master).
     */
    public Party issue(String commonName) {
        try {
            X509Bundle b = base.copy().subject("CN=" + commonName).addSanIpAddress("127.0.0.1").addSanDnsName("localhost")
                    .addExtendedKeyUsageServerAuth().addExtendedKeyUsageClientAuth().buildIssuedBy(ca);
            return party(dir, "cn-" + commonName, b, server.ca());
        } catch (Exception e) {
            throw new IllegalStateException("cannot issue a test certificate for " + commonName, e);
        }
    }

    /** Replaces {@code target} with a copy of {@code source} in one rename, as certificate tools do. */
    public static void install(Path source, Path target) {
        try {
            Path tmp = Files.createTempFile(target.toAbsolutePath().getParent(), "new-", ".pem");
            Files.copy(source, tmp, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            Files.move(tmp, target, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Party party(Path dir, String name, X509Bundle b, Path ca) {
        return new Party(write(dir, name + ".pem", b.getCertificatePathPEM()),
                write(dir, name + "-key.pem", b.getPrivateKeyPEM()), ca);
    }

    private static Path write(Path dir, String name, String text) {
        try {
            return Files.writeString(dir.resolve(name), text, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
