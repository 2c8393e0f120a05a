package io.tiffin.core.transport;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.security.spec.MGF1ParameterSpec;
import java.security.spec.PSSParameterSpec;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLException;

/**
 * One reading of the PEM files of {@link TlsSettings}: the certificate chain, its key and the authorities, the
 * Netty contexts made of them (server and client), the JDK key and trust managers for an HTTPS server, and the
 * files' {@link #stamps} as they were when read. {@link TlsContexts} holds the current one and replaces it when the
 * files change.
 *
 * <p>Thread-safe (immutable; the JDK managers are made on first use, at worst twice).
 */
final class TlsMaterial {
    private static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

    /** Null without a certificate: the process can be a TLS client only. */
    final SslContext server;
    final SslContext client;
    final X509Certificate[] chain;
    final PrivateKey key;
    final X509Certificate[] authorities;
    /** The files' identity and modification times, taken before they were read. */
    final List<String> stamps;

    private TlsMaterial(SslContext server, SslContext client, X509Certificate[] chain, PrivateKey key,
                        X509Certificate[] authorities, List<String> stamps) {
        this.server = server;
        this.client = client;
        this.chain = chain;
        this.key = key;
        this.authorities = authorities;
        this.stamps = stamps;
    }

    /**
     * Reads the files of {@code settings} and makes the contexts.
     *
     * @throws TiffinException {@code INVALID_PARAMS} naming the key whose file is missing or unreadable, or saying
     *     that the key does not belong to the certificate
     */
    static TlsMaterial load(TlsSettings settings, SslProvider provider) {
        List<String> stamps = stampsOf(settings);
        X509Certificate[] chain = settings.cert() == null ? null
                : PemFiles.certificates(settings.cert(), "transport.tls.cert");
        PrivateKey key = settings.key() == null ? null : PemFiles.privateKey(settings.key(), "transport.tls.key");
        X509Certificate[] authorities = settings.ca() == null ? null
                : PemFiles.certificates(settings.ca(), "transport.tls.ca");
        if (chain != null && !belongsTo(key, chain[0])) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "transport.tls.key = " + settings.key() + " is not the"
                    + " key of the certificate in transport.tls.cert = " + settings.cert() + " ("
                    + chain[0].getSubjectX500Principal() + "): expected the private key that certificate was issued"
                    + " for");
        }
        try {
            SslContext server = chain == null ? null : serverContext(settings, provider, chain, key, authorities);
            SslContext client = clientContext(settings, provider, chain, key, authorities);
            return new TlsMaterial(server, client, chain, key, authorities, stamps);
        } catch (SSLException | IllegalArgumentException e) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "cannot set up TLS from transport.tls.cert = "
                    + settings.cert() + ", transport.tls.key = " + settings.key() + ", transport.tls.ca = "
                    + settings.ca() + ": " + e.getMessage() + " (does the key belong to the certificate?)", e);
        }
    }

    /** The {@link FileReloads#stampOf stamps} of the files of {@code settings}. */
    static List<String> stampsOf(TlsSettings settings) {
        List<String> out = new ArrayList<>(3);
        for (Path p : new Path[] {settings.cert(), settings.key(), settings.ca()}) {
            if (p != null) {
                out.add(FileReloads.stampOf(p));
            }
        }
        return List.copyOf(out);
    }

    /** Whether {@code key} signs what {@code cert}'s public key verifies. */
    private static boolean belongsTo(PrivateKey key, X509Certificate cert) {
        byte[] probe = new byte[32];
        new SecureRandom().nextBytes(probe);
        try {
            Signature sign = signature(key.getAlgorithm());
            sign.initSign(key);
            sign.update(probe);
            byte[] signed = sign.sign();
            Signature verify = signature(key.getAlgorithm());
            verify.initVerify(cert.getPublicKey());
            verify.update(probe);
            return verify.verify(signed);
        } catch (GeneralSecurityException e) {
            return false; // a key of another algorithm than the certificate's
        }
    }

    private static Signature signature(String keyAlgorithm) throws GeneralSecurityException {
        return switch (keyAlgorithm) {
            case "RSA" -> Signature.getInstance("SHA256withRSA");
            case "EC" -> Signature.getInstance("SHA256withECDSA");
            case "RSASSA-PSS" -> {
                Signature s = Signature.getInstance("RSASSA-PSS");
                s.setParameter(new PSSParameterSpec("SHA-256", "MGF1", MGF1ParameterSpec.SHA256, 32, 1));
                yield s;
            }
            default -> Signature.getInstance(keyAlgorithm); // Ed25519, Ed448, EdDSA
        };
    }

    private static SslContext serverContext(TlsSettings settings, SslProvider provider, X509Certificate[] chain,
                                            PrivateKey key, X509Certificate[] authorities) throws SSLException {
        SslContextBuilder b = SslContextBuilder.forServer(key, chain).sslProvider(provider).protocols(PROTOCOLS)
                .clientAuth(switch (settings.clientAuth()) {
                    case NONE -> ClientAuth.NONE;
                    case OPTIONAL -> ClientAuth.OPTIONAL;
                    case REQUIRE -> ClientAuth.REQUIRE;
                });
        if (authorities != null) {
            b.trustManager(authorities);
        }
        return b.build();
    }

    private static SslContext clientContext(TlsSettings settings, SslProvider provider, X509Certificate[] chain,
                                            PrivateKey key, X509Certificate[] authorities) throws SSLException {
        SslContextBuilder b = SslContextBuilder.forClient().sslProvider(provider).protocols(PROTOCOLS)
                .endpointIdentificationAlgorithm(settings.verifyHostname() ? "HTTPS" : null);
        if (authorities != null) {
            b.trustManager(authorities);
        }
        if (chain != null) {
            b.keyManager(key, chain);
        }
        return b.build();
    }

    /** The protocols every context allows. */
    static String[] protocols() {
        return PROTOCOLS.clone();
    }
}
