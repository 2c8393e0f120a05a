package io.tiffin.core.cli;

import static io.tiffin.core.config.TiffinConfigKeys.GATEWAY_HOST;
import static io.tiffin.core.config.TiffinConfigKeys.GATEWAY_PORT;
import static io.tiffin.core.config.TiffinConfigKeys.GATEWAY_REPLICAS;
import static io.tiffin.core.config.TiffinConfigKeys.MASTER_ADDRESS;
import static io.tiffin.core.config.TiffinConfigKeys.TRANSPORT_INSECURE;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.gateway.GatewayServer;
import io.tiffin.core.gateway.GatewaySettings;
import io.tiffin.core.gateway.GatewayStore;
import io.tiffin.core.gateway.TiffinGatewayStore;
import io.tiffin.core.transport.ProtectedMode;
import java.util.Deque;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tiffin gateway}: a Redis-protocol (RESP) server in front of a Tiffin cluster, with a client of its
 * own (location cache, hot cache, same-host shared memory), for LMCache's {@code redis://} backend,
 * redis-py, redis-cli and redis-benchmark. Runs beside each inference process or in front of a cluster.
 *
 * <p>Not thread-safe: one instance runs once (see {@link ServerCommand}).
 */
@Command(name = "gateway", mixinStandardHelpOptions = true,
        description = "Runs a Redis-protocol (RESP2/RESP3) gateway to a Tiffin cluster (until Ctrl-C); see"
                + " docs/REDIS.md.")
final class GatewayCommand extends ServerCommand {
    @Option(names = "--master", paramLabel = "HOST:PORT",
            description = "The master (master.address; default 127.0.0.1:50051).")
    String master;

    @Option(names = "--host", paramLabel = "HOST",
            description = "Interface to bind (gateway.host; default 127.0.0.1).")
    String host;

    @Option(names = "--port", paramLabel = "PORT",
            description = "RESP port (gateway.port; default 6379; 0 = any free port).")
    String port;

    @Override
    TiffinConfig resolveConfig() {
        Map<String, Flag> f = serverFlags();
        f.put(MASTER_ADDRESS.name(), new Flag("--master", master));
        f.put(GATEWAY_HOST.name(), new Flag("--host", host));
        f.put(GATEWAY_PORT.name(), new Flag("--port", port));
        return config(f);
    }

    @Override
    void start(TiffinConfig config, Deque<AutoCloseable> started) {
        // before connecting: a master with tokens would refuse a gateway without one first
        Prepared prepared = prepare(config);
        GatewayStore store = TiffinGatewayStore.connect(component(config, TiffinClient.Options.class),
                config.get(GATEWAY_REPLICAS));
        GatewayServer gateway = startGateway(config, prepared, store, "--port");
        started.push(gateway);
        out().println(gatewayLine(config.get(GATEWAY_HOST), gateway, config.get(MASTER_ADDRESS).toString()));
    }

    /**
     * A gateway's settings, built once from the configuration by {@link #prepare}: what protected mode decided on is
     * what the gateway then runs with (the same credentials, the same read of {@code transport.tokens-file}).
     *
     * <p>Thread-safe (immutable).
     *
     * @param settings the RESP settings with the credentials of {@code transport.*-token} and {@code
     *     transport.tokens-file}
     * @param tls {@code transport.tls.*}
     */
    record Prepared(GatewaySettings settings, io.tiffin.core.transport.TlsSettings tls) {
    }

    /**
     * Builds the gateway's settings and applies protected mode, as for the master and the nodes (docs/SECURITY.md):
     * refuses a gateway reachable from other hosts with no password, no client certificates and no {@code
     * --insecure}; call before connecting to the store, then pass the result to {@link #startGateway}.
     *
     * @throws TiffinException {@code INVALID_PARAMS} saying what to set (or what is wrong with the tokens file)
     */
    static Prepared prepare(TiffinConfig config) {
        GatewaySettings settings = GatewaySettings.from(config)
                .withCredentials(io.tiffin.core.TiffinModule.credentials(config));
        io.tiffin.core.transport.TlsSettings tlsSettings = io.tiffin.core.TiffinModule.tlsSettings(config);
        boolean clientCertificates = tlsSettings.enabled() && tlsSettings.requiresClientCertificates();
        if (settings.password().isEmpty() && !config.get(TRANSPORT_INSECURE) && !clientCertificates
                && !ProtectedMode.isLoopback(settings.host())) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "the Redis gateway refuses to listen on "
                    + settings.host() + ":" + settings.port() + ": that address is reachable from other hosts and no"
                    + " password is set, so anyone who can reach it could read, overwrite or remove every object. Set"
                    + " transport.client-token (or transport.auth-token), clients then AUTH with it; or bind to"
                    + " 127.0.0.1 (gateway.host); or require client certificates (transport.tls.enabled = true,"
                    + " transport.tls.client-auth = require); or accept the risk with --insecure (transport.insecure = true)");
        }
        return new Prepared(settings, tlsSettings);
    }

    /**
     * Starts the gateway over {@code store} with the settings of {@link #prepare}; when it cannot listen, closes the
     * store and fails with a message naming {@code flag}.
     */
    static GatewayServer startGateway(TiffinConfig config, Prepared prepared, GatewayStore store, String flag) {
        io.tiffin.core.transport.TlsContexts tls = null;
        try {
            // RESP over TLS with the process's transport.tls.* keys (as Redis 6's tls-port, on the one port)
            tls = prepared.tls().enabled() ? io.tiffin.core.transport.TlsContexts.load(prepared.tls()) : null;
        } catch (RuntimeException e) {
            store.close();
            throw e;
        }
        try {
            return GatewayServer.start(store, prepared.settings(), io.tiffin.core.util.Ticker.SYSTEM, tls,
                    config.get(io.tiffin.core.config.TiffinConfigKeys.TRANSPORT_HANDSHAKE_TIMEOUT));
        } catch (TiffinException e) {
            if (e.getCause() == null) {
                store.close();
                throw e; // not a bind failure (e.g. TLS without a certificate): the message says what to set
            }
            store.close();
            throw new TiffinException(ErrorCode.INVALID_PARAMS, flag + " " + config.get(GATEWAY_PORT) + " (gateway.port ["
                    + config.source(GATEWAY_PORT) + "]) cannot be used on " + config.get(GATEWAY_HOST) + ": "
                    + (e.getCause() == null ? e.getMessage() : e.getCause().getMessage()) + "; is another server (a"
                    + " redis-server?) using it? Choose another port with " + flag + ", or stop that process", e);
        } catch (RuntimeException e) {
            store.close();
            throw e;
        }
    }

    /** The line announcing a gateway. */
    static String gatewayLine(String host, GatewayServer gateway, String master) {
        return "Tiffin Redis gateway listening on " + endpoint(host, gateway.address()) + " (RESP2/RESP3"
                + (gateway.tls() ? " over TLS" : "") + ", store: master "
                + master + ")";
    }
}
