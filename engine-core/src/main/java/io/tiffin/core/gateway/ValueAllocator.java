package io.tiffin.core.gateway;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;

/**
 * The allocator of the gateway's value buffers (a GET's value read from the store, a SET's value arriving in
 * pieces). Values are large (LMCache's chunks are MiBs), beyond what Netty's default allocator pools: it
 * would allocate each one afresh, zeroing it first, a pass over the memory as long as the copy the value
 * costs. This pool keeps chunks of {@link #CHUNK_BYTES} and hands out runs of their pages: values up to
 * that size reuse memory without zeroing; larger ones are allocated on their own. One pool per JVM (like
 * Netty's default), shared by every gateway in it.
 *
 * <p>Memory: what the gateway holds in value buffers is bounded by {@code gateway.max-memory}; the pool rounds
 * a buffer up to its size class (at most a quarter more) and frees a chunk once it is empty again, except
 * chunks that never were a quarter full (one per arena, typically).
 *
 * <p>Thread-safe. Buffers are allocated on the commands' virtual threads and released on event loops, so no
 * thread-local caches: an allocation and a release each take their arena's lock, once per value.
 */
final class ValueAllocator {
    /** Values up to this size (framing included) are pooled: 64 MiB, LMCache's 32 MiB chunks included. */
    static final int CHUNK_BYTES = 8192 << 13;

    /** The pool. */
    static final ByteBufAllocator POOL = new PooledByteBufAllocator(true, 0,
            Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors() / 2)), 8192, 13, 0, 0, false);

    private ValueAllocator() {
    }
}
