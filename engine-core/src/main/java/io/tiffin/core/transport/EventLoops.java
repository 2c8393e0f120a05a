package io.tiffin.core.transport;

import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * Creates Netty event-loop groups (epoll when available and wanted, NIO otherwise) and picks the channel
 * classes that match a group. Thread-safe (stateless). Handles no buffers.
 */
public final class EventLoops {

    private EventLoops() {
    }

    /** Whether groups made with {@code useNative} will use epoll. */
    public static boolean usesEpoll(boolean useNative) {
        return useNative && Epoll.isAvailable();
    }

    /**
     * The event-loop thread count used when 0 is configured: half the available processors, at least 1.
     * Netty's own default (twice the processors) spreads connections over more threads than there are
     * cores; every request then wakes a thread of its own, and on small machines the context switches
     * cost more than the requests (measured: one master I/O thread on 2 cores served 10–25% more
     * synchronous requests per second than four).
     */
    public static int defaultThreads() {
        return Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
    }

    /**
     * The event-loop thread count of the master when 0 is configured: one per available processor. A master's
     * request costs its loop a few microseconds of its own work and several times that in the kernel (the reply's
     * loopback or network send, the caller's wake-up), with the callers writing and reading their own blocking
     * connections; one loop on 2 cores was busy 82% of its core while the machine stood 25% idle. Measured on the
     * 2-core test machine against half the processors (docs/BENCHMARKS.md, "One master event loop per
     * processor"): the medians of Put, Get and BatchGet 7–18% higher, BatchPut level.
     */
    public static int masterThreads() {
        return onePerProcessor();
    }

    /**
     * The event-loop thread count of a node's data plane when 0 is configured: one per available
     * processor. A loop sends one value at a time, and for large values that send is mostly the kernel
     * copying the bytes into the socket; with fewer loops than cores the other cores wait. Measured on
     * the 2-core test machine (docs/experiments/HISTORY.md, "One data-plane event loop per processor"): 1 MiB reads from two nodes with one loop each reached
     * 0.51–0.74× a plain blocking socket, with two loops each 0.76–0.80× (four alternating pairs).
     */
    public static int dataPlaneThreads() {
        return onePerProcessor();
    }

    private static int onePerProcessor() {
        return Math.max(1, Runtime.getRuntime().availableProcessors());
    }

    /**
     * A new event-loop group of {@code threads} daemon threads named {@code tiffin-<name>-<n>} (0 =
     * {@link #defaultThreads()}). The caller owns it and must shut it down.
     */
    public static EventLoopGroup newGroup(String name, int threads, boolean useNative) {
        if (threads < 0) {
            throw new IllegalArgumentException("thread count " + threads + " is negative; use 0 for the default");
        }
        DefaultThreadFactory threadFactory = new DefaultThreadFactory("tiffin-" + name, true);
        return new MultiThreadIoEventLoopGroup(threads == 0 ? defaultThreads() : threads, threadFactory,
                usesEpoll(useNative) ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    }

    /** Whether {@code group} runs epoll event loops. */
    public static boolean isEpoll(EventLoopGroup group) {
        return group instanceof IoEventLoopGroup io && io.isIoType(EpollIoHandler.class);
    }

    /** The client socket channel class that can be registered with {@code group}. */
    public static Class<? extends Channel> socketChannelClass(EventLoopGroup group) {
        return isEpoll(group) ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    /** The server socket channel class that can be registered with {@code group}. */
    public static Class<? extends ServerChannel> serverChannelClass(EventLoopGroup group) {
        return isEpoll(group) ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }
}
