package io.tiffin.core.config;

import java.util.Objects;

/**
 * A network address as {@code host:port}; an IPv6 literal is written in brackets,
 * {@code [::1]:50051}.
 *
 * <p>Thread-safe (immutable).
 *
 * @param host a host name or IP literal (without brackets), non-empty
 * @param port 1..65535
 */
public record HostPort(String host, int port) {
    public HostPort {
        Objects.requireNonNull(host, "host");
        if (host.isBlank()) {
            throw new IllegalArgumentException("host = \"\" (expected: a host name or IP address)");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port = " + port + " (expected: 1..65535)");
        }
    }

    /**
     * Parses {@code host:port} or {@code [ipv6]:port}.
     *
     * @throws IllegalArgumentException if the text is not such an address
     */
    public static HostPort parse(String text) {
        String s = text.strip();
        String host;
        String port;
        if (s.startsWith("[")) {
            int close = s.indexOf(']');
            if (close < 0 || close + 1 >= s.length() || s.charAt(close + 1) != ':') {
                throw new IllegalArgumentException("\"" + text + "\" is not [ipv6]:port");
            }
            host = s.substring(1, close);
            port = s.substring(close + 2);
        } else {
            int colon = s.lastIndexOf(':');
            if (colon < 0 || s.indexOf(':') != colon) {
                throw new IllegalArgumentException("\"" + text + "\" is not host:port");
            }
            host = s.substring(0, colon);
            port = s.substring(colon + 1);
        }
        int p;
        try {
            p = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("\"" + text + "\" has no numeric port", e);
        }
        return new HostPort(host, p);
    }

    @Override
    public String toString() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
