package io.tiffin.api.spi.allocation;

/** Life cycle of a mounted segment. Only {@link #OK} segments receive new allocations. Thread-safe (immutable). */
public enum SegmentStatus {
    /** Mounted and accepting allocations. */
    OK,
    /** Being emptied: readable, no new allocations. */
    DRAINING,
    /** Being unmounted: neither readable nor allocatable. */
    UNMOUNTING
}
