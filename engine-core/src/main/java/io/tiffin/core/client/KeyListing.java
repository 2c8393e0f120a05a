package io.tiffin.core.client;

import java.util.List;

/**
 * The answer of {@link TiffinClient#listKeys}: keys with their sizes, sorted, and whether more keys
 * matched than the limit allowed.
 *
 * <p>Thread-safe (immutable).
 *
 * @param keys the keys listed, in order
 * @param truncated whether more keys match than were listed
 */
public record KeyListing(List<KeySize> keys, boolean truncated) {
    public KeyListing {
        keys = List.copyOf(keys);
    }

    /**
     * One listed key.
     *
     * <p>Thread-safe (immutable).
     *
     * @param key the key
     * @param size the size of its object, bytes
     */
    public record KeySize(String key, long size) {
    }
}
