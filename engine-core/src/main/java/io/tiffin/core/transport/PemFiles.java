package io.tiffin.core.transport;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the PEM files of {@link TlsSettings}: certificate chains and bundles (any number of {@code
 * CERTIFICATE} blocks) and unencrypted PKCS#8 private keys ({@code PRIVATE KEY}: RSA, EC or EdDSA). Every
 * failure names the configuration key and the file, and says what the file should hold.
 *
 * <p>Thread-safe (stateless).
 */
final class PemFiles {
    private static final Pattern KEY_BLOCK = Pattern.compile(
            "-----BEGIN ([A-Z ]*PRIVATE KEY)-----([A-Za-z0-9+/=\\s]*)-----END \\1-----");
    private static final List<String> KEY_ALGORITHMS = List.of("RSA", "EC", "Ed25519", "Ed448", "RSASSA-PSS");

    private PemFiles() {
    }

    /**
     * The certificates in {@code file}, in file order (for a chain: the own certificate first).
     *
     * @param configKey the key that named the file, for messages
     * @throws TiffinException {@code INVALID_PARAMS} if the file cannot be read or holds no certificate
     */
    static X509Certificate[] certificates(Path file, String configKey) {
        byte[] pem = read(file, configKey, "PEM certificates");
        try {
            List<X509Certificate> certs = CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(pem)).stream()
                    .map(c -> (X509Certificate) c).toList();
            if (certs.isEmpty()) {
                throw invalid(configKey, file, "holds no certificate", "PEM blocks -----BEGIN CERTIFICATE-----");
            }
            return certs.toArray(X509Certificate[]::new);
        } catch (CertificateException e) {
            throw invalid(configKey, file, "is not a readable certificate file (" + e.getMessage() + ")",
                    "PEM blocks -----BEGIN CERTIFICATE-----");
        }
    }

    /**
     * The private key in {@code file}: one unencrypted PKCS#8 block.
     *
     * @throws TiffinException {@code INVALID_PARAMS} naming what is wrong and how to convert the key
     */
    static PrivateKey privateKey(Path file, String configKey) {
        String pem = new String(read(file, configKey, "a PEM private key"), StandardCharsets.US_ASCII);
        Matcher m = KEY_BLOCK.matcher(pem);
        String expected = "an unencrypted PKCS#8 key, -----BEGIN PRIVATE KEY-----; convert one with"
                + " `openssl pkcs8 -topk8 -nocrypt -in old.pem -out key.pem`";
        if (!m.find()) {
            throw invalid(configKey, file, "holds no private key", expected);
        }
        if (!m.group(1).equals("PRIVATE KEY")) {
            throw invalid(configKey, file, "holds a " + m.group(1) + " block", expected);
        }
        byte[] der;
        try {
            der = Base64.getMimeDecoder().decode(m.group(2).replaceAll("\\s", ""));
        } catch (IllegalArgumentException e) {
            throw invalid(configKey, file, "has a private key that is not valid base64", expected);
        }
        PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(der);
        for (String algorithm : KEY_ALGORITHMS) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(spec);
            } catch (GeneralSecurityException | IllegalArgumentException e) {
                // try the next algorithm
            }
        }
        throw invalid(configKey, file, "holds a private key of an algorithm this JVM cannot read", "an RSA, EC or"
                + " EdDSA key in PKCS#8");
    }

    private static byte[] read(Path file, String configKey, String what) {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, configKey + " = " + file + ": cannot read it (" + e
                    + ") (expected: a readable file with " + what + ")", e);
        }
    }

    private static TiffinException invalid(String configKey, Path file, String problem, String expected) {
        return new TiffinException(ErrorCode.INVALID_PARAMS, configKey + " = " + file + ": the file " + problem
                + " (expected: " + expected + ")");
    }
}
