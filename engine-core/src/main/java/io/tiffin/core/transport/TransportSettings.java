package io.tiffin.core.transport;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of a {@link TransportServer} or {@link TransportClient}. Thread-safe (immutable); holds no
 * buffers.
 *
 * @param maxFrameSize largest accepted value of a frame's length field (header + control + bulk bytes);
 *     a larger frame closes the connection. Must cover the largest object plus a little room for the
 *     header and control part, on both sides.
 * @param credentials the tokens servers accept per role, and the one this process's connections present
 *     in their HELLO ({@link Credentials#NONE}: no authentication). Never null.
 * @param handshakeTimeout the server closes a connection that has not completed its handshake within
 *     this time; the client bounds connecting plus handshaking by it.
 * @param ioThreads event-loop threads; 0 picks {@link EventLoops#defaultThreads()} (half the available
 *     processors, at least 1)
 * @param useNative use epoll when {@code Epoll.isAvailable()}; otherwise, or when false, NIO
 * @param rpcTimeout how long a client waits for a response before failing the call with {@code
 *     RPC_TIMEOUT}
 * @param tls TLS of servers and clients ({@link TlsSettings#OFF} for plaintext)
 * @param limits what servers accept from peers
 * @param insecure whether a server may listen beyond loopback without credentials ({@link ProtectedMode})
 */
public record TransportSettings(
        int maxFrameSize,
        Credentials credentials,
        Duration handshakeTimeout,
        int ioThreads,
        boolean useNative,
        Duration rpcTimeout,
        TlsSettings tls,
        ServerLimits limits,
        boolean insecure) {

    /** Default frame size limit: 64 MiB of object plus 1 MiB for header and control part. */
    public static final int DEFAULT_MAX_FRAME_SIZE = 65 * 1024 * 1024;

    public TransportSettings {
        if (maxFrameSize < 1024) {
            throw new IllegalArgumentException("transport maxFrameSize " + maxFrameSize
                    + " is too small; use at least 1024 bytes (the default is " + DEFAULT_MAX_FRAME_SIZE + ")");
        }
        Objects.requireNonNull(credentials, "credentials (use Credentials.NONE)");
        requirePositive(handshakeTimeout, "handshakeTimeout");
        requirePositive(rpcTimeout, "rpcTimeout");
        Objects.requireNonNull(tls, "tls (use TlsSettings.OFF)");
        Objects.requireNonNull(limits, "limits");
        if (ioThreads < 0) {
            throw new IllegalArgumentException("transport ioThreads " + ioThreads + " is negative; use 0 for"
                    + " the default or a positive thread count");
        }
    }

    /** As the canonical constructor, with the shared token {@code authToken} alone (every role's). */
    public TransportSettings(int maxFrameSize, String authToken, Duration handshakeTimeout, int ioThreads,
                             boolean useNative, Duration rpcTimeout, TlsSettings tls, ServerLimits limits,
                             boolean insecure) {
        this(maxFrameSize, Credentials.NONE.withAuthToken(authToken), handshakeTimeout, ioThreads, useNative, rpcTimeout,
                tls, limits, insecure);
    }

    private static void requirePositive(Duration d, String name) {
        Objects.requireNonNull(d, name);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException("transport " + name + " " + d + " must be positive");
        }
    }

    /**
     * 65 MiB frames, no token ({@link Credentials#NONE}), 10 s handshake timeout, default threads, native
     * transport, 30 s RPC timeout, no TLS, {@link ServerLimits#defaults()}, protected mode on.
     */
    public static TransportSettings defaults() {
        return new TransportSettings(DEFAULT_MAX_FRAME_SIZE, Credentials.NONE, Duration.ofSeconds(10), 0, true,
                Duration.ofSeconds(30), TlsSettings.OFF, ServerLimits.defaults(), false);
    }

    public TransportSettings withMaxFrameSize(int value) {
        return new TransportSettings(value, credentials, handshakeTimeout, ioThreads, useNative,
                rpcTimeout, tls, limits, insecure);
    }

    /** The shared token ({@code transport.auth-token}) set to {@code value}: alone, every role's. */
    public TransportSettings withAuthToken(String value) {
        return withCredentials(credentials.withAuthToken(value));
    }

    /** The same tokens, this process's connections presenting {@code role}'s. */
    public TransportSettings presentingAs(Role role) {
        return withCredentials(credentials.presentingAs(role));
    }

    public TransportSettings withCredentials(Credentials value) {
        return new TransportSettings(maxFrameSize, value, handshakeTimeout, ioThreads, useNative,
                rpcTimeout, tls, limits, insecure);
    }

    public TransportSettings withHandshakeTimeout(Duration value) {
        return new TransportSettings(maxFrameSize, credentials, value, ioThreads, useNative,
                rpcTimeout, tls, limits, insecure);
    }

    public TransportSettings withIoThreads(int value) {
        return new TransportSettings(maxFrameSize, credentials, handshakeTimeout, value, useNative,
                rpcTimeout, tls, limits, insecure);
    }

    public TransportSettings withUseNative(boolean value) {
        return new TransportSettings(maxFrameSize, credentials, handshakeTimeout, ioThreads, value,
                rpcTimeout, tls, limits, insecure);
    }

    public TransportSettings withRpcTimeout(Duration value) {
        return new TransportSettings(maxFrameSize, credentials, handshakeTimeout, ioThreads, useNative,
                value, tls, limits, insecure);
    }

    public TransportSettings withTls(TlsSettings value) {
        return new TransportSettings(maxFrameSize, credentials, handshakeTimeout, ioThreads, useNative,
                rpcTimeout, value, limits, insecure);
    }

    public TransportSettings withLimits(ServerLimits value) {
        return new TransportSettings(maxFrameSize, credentials, handshakeTimeout, ioThreads, useNative,
                rpcTimeout, tls, value, insecure);
    }

    public TransportSettings withInsecure(boolean value) {
        return new TransportSettings(maxFrameSize, credentials, handshakeTimeout, ioThreads, useNative,
                rpcTimeout, tls, limits, value);
    }

    /** The shared token ({@code transport.auth-token}); empty = none. Role tokens: {@link #credentials()}. */
    public String authToken() {
        return credentials.current().authToken();
    }

    /** Whether a token is configured (of any role). */
    public boolean hasTokens() {
        return credentials.current().any();
    }

    /** Never prints the token itself. */
    @Override
    public String toString() {
        return "TransportSettings[maxFrameSize=" + maxFrameSize + ", credentials=" + credentials
                + ", handshakeTimeout=" + handshakeTimeout + ", ioThreads=" + ioThreads + ", useNative="
                + useNative + ", rpcTimeout=" + rpcTimeout + ", tls=" + (tls.enabled() ? "on" : "off") + ", limits="
                + limits + ", insecure=" + insecure + "]";
    }
}
