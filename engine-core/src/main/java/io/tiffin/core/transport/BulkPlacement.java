package io.tiffin.core.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;
import java.lang.foreign.MemorySegment;

/**
 * The receive buffers of one plaintext server connection, and the bulk being placed: while the bulk of a
 * request whose {@link BulkPlacer} named a destination is arriving, the socket is read straight into the part
 * of the destination still missing, a buffer of exactly that many bytes (never more, so the padding and the
 * next frame land in ordinary buffers); otherwise the channel's usual allocator (sizes adapting to the reads)
 * gives the buffer. {@link FrameCodec.Decoder} starts a placement, feeds it what the socket read ({@link
 * #take}) and ends it.
 *
 * <p>The buffers handed out over the destination do not own it: releasing them frees nothing. The destination
 * belongs to whoever the placer took it from, who must keep it alive while the connection's event loop runs.
 *
 * <p>Not thread-safe: one per channel, used on its event loop only (Netty calls the handle there).
 */
final class BulkPlacement implements RecvByteBufAllocator {
    private final RecvByteBufAllocator usual;
    /** Where the bulk goes; null while none is being placed. */
    private MemorySegment destination;
    /** Bytes of the bulk in place. */
    private long received;
    /** The last buffer handed out over the destination, to tell the socket's bytes from any other buffer's. */
    private ByteBuf window;
    /** Asks the placer again, before each read into the destination; throws when it no longer may. */
    private Runnable recheck;
    /** Why the placer refused on a recheck; the rest of the bulk is then discarded. Null while it allows. */
    private RuntimeException lapsed;

    /** @param usual the channel's allocator, used between placed bulks */
    BulkPlacement(RecvByteBufAllocator usual) {
        this.usual = usual;
    }

    /** Whether a bulk is being placed. */
    boolean active() {
        return destination != null;
    }

    /**
     * Starts placing a bulk of {@code destination.byteSize()} bytes, the first {@code length} of which are the
     * bytes of {@code in} at {@code index} (copied now; moves no index of {@code in}). {@code recheck} runs
     * before every further read into the destination and throws once the bytes may no longer go there (a
     * permission that lapsed while the bulk arrived): the rest of the bulk is then discarded, see {@link #lapsed}.
     */
    void start(MemorySegment destination, ByteBuf in, int index, int length, Runnable recheck) {
        if (length > 0) {
            in.getBytes(index, destination.asSlice(0, length).asByteBuffer());
        }
        this.destination = destination;
        this.received = length;
        this.window = null;
        this.recheck = recheck;
        this.lapsed = null;
    }

    /** Why the destination was refused while the bulk arrived (its later bytes discarded); null if it was not. */
    RuntimeException lapsed() {
        return lapsed;
    }

    /**
     * Takes the bytes of {@code in} that belong to the bulk, up to its end, and moves the reader index past them:
     * a buffer handed out over the destination already holds them in place; another one's are copied.
     */
    void take(ByteBuf in) {
        int n = (int) Math.min(in.readableBytes(), destination.byteSize() - received);
        if (in == window) {
            window = null;
        } else if (n > 0 && lapsed == null) {
            in.getBytes(in.readerIndex(), destination.asSlice(received, n).asByteBuffer());
        }
        in.skipBytes(n);
        received += n;
    }

    /** Bytes of the bulk in place. */
    long received() {
        return received;
    }

    /** Whether the whole bulk is in place. */
    boolean complete() {
        return received == destination.byteSize();
    }

    /** Ends the placement (complete or not) and returns its destination. */
    MemorySegment end() {
        MemorySegment d = destination;
        destination = null;
        window = null;
        recheck = null;
        return d;
    }

    /** A buffer over the rest of the destination, empty, for the socket to fill; null when none is placed. */
    private ByteBuf nextWindow() {
        if (destination == null || received == destination.byteSize() || lapsed != null) {
            return null;
        }
        try {
            recheck.run();
        } catch (RuntimeException e) {
            lapsed = e;
            return null;
        }
        window = Unpooled.wrappedBuffer(destination.asSlice(received).asByteBuffer()).clear();
        return window;
    }

    @Override
    public Handle newHandle() {
        return new PlacingHandle(usual.newHandle());
    }

    /** Gives a window over the destination while a bulk is placed, the usual handle's buffer otherwise. */
    private final class PlacingHandle extends DelegatingHandle implements ExtendedHandle {
        PlacingHandle(Handle usual) {
            super(usual);
        }

        @Override
        public ByteBuf allocate(ByteBufAllocator alloc) {
            ByteBuf w = nextWindow();
            return w != null ? w : delegate().allocate(alloc);
        }

        @Override
        public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
            return delegate() instanceof ExtendedHandle e ? e.continueReading(maybeMoreDataSupplier)
                    : delegate().continueReading();
        }
    }
}
