package io.tiffin.core.transport;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.ReferenceCountUtil;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLEngine;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The TLS contexts of one {@link TlsSettings}, loaded from its PEM files: for servers (Netty's
 * {@link SslHandler}) and for clients (a handler
 * for Netty connections, a bare {@link SSLEngine} for {@link BlockingConnection}s). TLS 1.3 and 1.2 only.
 *
 * <p>The engine is OpenSSL (BoringSSL from netty-tcnative) when {@link TlsSettings.Provider#AUTO} finds it
 * loadable, else the JDK's (the two compared by {@code tiffin bench kv --tls --tls-provider ...}: docs/BENCHMARKS.md).
 *
 * <p><b>Reloading.</b> Certificates are rotated without a restart: when a handler or engine is asked for at least
 * {@code transport.tls.reload-interval} after the last look, the files' stamps ({@link TlsMaterial#stampsOf}) are
 * compared on a background thread ({@link FileReloads}, never an event loop) and, if they changed, the files
 * are read again. New connections then use the new material; established ones keep the session they have. Files
 * that do not load (half written, a key of another certificate) are logged once per change and the material loaded
 * before stays in use.
 *
 * <p>Owners: a {@link TransportServer}, a client pool or the admin server each load their own instance at
 * construction and keep it for their lifetime. Contexts hold no per-connection state; the engines they make
 * belong to the connection (an {@link SslHandler} releases its own; {@link #release} frees a blocking
 * connection's); a replaced context is freed by the collector once no engine refers to it.
 *
 * <p>Thread-safe: the current material is a volatile reference to an immutable {@link TlsMaterial}, replaced by the
 * reload thread alone.
 */
public final class TlsContexts {
    private static final Logger LOG = LogManager.getLogger(TlsContexts.class);
    private final TlsSettings settings;
    private final SslProvider provider;
    private final FileReloads reloadChecks;
    private final AtomicInteger reloads = new AtomicInteger();
    private final AtomicInteger failedReloads = new AtomicInteger();
    private volatile TlsMaterial material;
    /** The stamps of files that last failed to load (logged once), or null. Reload thread only. */
    private List<String> refused;

    private TlsContexts(TlsSettings settings) {
        this.settings = settings;
        this.provider = provider(settings.provider());
        this.material = TlsMaterial.load(settings, provider);
        this.reloadChecks = new FileReloads(settings.reloadInterval(), this::reloadIfChanged);
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

    /**
     * The material in use; when the reload interval has passed since the last look, asks the reload thread to look
     * at the files (this caller does not wait: it may be an event loop).
     */
    private TlsMaterial current() {
        reloadChecks.poke();
        return material;
    }

    /** Reads the files again if their stamps changed since the material in use (or the last refused) was read. */
    private void reloadIfChanged() {
        List<String> now = TlsMaterial.stampsOf(settings);
        if (now.equals(material.stamps) || now.equals(refused)) {
            return;
        }
        try {
            TlsMaterial next = TlsMaterial.load(settings, provider);
            material = next;
            refused = null;
            reloads.incrementAndGet();
            LOG.info("Reloaded the TLS files (transport.tls.cert = {}, transport.tls.ca = {}): {}; new connections"
                    + " use them", settings.cert(), settings.ca(), next.chain == null ? "no certificate"
                    : next.chain[0].getSubjectX500Principal() + " valid until " + next.chain[0].getNotAfter());
        } catch (RuntimeException e) {
            refused = now;
            failedReloads.incrementAndGet();
            LOG.warn("The TLS files changed but do not load, so the ones loaded before stay in use until they change"
                    + " again: {}", e.getMessage());
        }
    }

    /** How many times changed files were loaded since start. */
    public int reloads() {
        return reloads.get();
    }

    /** How many times changed files failed to load since start (each change counted once). */
    public int failedReloads() {
        return failedReloads.get();
    }

    /** The certificate this process presents now (its own, first of the chain), or null without one. */
    public X509Certificate certificate() {
        TlsMaterial m = current();
        return m.chain == null ? null : m.chain[0];
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
        return material.server != null;
    }

    /**
     * A server-side handler for a new connection, failing the TLS handshake after {@code timeout}.
     *
     * @throws TiffinException {@code INVALID_PARAMS} if no certificate is configured
     */
    public SslHandler newServerHandler(ByteBufAllocator alloc, Duration timeout) {
        TlsMaterial m = current();
        if (m.server == null) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "transport.tls.enabled = true needs"
                    + " transport.tls.cert and transport.tls.key on servers (expected: the PEM certificate chain and"
                    + " private key this server presents)");
        }
        SslHandler h = m.server.newHandler(alloc);
        h.setHandshakeTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
        return h;
    }

    /** A client-side handler for a connection to {@code host:port} (the name its certificate must carry). */
    public SslHandler newClientHandler(ByteBufAllocator alloc, String host, int port, Duration timeout) {
        SslHandler h = current().client.newHandler(alloc, host, port);
        h.setHandshakeTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
        return h;
    }

    /**
     * A client engine for a connection to {@code host:port}, driven by its caller ({@link TlsSocketStream});
     * free it with {@link #release} once the connection is closed.
     */
    public SSLEngine newClientEngine(String host, int port) {
        return current().client.newEngine(ByteBufAllocator.DEFAULT, host, port);
    }

    /** Frees an engine made by {@link #newClientEngine} (OpenSSL's hold native memory). Idempotent. */
    public static void release(SSLEngine engine) {
        engine.closeOutbound();
        ReferenceCountUtil.release(engine);
    }

    @Override
    public String toString() {
        return "TLS[" + (usesOpenSsl() ? "openssl" : "jdk") + ", client-auth="
                + settings.clientAuth().name().toLowerCase(java.util.Locale.ROOT) + "]";
    }
}
