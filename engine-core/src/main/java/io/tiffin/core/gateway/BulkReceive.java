package io.tiffin.core.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;
import java.util.function.Supplier;

/**
 * The receive buffers of one connection: while a long value is arriving into its own buffer, the socket is
 * read straight into that buffer's free part ({@link RespParser#receiveWindow()}), so the value's bytes are
 * copied once, by the kernel, instead of into a socket buffer first and then into the value's. Otherwise
 * the channel's usual allocator (sizes adapting to the reads) gives the buffer.
 *
 * <p>Thread-safe as Netty uses it: one handle per channel, used on the channel's event loop only.
 */
final class BulkReceive implements RecvByteBufAllocator {
    private final RecvByteBufAllocator usual;
    private final Supplier<ByteBuf> window;

    /**
     * @param usual the channel's allocator, used between long values
     * @param window the free part of the value being received, or null when none (called on the event loop)
     */
    BulkReceive(RecvByteBufAllocator usual, Supplier<ByteBuf> window) {
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
