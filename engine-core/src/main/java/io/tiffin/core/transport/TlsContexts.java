package io.tiffin.core.transport;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.ReferenceCountUtil;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;

/**
 * The TLS contexts of one {@link TlsSettings}, loaded once from its PEM files: for servers (Netty's
 * {@link SslHandler}, and a JDK {@link SSLContext} for the admin HTTPS server) and for clients (a handler
 * for Netty connections, a bare {@link SSLEngine} for {@link BlockingConnection}s). TLS 1.3 and 1.2 only.
 *
 * <p>The engine is OpenSSL (BoringSSL from netty-tcnative) when {@link TlsSettings.Provider#AUTO} finds it
 * loadable, else the JDK's (the two compared by {@code tiffin bench kv --tls --tls-provider ...}: docs/BENCHMARKS.md).
 *
 * <p>Owners: a {@link TransportServer}, a client pool or the admin server each load their own instance at
 * construction and keep it for their lifetime (no reload: rotate certificates by restarting). Contexts
 * hold no per-connection state; the engines they make belong to the connection (an {@link SslHandler}
 * releases its own; {@link #release} frees a blocking connection's).
 *
 * <p>Thread-safe (immutable after loading).
 */
public final class TlsContexts {
    private static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

    private final TlsSettings settings;
    private final SslProvider provider;
    /** Null without a certificate: this process can be a TLS client only. */
    private final SslContext server;
    private final SslContext client;
    private final X509Certificate[] chain;
    private final PrivateKey key;
    private final X509Certificate[] authorities;

    private TlsContexts(TlsSettings settings) {
        this.settings = settings;
        this.provider = provider(settings.provider());
        this.chain = settings.cert() == null ? null : PemFiles.certificates(settings.cert(), "transport.tls.cert");
        this.key = settings.key() == null ? null : PemFiles.privateKey(settings.key(), "transport.tls.key");
        this.authorities = settings.ca() == null ? null : PemFiles.certificates(settings.ca(), "transport.tls.ca");
        try {
            server = chain == null ? null : serverContext();
            client = clientContext();
        } catch (SSLException | IllegalArgumentException e) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "cannot set up TLS from transport.tls.cert = "
                    + settings.cert() + ", transport.tls.key = " + settings.key() + ", transport.tls.ca = "
                    + settings.ca() + ": " + e.getMessage() + " (does the key belong to the certificate?)", e);
        }
    }

    /**
     * The contexts of {@code settings}, or null when TLS is off.
     *
     * @throws TiffinException {@code INVALID_PARAMS} naming the key whose file is missing or unreadable, or
     *     {@code transport.tls.provider} when OpenSSL was asked for and does not load
     */
    public static TlsContexts load(TlsSettings settings) {
        return settings == null || !settings.enabled() ? null : new TlsContexts(settings);
    }

    private static SslProvider provider(TlsSettings.Provider wanted) {
        return switch (wanted) {
            case JDK -> SslProvider.JDK;
            case AUTO -> OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
            case OPENSSL -> {
                if (!OpenSsl.isAvailable()) {
                    throw new TiffinException(ErrorCode.INVALID_PARAMS, "transport.tls.provider = openssl, but OpenSSL"
                            + " does not load on this platform (" + OpenSsl.unavailabilityCause() + ") (expected: auto"
                            + " or jdk here; netty-tcnative-boringssl-static ships linux-x86_64 only)");
                }
                yield SslProvider.OPENSSL;
            }
        };
    }

    private SslContext serverContext() throws SSLException {
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

    private SslContext clientContext() throws SSLException {
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

    /** The settings these contexts were loaded from. */
    public TlsSettings settings() {
        return settings;
    }

    /** Whether the engines are OpenSSL's (else the JDK's). */
    public boolean usesOpenSsl() {
        return provider != SslProvider.JDK;
    }

    /** Whether this process can serve TLS (it has a certificate and key). */
    public boolean canServe() {
        return server != null;
    }

    /**
     * A server-side handler for a new connection, failing the TLS handshake after {@code timeout}.
     *
     * @throws TiffinException {@code INVALID_PARAMS} if no certificate is configured
     */
    public SslHandler newServerHandler(ByteBufAllocator alloc, Duration timeout) {
        if (server == null) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "transport.tls.enabled = true needs"
                    + " transport.tls.cert and transport.tls.key on servers (expected: the PEM certificate chain and"
                    + " private key this server presents)");
        }
        SslHandler h = server.newHandler(alloc);
        h.setHandshakeTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
        return h;
    }

    /** A client-side handler for a connection to {@code host:port} (the name its certificate must carry). */
    public SslHandler newClientHandler(ByteBufAllocator alloc, String host, int port, Duration timeout) {
        SslHandler h = client.newHandler(alloc, host, port);
        h.setHandshakeTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
        return h;
    }

    /**
     * A client engine for a connection to {@code host:port}, driven by its caller ({@link TlsSocketStream});
     * free it with {@link #release} once the connection is closed.
     */
    public SSLEngine newClientEngine(String host, int port) {
        return client.newEngine(ByteBufAllocator.DEFAULT, host, port);
    }

    /** Frees an engine made by {@link #newClientEngine} (OpenSSL's hold native memory). Idempotent. */
    public static void release(SSLEngine engine) {
        engine.closeOutbound();
        ReferenceCountUtil.release(engine);
    }

    /**
     * A JDK context presenting this process's certificate, for an HTTPS server (the admin endpoint), with
     * {@link #applyClientAuth} for its parameters.
     *
     * @throws TiffinException {@code INVALID_PARAMS} if no certificate is configured
     */
    public SSLContext jdkServerContext() {
        if (chain == null) {
            newServerHandler(ByteBufAllocator.DEFAULT, Duration.ofSeconds(1)); // throws the message
        }
        try {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            char[] none = new char[0];
            ks.setKeyEntry("tiffin", key, none, chain);
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, none);
            TrustManagerFactory tmf = null;
            if (authorities != null) {
                KeyStore trust = KeyStore.getInstance("PKCS12");
                trust.load(null, null);
                for (int i = 0; i < authorities.length; i++) {
                    trust.setCertificateEntry("ca-" + i, authorities[i]);
                }
                tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                tmf.init(trust);
            }
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf.getKeyManagers(), tmf == null ? null : tmf.getTrustManagers(), null);
            return ctx;
        } catch (GeneralSecurityException | java.io.IOException e) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "cannot set up the admin HTTPS server from"
                    + " transport.tls.cert and transport.tls.key: " + e, e);
        }
    }

    /** Sets {@code transport.tls.client-auth} and the protocols on an HTTPS server's parameters. */
    public void applyClientAuth(SSLParameters params) {
        params.setProtocols(PROTOCOLS);
        params.setNeedClientAuth(settings.clientAuth() == TlsSettings.ClientAuth.REQUIRE);
        if (settings.clientAuth() == TlsSettings.ClientAuth.OPTIONAL) {
            params.setWantClientAuth(true);
        }
    }

    @Override
    public String toString() {
        return "TLS[" + (usesOpenSsl() ? "openssl" : "jdk") + ", client-auth="
                + settings.clientAuth().name().toLowerCase(java.util.Locale.ROOT) + "]";
    }
}
