package io.tiffin.core.transport;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.util.Objects;

/**
 * A server address parsed from {@code host:port} (IPv6 hosts in brackets). Immutable, thread-safe.
 *
 * @param host host name or address, without brackets
 * @param port TCP port, 1 to 65535
 */
record Endpoint(String host, int port) {

    /**
     * Parses {@code hostPort}.
     *
     * @throws TiffinException {@code INVALID_PARAMS} when it is not {@code host:port} with a valid port
     */
    static Endpoint parse(String hostPort) {
        Objects.requireNonNull(hostPort, "hostPort");
        int colon = hostPort.lastIndexOf(':');
        int port = -1;
        if (colon > 0 && colon < hostPort.length() - 1) {
            try {
                port = Integer.parseInt(hostPort.substring(colon + 1));
            } catch (NumberFormatException e) {
                port = -1;
            }
        }
        if (port < 1 || port > 65535) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "endpoint '" + hostPort
                    + "' is not host:port with a port from 1 to 65535; fix the configured address");
        }
        String host = hostPort.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        return new Endpoint(host, port);
    }
}
