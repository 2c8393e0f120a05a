package io.tiffin.core.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Turns the bytes a client sends into {@link RespCommand}s, as Redis reads them: arrays of bulk strings
 * ({@code *<n>}, {@code $<len>}) and inline commands (a line of text, split by {@link InlineSplitter}),
 * with Redis's protocol errors ({@code Protocol error: invalid bulk length}, ...) and the gateway's
 * limits ({@code gateway.max-bulk-size}, {@code max-array-length}, {@code max-inline-length}).
 *
 * <p>Bytes are not copied more than needed: an argument that arrived whole is a slice of the socket's
 * buffer (a short one, up to {@link #COPY_UP_TO} bytes, a copy); a bulk string of at least
 * {@link #OWN_BUFFER_FROM} bytes that has not arrived whole gets a
 * buffer of its own, reserved in the {@link MemoryBudget} first, into which the rest of it is copied as
 * it arrives (one copy, whatever its size).
 *
 * <p>Between two commands the parser asks {@code pause} whether to stop (the connection has enough in
 * flight); the bytes already received stay here until {@link #resume}. A bulk string that does not fit
 * in the budget stops it the same way ({@link Outcome#WAIT_MEMORY}).
 *
 * <p>Not thread-safe: used on its connection's event loop only. Owns the bytes it holds and the
 * arguments of the command in progress; {@link #close()} frees them.
 */
final class RespParser {
    /** Bulk strings at least this long that have not arrived whole are copied into a buffer of their own. */
    static final int OWN_BUFFER_FROM = 16 * 1024;
    /**
     * Bulk strings at most this long (names, keys, options, small values) are copied into a small array of
     * their own, so they hold no socket buffer in memory while they wait to run.
     */
    static final int COPY_UP_TO = 1024;

    /** What a call of {@link #feed} or {@link #resume} ended with. Thread-safe (constants). */
    enum Outcome {
        /** Every complete command was parsed; more bytes are needed. */
        NEED_MORE,
        /** Stopped between two commands because the connection asked to pause; call {@link #resume}. */
        PAUSED,
        /** A bulk string does not fit in the memory budget yet; call {@link #resume} once memory is released. */
        WAIT_MEMORY,
        /** The client broke the protocol ({@link #error()}); the connection answers it and closes. */
        ERROR
    }

    private final ByteBufAllocator alloc;
    private final MemoryBudget budget;
    private final BooleanSupplier pause;
    /** Before authentication (Redis's limits): arguments of a command, bytes of a bulk string. */
    static final int UNAUTHENTICATED_ARRAY = 10;
    static final int UNAUTHENTICATED_BULK = 16 * 1024;
    private final BooleanSupplier authenticated;
    private final long maxBulk;
    private final int maxArray;
    private final int maxInline;

    /** Received bytes not parsed yet; null when none. */
    private ByteBuf cum;
    /** Arguments still expected by the command in progress; 0 when none is in progress. */
    private long expected;
    private List<ByteBuf> args;
    /** Bytes of the command in progress: what it holds plus {@link RespCommand#ARGUMENT_OVERHEAD} per argument. */
    private long weight;
    /** Of {@link #weight}, what is already reserved in the budget (own buffers of long bulk strings). */
    private long reserved;
    /** Length of the bulk string whose header was read; -1 when none. */
    private long bulkLength = -1;
    /** Own buffer of a long bulk string being received. */
    private ByteBuf bulk;
    /** The free part of {@link #bulk} last handed out for the socket to be read into; null when none. */
    private ByteBuf window;
    /** CRLF bytes after a long bulk string still to skip. */
    private int skip;
    private String error;
    private boolean closed;

    RespParser(ByteBufAllocator alloc, MemoryBudget budget, BooleanSupplier pause, GatewaySettings settings) {
        this(alloc, budget, pause, settings, () -> true);
    }

    /**
     * As {@link #RespParser(ByteBufAllocator, MemoryBudget, BooleanSupplier, GatewaySettings)}, for a connection that
     * has authenticated when {@code authenticated} says so: before, as Redis, a command of more than {@value
     * #UNAUTHENTICATED_ARRAY} arguments or a bulk string of more than {@value #UNAUTHENTICATED_BULK} bytes is a
     * protocol error, so a peer without the password cannot make the gateway hold large values.
     */
    RespParser(ByteBufAllocator alloc, MemoryBudget budget, BooleanSupplier pause, GatewaySettings settings,
               BooleanSupplier authenticated) {
        this.authenticated = authenticated;
        this.alloc = alloc;
        this.budget = budget;
        this.pause = pause;
        this.maxBulk = settings.maxBulkSize();
        this.maxArray = settings.maxArrayLength();
        this.maxInline = settings.maxInlineLength();
    }

    /** The protocol error found, as the error reply's text; null when none. */
    String error() {
        return error;
    }

    /**
     * The free part of the long value being received, for the socket to be read straight into (a buffer whose
     * bytes {@link #feed} then only counts); null when no long value is waiting for bytes or bytes are held
     * before it. The caller releases it if it is not fed.
     */
    ByteBuf receiveWindow() {
        if (bulk == null || error != null || closed || (cum != null && cum.isReadable()) || !bulk.isWritable()) {
            return null;
        }
        window = bulk.retainedSlice(bulk.writerIndex(), bulk.writableBytes()).clear();
        return window;
    }

    /**
     * Bytes of the long value being received that are still to come and would be read into its own buffer (as
     * {@link #receiveWindow} offers it); 0 when none.
     */
    long valueBytesToCome() {
        if (bulk == null || error != null || closed || (cum != null && cum.isReadable())) {
            return 0;
        }
        return bulk.writableBytes();
    }

    /** Parses {@code in} (taking it over) after the bytes held; complete commands go to {@code out}, in order. */
    Outcome feed(ByteBuf in, Consumer<RespCommand> out) {
        if (in == window) {
            window = null;
            if (bulk != null && error == null && !closed) {
                // read into the value's own buffer: its bytes are already in place
                bulk.writerIndex(bulk.writerIndex() + in.readableBytes());
                in.release();
                return parse(out);
            }
        }
        if (error != null || closed) {
            in.release();
            return error != null ? Outcome.ERROR : Outcome.NEED_MORE;
        }
        if (bulk != null && (cum == null || !cum.isReadable())) {
            // the middle of a long value: straight into its buffer, the socket's buffer is not kept
            int n = Math.min(in.readableBytes(), bulk.writableBytes());
            bulk.writeBytes(in, n);
        }
        append(in);
        return parse(out);
    }

    /** Goes on after {@link Outcome#PAUSED} or {@link Outcome#WAIT_MEMORY} with the bytes held. */
    Outcome resume(Consumer<RespCommand> out) {
        if (error != null) {
            return Outcome.ERROR;
        }
        return closed ? Outcome.NEED_MORE : parse(out);
    }

    private void append(ByteBuf in) {
        if (!in.isReadable()) {
            in.release();
            return;
        }
        if (cum == null || !cum.isReadable()) {
            if (cum != null) {
                cum.release();
            }
            cum = in;
            return;
        }
        int needed = in.readableBytes();
        if (cum.refCnt() == 1 && !cum.isReadOnly() && cum.maxWritableBytes() >= needed) {
            if (cum.writableBytes() < needed && cum.readerIndex() > cum.capacity() / 2) {
                cum.discardReadBytes();
            }
            cum.writeBytes(in);
        } else {
            // shared with arguments handed out, or full: a new buffer, at least twice what it holds
            ByteBuf merged = alloc.buffer(Math.max(256, 2 * (cum.readableBytes() + needed)));
            merged.writeBytes(cum).writeBytes(in);
            cum.release();
            cum = merged;
        }
        in.release();
    }

    private Outcome parse(Consumer<RespCommand> out) {
        while (true) {
            if (bulk != null) {
                int n = Math.min(readable(), bulk.writableBytes());
                bulk.writeBytes(cum, n);
                if (bulk.isWritable()) {
                    return Outcome.NEED_MORE;
                }
                args.add(bulk);
                bulk = null;
                bulkLength = -1;
                skip = 2;
            }
            if (skip > 0) {
                int n = Math.min(readable(), skip);
                if (n > 0) {
                    cum.skipBytes(n);
                }
                skip -= n;
                if (skip > 0) {
                    return Outcome.NEED_MORE;
                }
            }
            if (expected > 0 && args.size() == expected) {
                emit(out);
            }
            Outcome outcome;
            if (expected == 0) {
                if (readable() == 0) {
                    return Outcome.NEED_MORE;
                }
                if (pause.getAsBoolean()) {
                    return Outcome.PAUSED;
                }
                outcome = cum.getByte(cum.readerIndex()) == '*' ? arrayHeader() : inline(out);
            } else if (bulkLength < 0) {
                outcome = bulkHeader();
            } else {
                outcome = bulkBody();
            }
            if (outcome != null) {
                if (outcome == Outcome.ERROR) {
                    dropCommand();
                }
                return outcome;
            }
        }
    }

    private int readable() {
        return cum == null ? 0 : cum.readableBytes();
    }

    /** {@code *<n>}: the start of a command; null to go on. */
    private Outcome arrayHeader() {
        int start = cum.readerIndex();
        int cr = cum.indexOf(start, cum.writerIndex(), (byte) '\r');
        if (cr < 0 ? cum.readableBytes() > maxInline : cr - start > maxInline) {
            return fail("too big mbulk count string"); // complete or not: the same answer however the bytes came
        }
        if (cr < 0 || cr + 1 >= cum.writerIndex()) {
            return Outcome.NEED_MORE;
        }
        long n = parseLong(header(start + 1, cr));
        if (n == Long.MIN_VALUE || n > maxArray) {
            return fail("invalid multibulk length");
        }
        if (n > UNAUTHENTICATED_ARRAY && !authenticated.getAsBoolean()) {
            return fail("unauthenticated multibulk length");
        }
        cum.readerIndex(cr + 2);
        if (n > 0) {
            expected = n;
            args = new ArrayList<>((int) Math.min(n, 16));
            weight = cr + 2 - start;
            reserved = 0;
        }
        return null;
    }

    /** {@code $<len>}; null to go on. */
    private Outcome bulkHeader() {
        if (readable() == 0) {
            return Outcome.NEED_MORE;
        }
        int start = cum.readerIndex();
        int cr = cum.indexOf(start, cum.writerIndex(), (byte) '\r');
        if (cr < 0 ? cum.readableBytes() > maxInline : cr - start > maxInline) {
            return fail("too big bulk count string");
        }
        if (cr < 0 || cr + 1 >= cum.writerIndex()) {
            return Outcome.NEED_MORE;
        }
        byte[] line = header(start, cr);
        if (line.length == 0 || line[0] != '$') { // empty: the line is "\r\n" (the answer shows '\r' as a space)
            return fail("expected '$', got '" + (char) (cum.getByte(start) & 0xff) + "'");
        }
        long n = parseLong(line, 1);
        if (n < 0 || n > maxBulk) {
            return fail("invalid bulk length");
        }
        if (n > UNAUTHENTICATED_BULK && !authenticated.getAsBoolean()) {
            return fail("unauthenticated bulk length");
        }
        cum.readerIndex(cr + 2);
        weight += cr + 2 - start;
        bulkLength = n;
        return null;
    }

    /** The bytes of a bulk string whose header was read; null to go on. */
    private Outcome bulkBody() {
        if (readable() >= bulkLength + 2) {
            if (bulkLength <= COPY_UP_TO) {
                byte[] small = new byte[(int) bulkLength];
                cum.readBytes(small);
                args.add(small.length == 0 ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(small));
            } else {
                args.add(cum.readRetainedSlice((int) bulkLength));
            }
            cum.skipBytes(2);
            weight += bulkLength + 2 + RespCommand.ARGUMENT_OVERHEAD;
            bulkLength = -1;
            return null;
        }
        if (bulkLength < OWN_BUFFER_FROM) {
            return Outcome.NEED_MORE;
        }
        if (!budget.tryReserve(bulkLength, reserved)) {
            return Outcome.WAIT_MEMORY;
        }
        reserved += bulkLength;
        weight += bulkLength + 2 + RespCommand.ARGUMENT_OVERHEAD;
        bulk = ValueAllocator.POOL.directBuffer((int) bulkLength, (int) bulkLength);
        return null;
    }

    /** A line of text; null to go on. */
    private Outcome inline(Consumer<RespCommand> out) {
        int start = cum.readerIndex();
        int lf = cum.indexOf(start, cum.writerIndex(), (byte) '\n');
        if (lf < 0 ? cum.readableBytes() > maxInline : lf - start > maxInline) {
            // a whole line is held to the limit too, so the answer does not depend on how its bytes arrived
            return fail("too big inline request");
        }
        if (lf < 0) {
            return Outcome.NEED_MORE;
        }
        int end = lf > start && cum.getByte(lf - 1) == '\r' ? lf - 1 : lf;
        byte[] line = new byte[end - start];
        cum.getBytes(start, line);
        cum.readerIndex(lf + 1);
        List<byte[]> parts = InlineSplitter.split(line);
        if (parts == null) {
            return fail("unbalanced quotes in request");
        }
        if (!parts.isEmpty()) {
            args = new ArrayList<>(parts.size());
            for (byte[] p : parts) {
                args.add(Unpooled.wrappedBuffer(p));
            }
            expected = parts.size();
            weight = lf + 1 - start + (long) parts.size() * RespCommand.ARGUMENT_OVERHEAD;
            reserved = 0;
            emit(out);
        }
        return null;
    }

    private void emit(Consumer<RespCommand> out) {
        budget.forceReserve(weight - reserved);
        out.accept(new RespCommand(args, weight, budget));
        args = null;
        expected = 0;
        weight = 0;
        reserved = 0;
    }

    private Outcome fail(String what) {
        error = "ERR Protocol error: " + what;
        return Outcome.ERROR;
    }

    /** Frees the command in progress (a protocol error or the connection's end). */
    private void dropCommand() {
        if (args != null) {
            args.forEach(ByteBuf::release);
            args = null;
        }
        if (bulk != null) {
            bulk.release();
            bulk = null;
        }
        budget.release(reserved);
        reserved = 0;
        expected = 0;
        weight = 0;
        bulkLength = -1;
    }

    /** Frees everything held; idempotent. */
    void close() {
        if (closed) {
            return;
        }
        closed = true;
        dropCommand();
        if (cum != null) {
            cum.release();
            cum = null;
        }
    }

    /**
     * Bytes {@code [from, to)} of the held bytes, a header line, in one read of the buffer; a line longer than
     * any integer is cut at 25 bytes (it parses as invalid all the same).
     */
    private byte[] header(int from, int to) {
        byte[] line = new byte[Math.max(0, Math.min(to - from, 25))];
        cum.getBytes(from, line);
        return line;
    }

    /** {@link #parseLong(byte[], int)} from the start. */
    static long parseLong(byte[] digits) {
        return parseLong(digits, 0);
    }

    /**
     * The integer in {@code line} from {@code from} to its end, as Redis's {@code string2ll} reads it (an
     * optional '-', digits, no leading zero, no '+' or blanks, no overflow), or {@link Long#MIN_VALUE} when it
     * is not one.
     */
    static long parseLong(byte[] line, int from) {
        int to = line.length;
        int len = to - from;
        if (len <= 0 || len > 20) {
            return Long.MIN_VALUE;
        }
        int i = from;
        boolean negative = line[i] == '-';
        if (negative) {
            i++;
            if (i == to) {
                return Long.MIN_VALUE;
            }
        }
        if (line[i] == '0' && (to - i > 1 || negative)) {
            return Long.MIN_VALUE;
        }
        long v = 0;
        for (; i < to; i++) {
            int d = line[i] - '0';
            if (d < 0 || d > 9 || v > (Long.MAX_VALUE - d) / 10) {
                return Long.MIN_VALUE;
            }
            v = v * 10 + d;
        }
        return negative ? -v : v;
    }
}
