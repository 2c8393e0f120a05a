package io.tiffin.core.transport;

import io.tiffin.api.DataGrant;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Signs and checks data-plane grants ({@link DataGrant}) under one mount's key: HMAC-SHA256, its first 128 bits,
 * over the segment name, offset, length, operations, mount epoch and expiry. The master signs every replica
 * descriptor it hands out with the key the segment's node sent at mount; the node checks each
 * {@code DATA_READ} / {@code DATA_WRITE} against it. The JDK's HMAC, keyed once: each call clones the keyed
 * prototype (the key's two padded blocks are already hashed), so a MAC costs three SHA-256 blocks.
 *
 * <p>Thread-safe: the prototype is never used directly; every call works on its own clone.
 */
public final class DataAccessMac {
    /** Length of the keys nodes draw ({@link #newKey()}); a key of fewer than 16 bytes is refused. */
    public static final int KEY_BYTES = 32;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Mac prototype;

    /**
     * @param key the mount's key, at least 16 bytes
     * @throws IllegalArgumentException for a shorter key
     */
    public DataAccessMac(byte[] key) {
        if (key.length < 16) {
            throw new IllegalArgumentException("a data-plane access key of " + key.length
                    + " bytes; at least 16 are needed");
        }
        try {
            prototype = Mac.getInstance("HmacSHA256");
            prototype.init(new SecretKeySpec(key, "HmacSHA256"));
            prototype.clone(); // fails here, not per request, if the provider's HMAC cannot be cloned
        } catch (GeneralSecurityException | CloneNotSupportedException e) {
            throw new IllegalStateException("HmacSHA256 is not available: " + e, e);
        }
    }

    /** A new random key for a mount. */
    public static byte[] newKey() {
        byte[] key = new byte[KEY_BYTES];
        RANDOM.nextBytes(key);
        return key;
    }

    /** A grant of {@code ops} on {@code [offset, offset + length)} of {@code segment} at {@code mountEpoch}. */
    public DataGrant sign(String segment, long offset, long length, int ops, long mountEpoch, long expiresAtMillis) {
        byte[] mac = mac(segment, offset, length, ops, mountEpoch, expiresAtMillis);
        return new DataGrant(ops, expiresAtMillis, bigEndian(mac, 0), bigEndian(mac, 8));
    }

    /** Whether {@code grant} was signed under this key for exactly these fields (compared in constant time). */
    public boolean verify(String segment, long offset, long length, long mountEpoch, DataGrant grant) {
        byte[] mac = mac(segment, offset, length, grant.ops(), mountEpoch, grant.expiresAtMillis());
        byte[] sent = new byte[16];
        putBigEndian(sent, 0, grant.macHigh());
        putBigEndian(sent, 8, grant.macLow());
        return MessageDigest.isEqual(java.util.Arrays.copyOf(mac, 16), sent);
    }

    private byte[] mac(String segment, long offset, long length, int ops, long mountEpoch, long expiresAtMillis) {
        byte[] name = segment.getBytes(StandardCharsets.UTF_8);
        byte[] msg = new byte[4 + name.length + 4 + 4 * 8];
        int at = putInt(msg, 0, name.length);
        System.arraycopy(name, 0, msg, at, name.length);
        at += name.length;
        at = putInt(msg, at, ops);
        at = putBigEndian(msg, at, offset);
        at = putBigEndian(msg, at, length);
        at = putBigEndian(msg, at, mountEpoch);
        putBigEndian(msg, at, expiresAtMillis);
        try {
            return ((Mac) prototype.clone()).doFinal(msg);
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException(e); // checked in the constructor
        }
    }

    private static int putInt(byte[] b, int at, int v) {
        b[at] = (byte) (v >>> 24);
        b[at + 1] = (byte) (v >>> 16);
        b[at + 2] = (byte) (v >>> 8);
        b[at + 3] = (byte) v;
        return at + 4;
    }

    private static int putBigEndian(byte[] b, int at, long v) {
        putInt(b, at, (int) (v >>> 32));
        return putInt(b, at + 4, (int) v);
    }

    private static long bigEndian(byte[] b, int at) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = v << 8 | (b[at + i] & 0xff);
        }
        return v;
    }
}
