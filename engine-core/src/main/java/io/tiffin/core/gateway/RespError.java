package io.tiffin.core.gateway;

import io.netty.buffer.ByteBuf;
import io.tiffin.api.TiffinException;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * A command's error reply, thrown by a command and written as {@code -<text>}: Redis's own error forms
 * ({@link #syntax()}, {@link #wrongArity}, ...) and Tiffin's codes ({@link #store}). The errors that echo a
 * client's bytes ({@link #unknownCommand}, {@link #unknownSubcommand}) are lines of bytes ({@link #raw()}), written
 * as they are, as Redis does. No stack trace is captured: these are answers, not failures of the gateway.
 *
 * <p>Thread-safe (immutable).
 */
final class RespError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * How much of a client's bytes Redis echoes in an error: a name's first 128 bytes, and of the arguments of an
     * unknown command as many as fit in 128 bytes with their quotes ({@code server.c} commandCheckExistence).
     */
    static final int ECHO_LIMIT = 128;

    /** The error line without the leading '-', one line; for {@link #raw} lines, one char per byte (ISO-8859-1). */
    private final String text;
    /** The line's bytes when it echoes a client's bytes as they came (they need not be UTF-8), else null. */
    private final byte[] raw;

    RespError(String text) {
        super(text, null, false, false);
        this.text = oneLine(text);
        this.raw = null;
    }

    /** A line of bytes, written as they are; the caller has replaced CR and LF already. */
    private RespError(byte[] raw) {
        super(new String(raw, StandardCharsets.ISO_8859_1), null, false, false);
        this.text = getMessage();
        this.raw = raw;
    }

    String text() {
        return text;
    }

    /**
     * The line's bytes when it echoes a client's bytes (see {@link Replies#error}), else null: the line is
     * {@link #text()}, in UTF-8.
     */
    byte[] raw() {
        return raw;
    }

    /** {@code text} with CR and LF as spaces, as Redis writes error replies. */
    static String oneLine(String text) {
        return text.indexOf('\r') < 0 && text.indexOf('\n') < 0 ? text : text.replace('\r', ' ').replace('\n', ' ');
    }

    static RespError err(String message) {
        return new RespError("ERR " + message);
    }

    static RespError syntax() {
        return err("syntax error");
    }

    static RespError notInteger() {
        return err("value is not an integer or out of range");
    }

    /** {@code name}: the command's name as Redis spells it in lower case, e.g. {@code get}, {@code client|setname}. */
    static RespError wrongArity(String name) {
        return err("wrong number of arguments for '" + name + "' command");
    }

    /**
     * Redis's answer to an unknown command, byte for byte as redis-server 7 writes it: the name's first
     * {@value #ECHO_LIMIT} bytes, then each argument quoted and followed by a space while the arguments written so
     * far take less than {@value #ECHO_LIMIT} bytes, the last one cut to what is left of them; the client's bytes as
     * they came (not decoded: they need not be UTF-8), each cut at its first NUL (Redis formats them as C strings),
     * CR and LF written as spaces (an error reply is one line).
     */
    static RespError unknownCommand(RespCommand c) {
        ByteArrayOutputStream line = new ByteArrayOutputStream(64 + 2 * ECHO_LIMIT);
        line.writeBytes("ERR unknown command '".getBytes(StandardCharsets.US_ASCII));
        echo(c.arg(0), ECHO_LIMIT, line);
        line.writeBytes("', with args beginning with: ".getBytes(StandardCharsets.US_ASCII));
        int echoed = 0;
        for (int i = 1; i < c.argc() && echoed < ECHO_LIMIT; i++) {
            line.write('\'');
            int n = echo(c.arg(i), ECHO_LIMIT - echoed, line);
            line.write('\'');
            line.write(' ');
            echoed += n + 3;
        }
        return new RespError(line.toByteArray());
    }

    /**
     * Redis's answer to an unknown subcommand: its first {@value #ECHO_LIMIT} bytes as they came (as for
     * {@link #unknownCommand}); {@code container}: the command in upper case, e.g. {@code CLIENT}.
     */
    static RespError unknownSubcommand(ByteBuf sub, String container) {
        ByteArrayOutputStream line = new ByteArrayOutputStream(64 + ECHO_LIMIT);
        line.writeBytes("ERR unknown subcommand '".getBytes(StandardCharsets.US_ASCII));
        echo(sub, ECHO_LIMIT, line);
        line.writeBytes(("'. Try " + container + " HELP.").getBytes(StandardCharsets.US_ASCII));
        return new RespError(line.toByteArray());
    }

    /**
     * Writes at most {@code max} bytes of {@code arg} (not consumed), up to its first NUL, with CR and LF as
     * spaces; returns how many it wrote.
     */
    private static int echo(ByteBuf arg, int max, ByteArrayOutputStream out) {
        int n = Math.min(arg.readableBytes(), max);
        for (int k = 0; k < n; k++) {
            byte b = arg.getByte(arg.readerIndex() + k);
            if (b == 0) {
                return k;
            }
            out.write(b == '\r' || b == '\n' ? ' ' : b);
        }
        return n;
    }

    static RespError noAuth() {
        return new RespError("NOAUTH Authentication required.");
    }

    static RespError wrongPass() {
        return new RespError("WRONGPASS invalid username-password pair or user is disabled.");
    }

    /** A failure of the store: {@code ERR <CODE> <what> (<message>)}. */
    static RespError store(TiffinException e, String what) {
        String m = e.getMessage() == null ? "" : e.getMessage();
        String repeated = e.code().name() + ": ";
        if (m.startsWith(repeated)) {
            m = m.substring(repeated.length());
        }
        if (m.isBlank()) {
            m = e.code().hint();
        }
        return err(e.code().name() + " " + io.tiffin.core.util.Shown.key(what) + ": " + m); // what names the key
    }
}
