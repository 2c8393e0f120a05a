package io.tiffin.core.transport;

/** Version strings. Thread-safe (constants). */
public final class TiffinVersion {
    /** Store version reported by ServiceReady; clients refuse a master with another version. */
    public static final String VERSION = "0.1.0";

    /** Wire protocol version, checked in the connection handshake. */
    public static final int PROTOCOL_VERSION = 2;

    private TiffinVersion() {
    }
}
