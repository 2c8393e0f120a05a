package io.tiffin.core.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.tiffin.core.transport.ReceiveLowWater;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * One client connection on its event loop: parses what it reads ({@link RespParser}), hands each read's
 * commands to its {@link CommandRunner}, and stops reading while the connection has enough in flight:
 * requests received but not answered above {@code gateway.max-pipeline-bytes}, replies not taken above
 * {@code gateway.write-buffer}, or the gateway's memory ({@code gateway.max-memory}) full. It reads again
 * once its commands have run, its client has taken its replies, or memory was released.
 *
 * <p>Also enforces {@code gateway.max-connections} (one more is told {@code -ERR max number of clients
 * reached} and closed) and {@code gateway.idle-timeout} (only while none of its commands runs).
 *
 * <p>Thread-safe as Netty uses it: the handler methods run on the channel's event loop;
 * {@link #commandsDone} and {@link #repliesWritten} may be called from any thread and only schedule work
 * there. Owns its parser and runner, which it closes with the channel.
 */
final class RespConnection extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LogManager.getLogger(RespConnection.class);

    private final GatewayContext gw;
    private final CommandTable table;
    private final Executor executor;
    private final java.util.function.Function<io.netty.channel.EventLoop, LoopBatch> loopBatches;
    /** Bytes of commands received and not yet answered. */
    private final AtomicLong inFlight = new AtomicLong();
    private final AtomicBoolean resumeScheduled = new AtomicBoolean();
    private final List<RespCommand> batch = new ArrayList<>();

    private ChannelHandlerContext ctx;
    private RespParser parser;
    private CommandRunner runner;
    private Session session;
    private LoopBatch loopBatch;
    private ReadyGets readyGets;
    private ReadySets readySets;
    /** The socket's low-water mark while a long value arrives into its own buffer (plaintext only); else null. */
    private ReceiveLowWater lowWater;
    /** The socket's bytes are RESP (no TLS): long values are read into their own buffers. Set before any read. */
    private boolean plaintext;
    private boolean counted;
    private boolean rejected;
    /** Reading stopped (flow control or a protocol error). Written on the event loop. */
    private volatile boolean paused;
    private boolean failed;

    RespConnection(GatewayContext gw, CommandTable table, Executor executor,
                   java.util.function.Function<io.netty.channel.EventLoop, LoopBatch> loopBatches) {
        this.gw = gw;
        this.table = table;
        this.executor = executor;
        this.loopBatches = loopBatches;
    }

    @Override
    public void channelActive(ChannelHandlerContext context) {
        this.ctx = context;
        counted = true;
        gw.stats.connectionsReceived.increment();
        if (gw.stats.connected.incrementAndGet() > gw.settings.maxConnections()) {
            rejected = true;
            gw.stats.rejectedConnections.increment();
            context.writeAndFlush(Replies.error(RespError.err("max number of clients reached")))
                    .addListener(ChannelFutureListener.CLOSE);
            return;
        }
        session = new Session(gw.nextClientId(), gw.settings.requiresPassword(), gw.store, gw.budget);
        loopBatch = loopBatches.apply(context.channel().eventLoop());
        parser = new RespParser(context.alloc(), gw.budget, this::shouldPause, gw.settings, session::authenticated);
        runner = new CommandRunner(gw, table, session, context.channel(), executor, this);
        readyGets = new ReadyGets(gw, runner, session, context.alloc());
        readySets = new ReadySets(gw, runner);
        context.fireChannelActive();
    }

    /** The connection is plaintext: long values are read from the socket into their own buffers. */
    void receiveValuesInPlace() {
        plaintext = true;
    }

    /** The free part of the long value being received, for the socket to be read into; null when none. */
    ByteBuf receiveWindow() {
        return parser == null || rejected ? null : parser.receiveWindow();
    }

    @Override
    public void channelRead(ChannelHandlerContext context, Object msg) {
        if (!(msg instanceof ByteBuf in) || rejected || parser == null) {
            ReferenceCountUtil.release(msg);
            return;
        }
        gw.stats.inputBytes.add(in.readableBytes());
        after(parser.feed(in, this::accept));
        followLowWater();
    }

    /**
     * After each read: while a long value arrives into its own buffer, the socket's low-water mark is the value's
     * bytes still to come, so the next wake-up reads them at once; else back to the kernel's default (plaintext
     * only: with TLS the socket's bytes are records).
     */
    private void followLowWater() {
        long toCome = parser == null || rejected ? 0 : parser.valueBytesToCome();
        if (toCome > 0 && plaintext) {
            if (lowWater == null) {
                lowWater = new ReceiveLowWater(ctx.channel());
            }
            lowWater.await(toCome);
        } else if (lowWater != null) {
            lowWater.reset();
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext context) {
        submit();
        context.fireChannelReadComplete();
    }

    private void accept(RespCommand c) {
        inFlight.addAndGet(c.weight());
        batch.add(c);
    }

    /**
     * Answers the leading GETs whose values the store has at hand ({@link ReadyGets}) or stores the leading SETs it
     * takes without waiting ({@link ReadySets}), and hands the rest of the commands read to the loop's batch (plain
     * GETs or SETs of an idle connection) or to the runner.
     */
    private void submit() {
        if (!batch.isEmpty()) {
            int answered = failed ? 0 : readyGets.serve(batch);
            if (answered == 0 && !failed) {
                answered = readySets.serve(batch);
            }
            List<RespCommand> rest = answered == 0 ? batch : batch.subList(answered, batch.size());
            if (!rest.isEmpty() && (failed || !loopBatch.offer(runner, session, rest))) {
                runner.submit(List.copyOf(rest));
            }
            batch.clear();
        }
    }

    /** Whether to stop before the next command: enough in flight on this connection or in the gateway. */
    private boolean shouldPause() {
        return inFlight.get() >= gw.settings.maxPipelineBytes() || runner.unwritten() >= gw.settings.writeBuffer()
                || gw.budget.exhausted();
    }

    private void after(RespParser.Outcome outcome) {
        switch (outcome) {
            case NEED_MORE -> {
            }
            case PAUSED -> {
                pause();
                scheduleResume(); // what made it pause may have passed already; resume() waits if not
            }
            case WAIT_MEMORY -> {
                pause();
                gw.budget.whenReleased(this::scheduleResume);
            }
            case ERROR -> {
                // reading goes on: what follows is thrown away, so the error reply is not lost to a reset
                failed = true;
                submit();
                gw.stats.protocolErrors.increment();
                runner.fail(parser.error());
            }
        }
    }

    private void pause() {
        if (!paused) {
            paused = true;
            ctx.channel().config().setAutoRead(false);
        }
    }

    /** Some commands have run ({@code bytes} of them): maybe read again. Any thread. */
    void commandsDone(long bytes) {
        inFlight.addAndGet(-bytes);
        if (paused) {
            scheduleResume();
        }
    }

    /** Replies were written: maybe read again. Any thread. */
    void repliesWritten() {
        if (paused) {
            scheduleResume();
        }
    }

    private void scheduleResume() {
        if (paused && !failed && resumeScheduled.compareAndSet(false, true)) {
            ctx.executor().execute(this::resume);
        }
    }

    /** On the event loop: goes on with the bytes held and reads again, unless it must still wait. */
    private void resume() {
        resumeScheduled.set(false);
        if (!paused || failed || !ctx.channel().isActive()) {
            return;
        }
        if (inFlight.get() >= gw.settings.maxPipelineBytes() / 2
                || runner.unwritten() >= gw.settings.writeBuffer() / 2) {
            return; // called again as commands finish and replies go out
        }
        if (gw.budget.exhausted()) {
            gw.budget.whenReleased(this::scheduleResume);
            return;
        }
        RespParser.Outcome outcome = parser.resume(this::accept);
        submit();
        if (outcome == RespParser.Outcome.NEED_MORE) {
            paused = false;
            ctx.channel().config().setAutoRead(true);
            ctx.read();
        } else {
            after(outcome);
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext context, Object evt) {
        if (evt instanceof IdleStateEvent) {
            if (runner != null && !runner.busy() && runner.unwritten() == 0) {
                gw.stats.idleClosed.increment();
                LOG.debug("Closing idle RESP connection from {}", context.channel().remoteAddress());
                context.close();
            }
            return;
        }
        context.fireUserEventTriggered(evt);
    }

    @Override
    public void channelInactive(ChannelHandlerContext context) {
        if (counted) {
            gw.stats.connected.decrementAndGet();
            counted = false;
        }
        batch.forEach(RespCommand::release);
        batch.clear();
        if (parser != null) {
            parser.close();
        }
        if (runner != null) {
            runner.close();
        }
        if (session != null) {
            session.close();
        }
        context.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext context, Throwable cause) {
        if (cause instanceof IOException) {
            LOG.debug("RESP connection from {} failed: {}", context.channel().remoteAddress(), cause.toString());
        } else {
            LOG.warn("Closing RESP connection from {} after an error", context.channel().remoteAddress(), cause);
        }
        context.close();
    }
}
