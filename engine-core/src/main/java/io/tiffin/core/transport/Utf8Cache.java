package io.tiffin.core.transport;

import com.google.protobuf.ByteString;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The UTF-8 form of strings that many messages repeat, encoded once: a replica's segment name, node id and endpoint,
 * which every location the master hands out for that segment carries. Set as bytes, such a field costs a message
 * its length and a copy; set as a {@link String}, protobuf measures its UTF-8 length character by character when it
 * sizes the message and encodes it again when it writes it (a batch lookup of 128 keys did that 384 times).
 *
 * <p>Bounded: a cache that reaches {@link #MAX_ENTRIES} strings starts over (the strings are names of segments and
 * nodes, a few thousand in a large cluster; a caller passing ever new strings costs an encoding each, as without
 * the cache, and at most {@link #MAX_ENTRIES} entries of memory).
 *
 * <p>Thread-safe.
 */
final class Utf8Cache {
    static final int MAX_ENTRIES = 1 << 14;

    private final ConcurrentHashMap<String, ByteString> encoded = new ConcurrentHashMap<>();

    /** {@code s} in UTF-8. */
    ByteString utf8(String s) {
        ByteString b = encoded.get(s);
        if (b == null) {
            if (encoded.size() >= MAX_ENTRIES) {
                encoded.clear();
            }
            b = ByteString.copyFromUtf8(s);
            encoded.put(s, b);
        }
        return b;
    }

    int size() {
        return encoded.size();
    }
}
