package io.tiffin.core.transport;

import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.function.Supplier;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * JDK key and trust managers that ask, at every handshake, for the managers of the {@link TlsMaterial} loaded
 * last: an HTTPS server made once (the admin endpoint) presents a reloaded certificate and trusts reloaded
 * authorities from its next connection on ({@link TlsContexts#jdkServerContext}).
 *
 * <p>Thread-safe (they hold only the supplier, whose managers are thread-safe).
 */
final class CurrentJdkManagers {
    private CurrentJdkManagers() {
    }

    /** Presents the certificate of the material {@code current} supplies. */
    static final class Keys extends X509ExtendedKeyManager {
        private final Supplier<X509ExtendedKeyManager> current;

        Keys(Supplier<X509ExtendedKeyManager> current) {
            this.current = current;
        }

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return current.get().getClientAliases(keyType, issuers);
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            return current.get().chooseClientAlias(keyType, issuers, socket);
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return current.get().getServerAliases(keyType, issuers);
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return current.get().chooseServerAlias(keyType, issuers, socket);
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return current.get().getCertificateChain(alias);
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return current.get().getPrivateKey(alias);
        }

        @Override
        public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
            return current.get().chooseEngineClientAlias(keyType, issuers, engine);
        }

        @Override
        public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
            return current.get().chooseEngineServerAlias(keyType, issuers, engine);
        }
    }

    /** Trusts the authorities of the material {@code current} supplies. */
    static final class Trust extends X509ExtendedTrustManager {
        private final Supplier<X509ExtendedTrustManager> current;

        Trust(Supplier<X509ExtendedTrustManager> current) {
            this.current = current;
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            current.get().checkClientTrusted(chain, authType, socket);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            current.get().checkServerTrusted(chain, authType, socket);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            current.get().checkClientTrusted(chain, authType, engine);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            current.get().checkServerTrusted(chain, authType, engine);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            current.get().checkClientTrusted(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            current.get().checkServerTrusted(chain, authType);
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return current.get().getAcceptedIssuers();
        }
    }
}
