package io.tiffin.core.gateway;

import io.tiffin.api.TiffinException;
import java.util.List;

/**
 * A command's error reply, thrown by a command and written as {@code -<text>}: Redis's own error forms
 * ({@link #syntax()}, {@link #wrongArity}, ...) and Tiffin's codes ({@link #store}). No stack trace is
 * captured: these are answers, not failures of the gateway.
 *
 * <p>Thread-safe (immutable).
 */
final class RespError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The error line without the leading '-', one line. */
    private final String text;

    RespError(String text) {
        super(text, null, false, false);
        this.text = oneLine(text);
    }

    String text() {
        return text;
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

    /** Redis's answer to an unknown command: its name and the start of its arguments. */
    static RespError unknownCommand(String name, List<String> args) {
        StringBuilder sb = new StringBuilder();
        for (String a : args) {
            int room = 128 - sb.length();
            if (room <= 0) {
                break;
            }
            sb.append('\'').append(a, 0, Math.min(a.length(), room)).append("' ");
        }
        return err("unknown command '" + clip(name) + "', with args beginning with: " + sb);
    }

    /** {@code container}: the command in upper case, e.g. {@code CLIENT}. */
    static RespError unknownSubcommand(String sub, String container) {
        return err("unknown subcommand '" + clip(sub) + "'. Try " + container + " HELP.");
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

    private static String clip(String s) {
        return s.length() <= 128 ? s : s.substring(0, 128);
    }
}
