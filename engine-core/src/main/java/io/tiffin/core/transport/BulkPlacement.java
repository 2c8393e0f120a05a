package io.tiffin.core.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.tiffin.core.util.Ticker;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * The bulk being placed on one plaintext server connection: while the bulk of a request whose {@link BulkPlacer}
 * named a destination is arriving, {@link #nextWindow} (the channel's {@link ReceiveWindows}) has the socket read
 * straight into the part of the destination still missing, a buffer of exactly that many bytes (never more, so
 * the padding and the next frame land in ordinary buffers). {@link FrameCodec.Decoder} starts a placement, feeds
 * it what the socket read ({@link #take}) and ends it.
 *
 * <p>The buffers handed out over the destination do not own it: releasing them frees nothing. The destination
 * belongs to whoever the placer took it from, who must keep it alive while the connection's event loop runs.
 *
 * <p>Not thread-safe: one per channel, used on its event loop only (Netty calls the handle there).
 */
final class BulkPlacement {
    /**
     * How often, at most, the placer is asked again while a bulk arrives. Its answer changes only with time (a grant
     * that expires) or an event (a re-mount), and the handler checks again once the bulk is whole, so a recheck
     * per millisecond stops a slow writer as well as one per read, without a parse and a MAC check per read.
     */
    static final long RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final Ticker ticker;
    /** When the placer last allowed the destination ({@link Ticker#nanos()}). */
    private long checkedNanos;
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

    /** @param ticker the clock of the rechecks */
    BulkPlacement(Ticker ticker) {
        this.ticker = ticker;
    }

    /** Whether a bulk is being placed. */
    boolean active() {
        return destination != null;
    }

    /**
     * Starts placing a bulk of {@code destination.byteSize()} bytes, the first {@code length} of which are the
     * bytes of {@code in} at {@code index} (copied now; moves no index of {@code in}); the placer has just allowed it.
     * {@code recheck} runs before a further read into the destination, at most every {@link #RECHECK_NANOS}, and throws once the bytes may no longer go there (a
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
        this.checkedNanos = ticker.nanos();
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

    /** Bytes of the bulk still to come. */
    long remaining() {
        return destination.byteSize() - received;
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

    /**
     * A buffer over the rest of the destination, empty, for the socket to fill; null when no bulk is being placed
     * (the channel's usual buffer then). Called by {@link ReceiveWindows} before each read.
     */
    ByteBuf nextWindow() {
        if (destination == null || received == destination.byteSize() || lapsed != null) {
            return null;
        }
        long now = ticker.nanos();
        if (now - checkedNanos >= RECHECK_NANOS) {
            try {
                recheck.run();
            } catch (RuntimeException e) {
                lapsed = e;
                return null;
            }
            checkedNanos = now;
        }
        window = Unpooled.wrappedBuffer(destination.asSlice(received).asByteBuffer()).clear();
        return window;
    }
}
