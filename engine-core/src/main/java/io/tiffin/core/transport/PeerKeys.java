package io.tiffin.core.transport;

import com.google.protobuf.ByteString;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Peer keys: a random secret each process presents in every HELLO ({@code Hello.peer_key}), which proves that its
 * connections are one process's, whatever peer id they declare. A server keeps only the key's SHA-256 digest. A
 * peer id held by a process (a client's id while it has a connection open; a node's id while its node is mounted)
 * is refused to connections that present another key, so a holder of the same token cannot act as another client's
 * writer or another node. This class also tracks, per server, which key holds each peer id ({@link #claim}).
 *
 * <p>Thread-safe: the process key is created once; the holders map is concurrent, each id's holder changed
 * atomically.
 */
public final class PeerKeys {
    private static final ByteString PROCESS_KEY = random();

    /** One id's holder: the key digest and how many of its connections are open. */
    private record Holder(String digest, int connections) {
    }

    private final ConcurrentHashMap<String, Holder> holders = new ConcurrentHashMap<>();

    /** The key this process presents on every connection. */
    public static ByteString ofThisProcess() {
        return PROCESS_KEY;
    }

    /** A new random key (a process's; for tests, another process's). */
    public static ByteString random() {
        byte[] b = new byte[32];
        new SecureRandom().nextBytes(b);
        return ByteString.copyFrom(b);
    }

    /** The SHA-256 of {@code key}, hex; "" for an empty key (an older peer that presents none). */
    public static String digest(ByteString key) {
        if (key.isEmpty()) {
            return "";
        }
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(key.toByteArray()));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    /** What a connection's claim of its peer id came to. */
    enum Claim {
        /** It holds the id (with its process's other connections); it must {@link #release} it when it closes. */
        HOLDS,
        /** It presented no key (an older peer) and no keyed process holds the id: unproven, as before keys. */
        UNKEYED,
        /** Connections of another key hold the id. */
        TAKEN
    }

    /** A connection declaring {@code id} with a key of {@code digest} ("" = none) opened. */
    Claim claim(String id, String digest) {
        if (id.isEmpty()) {
            return Claim.UNKEYED;
        }
        if (digest.isEmpty()) {
            return holders.containsKey(id) ? Claim.TAKEN : Claim.UNKEYED;
        }
        boolean[] held = new boolean[1];
        holders.compute(id, (k, h) -> {
            if (h == null || h.digest().equals(digest)) {
                held[0] = true;
                return new Holder(digest, h == null ? 1 : h.connections() + 1);
            }
            return h;
        });
        return held[0] ? Claim.HOLDS : Claim.TAKEN;
    }

    /** A connection that {@link #claim claimed} {@code id} closed. */
    void release(String id, String digest) {
        holders.computeIfPresent(id, (k, h) -> !h.digest().equals(digest) ? h
                : h.connections() <= 1 ? null : new Holder(digest, h.connections() - 1));
    }

    /** Ids held now (tests). */
    int held() {
        return holders.size();
    }

    /** A key's digest shortened for messages (never the key). */
    static String fingerprint(String digest) {
        return digest.isEmpty() ? "(none)" : digest.substring(0, 12);
    }

    /** An empty registry of peer-id holders (one per server). */
    PeerKeys() {
    }
}
