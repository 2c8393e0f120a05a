package io.tiffin.core.gateway;

import static io.tiffin.core.config.TiffinConfigKeys.GATEWAY_HOST;
import static io.tiffin.core.config.TiffinConfigKeys.GATEWAY_IDLE_TIMEOUT;
import static io.tiffin.core.config.TiffinConfigKeys.GATEWAY_IO_THREADS;
import static io.tiffin.core.config.TiffinConfigKeys.GATEWAY_MAX_ARRAY_LENGTH;
import static io.tiffin.core.config.TiffinConfigKeys.GATEWAY_MAX_BULK_SIZE;
import static io.tiffin.core.config.TiffinConfigKeys.GATEWAY_MAX_CONNECTIONS;
import static io.tiffin.core.config.TiffinConfigKeys.GATEWAY_MAX_INLINE_LENGTH;
import static io.tiffin.core.config.TiffinConfigKeys.GATEWAY_MAX_MEMORY;
import static io.tiffin.core.config.TiffinConfigKeys.GATEWAY_MAX_PIPELINE_BYTES;
import static io.tiffin.core.config.TiffinConfigKeys.GATEWAY_PORT;
import static io.tiffin.core.config.TiffinConfigKeys.GATEWAY_REPLICAS;
import static io.tiffin.core.config.TiffinConfigKeys.GATEWAY_WRITE_BUFFER;
import static io.tiffin.core.config.TiffinConfigKeys.TRANSPORT_AUTH_TOKEN;
import static io.tiffin.core.config.TiffinConfigKeys.TRANSPORT_CLIENT_TOKEN;
import static io.tiffin.core.config.TiffinConfigKeys.TRANSPORT_NATIVE;

import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.transport.Credentials;
import io.tiffin.core.transport.Role;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Settings of a {@link GatewayServer}: where it listens, the limits that bound its memory, and the
 * password RESP clients must give: the client role's token ({@code transport.client-token}, else {@code
 * transport.auth-token}, or those of {@code transport.tokens-file}, any of them during a rotation).
 *
 * <p>Thread-safe (immutable).
 *
 * @param host interface to bind
 * @param port port to bind; 0 = any free port
 * @param maxConnections most connections at once
 * @param idleTimeout a connection idle this long is closed; zero = never
 * @param maxBulkSize longest bulk string, bytes
 * @param maxArrayLength most arguments of one command
 * @param maxInlineLength longest inline command or header line, bytes
 * @param maxPipelineBytes requests of one connection received but not answered before reading pauses
 * @param maxMemory requests and replies in flight on all connections before reading pauses
 * @param writeBuffer replies waiting for one client before its commands stop running
 * @param ioThreads event-loop threads; 0 = half the processors
 * @param useNative epoll when available
 * @param credentials whose client-role tokens AUTH and HELLO ... AUTH accept ({@link Credentials#current}); none
 *     = no password required
 * @param replicas replicas of every value stored
 */
public record GatewaySettings(String host, int port, int maxConnections, Duration idleTimeout, int maxBulkSize,
                              int maxArrayLength, int maxInlineLength, long maxPipelineBytes, long maxMemory,
                              int writeBuffer, int ioThreads, boolean useNative, Credentials credentials,
                              int replicas) {
    public GatewaySettings {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(idleTimeout, "idleTimeout");
        Objects.requireNonNull(credentials, "credentials (Credentials.NONE for no password)");
        if (port < 0 || port > 65535 || maxConnections < 1 || maxBulkSize < 1 || maxArrayLength < 1
                || maxInlineLength < 16 || maxPipelineBytes < 1 || maxMemory < 1 || writeBuffer < 2 || ioThreads < 0
                || replicas < 1 || idleTimeout.isNegative()) {
            throw new IllegalArgumentException("gateway settings out of range: " + this);
        }
    }

    /**
     * The settings of the {@code gateway.*} keys (and the token keys, {@code transport.native}). A tokens file comes
     * with the process's credentials ({@code TiffinModule.credentials}), given by {@link #withCredentials}.
     */
    public static GatewaySettings from(TiffinConfig config) {
        return new GatewaySettings(config.get(GATEWAY_HOST), config.get(GATEWAY_PORT),
                config.get(GATEWAY_MAX_CONNECTIONS), config.get(GATEWAY_IDLE_TIMEOUT),
                (int) (long) config.get(GATEWAY_MAX_BULK_SIZE), config.get(GATEWAY_MAX_ARRAY_LENGTH),
                (int) (long) config.get(GATEWAY_MAX_INLINE_LENGTH), config.get(GATEWAY_MAX_PIPELINE_BYTES),
                config.get(GATEWAY_MAX_MEMORY), (int) (long) config.get(GATEWAY_WRITE_BUFFER),
                config.get(GATEWAY_IO_THREADS), config.get(TRANSPORT_NATIVE), tokens(config),
                config.get(GATEWAY_REPLICAS));
    }

    /** RESP's AUTH password: the client role's token ({@code transport.client-token}, else {@code transport.auth-token}). */
    private static Credentials tokens(TiffinConfig config) {
        return Credentials.NONE.withAuthToken(config.get(TRANSPORT_AUTH_TOKEN))
                .withToken(Role.CLIENT, config.get(TRANSPORT_CLIENT_TOKEN));
    }

    /** The defaults, on {@code host:port}. */
    public static GatewaySettings defaults(String host, int port) {
        return from(TiffinConfig.defaults()).withAddress(host, port);
    }

    public GatewaySettings withAddress(String newHost, int newPort) {
        return new GatewaySettings(newHost, newPort, maxConnections, idleTimeout, maxBulkSize, maxArrayLength,
                maxInlineLength, maxPipelineBytes, maxMemory, writeBuffer, ioThreads, useNative, credentials, replicas);
    }

    /** The password {@code newPassword} alone (empty = none). */
    public GatewaySettings withPassword(String newPassword) {
        return withCredentials(Credentials.NONE.withAuthToken(newPassword));
    }

    /** The client-role tokens of {@code newCredentials} as passwords. */
    public GatewaySettings withCredentials(Credentials newCredentials) {
        return new GatewaySettings(host, port, maxConnections, idleTimeout, maxBulkSize, maxArrayLength,
                maxInlineLength, maxPipelineBytes, maxMemory, writeBuffer, ioThreads, useNative, newCredentials,
                replicas);
    }

    /** The password clients give now (the first, during a rotation); empty = none. */
    public String password() {
        return credentials.current().tokenOf(Role.CLIENT);
    }

    /** Every password AUTH accepts now; empty = none required. */
    public List<String> passwords() {
        return credentials.current().acceptedTokensOf(Role.CLIENT);
    }

    /** Whether clients must authenticate. */
    public boolean requiresPassword() {
        return !password().isEmpty();
    }

    @Override
    public String toString() {
        return "GatewaySettings[" + host + ":" + port + ", maxConnections=" + maxConnections + ", idleTimeout="
                + idleTimeout + ", maxBulkSize=" + maxBulkSize + ", maxArrayLength=" + maxArrayLength
                + ", maxInlineLength=" + maxInlineLength + ", maxPipelineBytes=" + maxPipelineBytes + ", maxMemory="
                + maxMemory + ", writeBuffer=" + writeBuffer + ", ioThreads=" + ioThreads + ", native=" + useNative
                + ", password=" + (requiresPassword() ? "***" : "none") + ", replicas=" + replicas + "]";
    }
}
