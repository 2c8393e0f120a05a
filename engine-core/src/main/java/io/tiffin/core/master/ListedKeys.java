package io.tiffin.core.master;

import java.util.Map;

/**
 * Keys found by {@link MasterService#listKeys}, in key order, with their sizes, and whether more exist.
 *
 * <p>Thread-safe if {@code keys} is not changed after construction (the master hands out a map it no
 * longer touches).
 *
 * @param keys key → size in bytes, in key order
 * @param truncated whether more keys matched than the limit
 */
public record ListedKeys(Map<String, Long> keys, boolean truncated) {
}
