package io.tiffin.core.client;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * The client's checks of a call's arguments, made before anything is sent: keys that cannot travel as
 * the text they are, and segments the call cannot use. Length and the master's other rules are checked
 * by the master.
 *
 * <p>Thread-safe (stateless).
 */
final class KeyChecks {
    private KeyChecks() {
    }

    /**
     * Refuses a key that cannot travel as the text it is: null, empty, or not valid Unicode (an unpaired
     * surrogate, which UTF-8 cannot encode: the wire would turn it into '?', and distinct keys would name
     * one object).
     *
     * @throws TiffinException {@code INVALID_KEY} saying what is wrong
     */
    static void checkKey(String key) {
        String problem = keyProblem(key);
        if (problem != null) {
            throw new TiffinException(ErrorCode.INVALID_KEY, problem);
        }
    }

    /**
     * For a batch: a null key or one that is not valid Unicode refuses the whole batch (naming its index),
     * since it cannot be sent; an empty key goes to the master, which answers it {@code INVALID_KEY} on its
     * own, like every other per-key rule.
     */
    static void checkKeys(List<String> keys) {
        if (keys == null) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "the list of keys is null");
        }
        for (int i = 0; i < keys.size(); i++) {
            String key = keys.get(i);
            String problem = key != null && key.isEmpty() ? null : keyProblem(key);
            if (problem != null) {
                throw new TiffinException(ErrorCode.INVALID_KEY, "key " + i + " of the batch: " + problem);
            }
        }
    }

    private static String keyProblem(String key) {
        if (key == null) {
            return "the key is null";
        }
        if (key.isEmpty()) {
            return "the key is empty";
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < key.length() && Character.isLowSurrogate(key.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return "the key has an unpaired surrogate (\\u" + String.format("%04X", (int) c) + ") at index " + i
                        + ": it is not valid Unicode text and cannot be sent as UTF-8";
            }
        }
        return null;
    }

    /**
     * Refuses, before any request, a segment the call cannot use: null, from a closed arena, or (as a
     * destination) read-only — the caller's mistake, not a transfer failure worth retrying.
     *
     * @throws TiffinException {@code INVALID_PARAMS} naming {@code what} and {@code which} (the message is
     *     built only then)
     */
    static void checkSegment(MemorySegment segment, boolean destination, String what, Object which) {
        String problem = segment == null ? "is null"
                : !segment.scope().isAlive() ? "belongs to an arena that is closed"
                : destination && segment.isReadOnly() ? "is read-only" : null;
        if (problem != null) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, what + which + " " + problem);
        }
    }

    /** Refuses a batch whose {@code what} (values, destinations) are not one per key. */
    static void checkSameCount(String call, List<String> keys, List<?> others, String what) {
        checkGiven(others, call + ": the list of " + what);
        if (keys.size() != others.size()) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, call + ": " + keys.size() + " keys but "
                    + others.size() + " " + what);
        }
    }

    /**
     * Refuses a null argument ({@code what} names it, e.g. "the put options") as {@code INVALID_PARAMS}, where a
     * NullPointerException from deeper down would say nothing a caller can act on.
     */
    static void checkGiven(Object argument, String what) {
        if (argument == null) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, what + " is null");
        }
    }
}
