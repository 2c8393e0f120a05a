package io.tiffin.core.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;
import java.util.function.Supplier;

/**
 * A channel's receive buffers with a window: while the one reading the channel names a buffer to fill next (the
 * free part of a long value arriving, or the memory a request's bulk belongs in), the socket is read straight into
 * it, so those bytes are copied once, by the kernel; otherwise the channel's usual allocator (sizes adapting to
 * the reads) gives the buffer. Used by the Redis gateway (a value's own buffer) and by {@link FrameCodec}'s placed
 * bulks ({@link BulkPlacement}).
 *
 * <p>Thread-safe as Netty uses it: one handle per channel, used on the channel's event loop only; {@code window}
 * is called there.
 */
public final class ReceiveWindows implements RecvByteBufAllocator {
    private final RecvByteBufAllocator usual;
    private final Supplier<ByteBuf> window;

    /**
     * @param usual the channel's allocator, used between long values
     * @param window the buffer the next read fills, or null when none (called on the event loop before each read)
     */
    public ReceiveWindows(RecvByteBufAllocator usual, Supplier<ByteBuf> window) {
        this.usual = usual;
        this.window = window;
    }

    @Override
    public Handle newHandle() {
        return new WindowHandle(usual.newHandle(), window);
    }

    /** Gives the window when there is one, the usual handle's buffer otherwise; the rest is the usual handle's. */
    private static final class WindowHandle extends DelegatingHandle implements ExtendedHandle {
        private final Supplier<ByteBuf> window;

        WindowHandle(Handle usual, Supplier<ByteBuf> window) {
            super(usual);
            this.window = window;
        }

        @Override
        public ByteBuf allocate(ByteBufAllocator alloc) {
            ByteBuf w = window.get();
            return w != null ? w : delegate().allocate(alloc);
        }

        @Override
        public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
            return delegate() instanceof ExtendedHandle e ? e.continueReading(maybeMoreDataSupplier)
                    : delegate().continueReading();
        }
    }
}
