package io.tiffin.core.transport;

import io.netty.channel.Channel;
import io.netty.channel.unix.IntegerUnixChannelOption;
import io.netty.channel.unix.UnixChannel;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * A channel's receive low-water mark ({@code SO_RCVLOWAT}) while a long value arrives (a placed bulk, {@link
 * BulkPlacement}; a Redis value read into its own buffer, in the gateway):
 * the kernel reports the socket readable only once that many bytes wait in it (or its receive window is about to
 * close), so the event loop wakes and reads once per {@link #MAX} bytes of a bulk instead of once per segment
 * the sender's writes arrive in (about every 64 KiB on loopback). The mark never exceeds the bytes of the bulk
 * still to come, so the last of them always wake the loop, and it is back to one byte before anything else is read.
 * A peer that trickles a bulk below the mark wakes nothing: {@link FrameCodec}'s frame timeout is then enforced by a
 * timer instead of by the reads.
 *
 * <p>Only on Linux's native transport (epoll), where {@code setsockopt} is reachable; elsewhere, and if the option
 * is refused once, it does nothing and reads stay as they were.
 *
 * <p>Not thread-safe: one per channel, used on its event loop only.
 */
public final class ReceiveLowWater {
    private static final Logger LOG = LogManager.getLogger(ReceiveLowWater.class);
    /** {@code SOL_SOCKET} and {@code SO_RCVLOWAT} on Linux. */
    private static final IntegerUnixChannelOption SO_RCVLOWAT = new IntegerUnixChannelOption("SO_RCVLOWAT", 1, 18);
    /**
     * The largest mark asked for: 1 MiB per wake-up (the kernel caps it at half of {@code net.ipv4.tcp_rmem}'s maximum,
     * and grows the socket's receive buffer to hold it).
     */
    static final int MAX = 1 << 20;
    /** Bulks shorter than this are read as they come: the option's own system calls would cost more than they save. */
    static final int MIN = 128 << 10;

    private final Channel channel;
    private boolean usable;
    /** The mark set now; 1 = the kernel's default. */
    private int mark = 1;

    /** @param channel the channel whose socket it marks */
    public ReceiveLowWater(Channel channel) {
        this.channel = channel;
        this.usable = channel instanceof UnixChannel;
    }

    /** The value being received has {@code remaining} bytes still to come: the mark becomes at most that many. */
    public void await(long remaining) {
        if (remaining < MIN) {
            reset();
            return;
        }
        int want = (int) Math.min(remaining, MAX);
        if (want < mark || mark == 1) {
            set(want);
        }
    }

    /** Back to the kernel's default: readable from one byte. */
    public void reset() {
        if (mark != 1 && channel.isOpen()) {
            set(1);
        }
    }

    private void set(int value) {
        if (!usable) {
            return;
        }
        try {
            if (channel.config().setOption(SO_RCVLOWAT, value)) {
                mark = value;
            } else {
                usable = false;
            }
        } catch (RuntimeException e) {
            usable = false; // a channel whose option fails is closing: nothing more is read from it
            LOG.debug("SO_RCVLOWAT refused on {} ({}); bulks are read as they arrive", channel, e.toString());
        }
    }
}
