package io.tiffin.core.transport;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * TLS of every connection a Tiffin process makes or accepts: the master's RPC, the nodes' data plane,
 * the admin HTTP, and the clients of each (configuration keys {@code transport.tls.*}). Files are PEM;
 * {@link TlsContexts} loads them. One set of settings serves a process's servers and clients: a server
 * presents {@code cert} and checks client certificates against {@code ca}; a client checks the server
 * against {@code ca} (the JDK's trust store when empty) and presents {@code cert} when it has one
 * (mutual TLS).
 *
 * <p>Thread-safe (immutable); holds no buffers.
 *
 * @param enabled whether connections use TLS; when false every other field is ignored
 * @param cert PEM certificate chain (the process's own certificate first), or null; servers need it
 * @param key PEM private key (PKCS#8, unencrypted) of {@code cert}, or null; servers need it
 * @param ca PEM certificates of the authorities to trust, or null for the JDK's trust store; servers
 *     that check client certificates need it
 * @param clientAuth whether servers ask clients for a certificate
 * @param provider which TLS engine to use
 * @param verifyHostname whether clients check that the server's certificate names the host they dialled
 * @param reloadInterval how often the files are looked at again for a rotated certificate ({@link TlsContexts});
 *     zero = never
 */
public record TlsSettings(boolean enabled, Path cert, Path key, Path ca, ClientAuth clientAuth, Provider provider,
                          boolean verifyHostname, Duration reloadInterval) {

    /** The default of {@code transport.tls.reload-interval}. */
    public static final Duration DEFAULT_RELOAD_INTERVAL = Duration.ofMinutes(1);

    /** TLS off. */
    public static final TlsSettings OFF = new TlsSettings(false, null, null, null, ClientAuth.NONE, Provider.AUTO,
            true, DEFAULT_RELOAD_INTERVAL);

    /** Whether a server asks for a client certificate ({@code transport.tls.client-auth}). */
    public enum ClientAuth {
        /** Clients present none. */
        NONE,
        /** Clients may present one; a presented one must be valid. */
        OPTIONAL,
        /** Clients must present a valid one (mutual TLS): a credential, like the auth token. */
        REQUIRE;

        /** The value of {@code transport.tls.client-auth}: {@code none}, {@code optional} or {@code require}. */
        public static ClientAuth parse(String s) {
            return valueOf(s.strip().toUpperCase(Locale.ROOT));
        }
    }

    /** The TLS engine ({@code transport.tls.provider}). */
    public enum Provider {
        /** OpenSSL (BoringSSL, netty-tcnative) when it loads on this platform, else the JDK's. */
        AUTO,
        /** OpenSSL; start-up fails where it does not load. */
        OPENSSL,
        /** The JDK's own engine. */
        JDK;

        /** The value of {@code transport.tls.provider}: {@code auto}, {@code openssl} or {@code jdk}. */
        public static Provider parse(String s) {
            return valueOf(s.strip().toUpperCase(Locale.ROOT));
        }
    }

    public TlsSettings {
        Objects.requireNonNull(clientAuth, "clientAuth");
        Objects.requireNonNull(provider, "provider");
        if (reloadInterval == null || reloadInterval.isNegative()) {
            throw new IllegalArgumentException("transport.tls.reload-interval must be 0 (never) or positive, got "
                    + reloadInterval);
        }
        if (enabled && (cert == null) != (key == null)) {
            throw new IllegalArgumentException("transport.tls.cert and transport.tls.key go together: set both (a"
                    + " server's or a mutual-TLS client's certificate and its key) or neither");
        }
        if (enabled && clientAuth != ClientAuth.NONE && ca == null) {
            throw new IllegalArgumentException("transport.tls.client-auth = " + clientAuth.name().toLowerCase(Locale.ROOT)
                    + " needs transport.tls.ca: the authorities whose client certificates servers accept");
        }
    }

    /** TLS on with the given files (any may be null), no client certificates asked, the default provider. */
    public static TlsSettings of(Path cert, Path key, Path ca) {
        return new TlsSettings(true, cert, key, ca, ClientAuth.NONE, Provider.AUTO, true, DEFAULT_RELOAD_INTERVAL);
    }

    public TlsSettings withClientAuth(ClientAuth value) {
        return new TlsSettings(enabled, cert, key, ca, value, provider, verifyHostname, reloadInterval);
    }

    public TlsSettings withProvider(Provider value) {
        return new TlsSettings(enabled, cert, key, ca, clientAuth, value, verifyHostname, reloadInterval);
    }

    public TlsSettings withVerifyHostname(boolean value) {
        return new TlsSettings(enabled, cert, key, ca, clientAuth, provider, value, reloadInterval);
    }

    public TlsSettings withReloadInterval(Duration value) {
        return new TlsSettings(enabled, cert, key, ca, clientAuth, provider, verifyHostname, value);
    }

    /** Whether servers accept only clients with a valid certificate (mutual TLS), a credential in itself. */
    public boolean requiresClientCertificates() {
        return enabled && clientAuth == ClientAuth.REQUIRE;
    }
}
