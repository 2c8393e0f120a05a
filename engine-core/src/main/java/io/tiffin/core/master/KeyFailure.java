package io.tiffin.core.master;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;

/**
 * An expected per-key outcome (not found, exists, leased...) travelling to the frame status of a master call. It has
 * no stack trace: misses are ordinary traffic and filling one in would cost more than the lookup.
 *
 * <p>Thread-safe (immutable once thrown).
 */
final class KeyFailure extends TiffinException {
    private static final long serialVersionUID = 1L;

    KeyFailure(ErrorCode code, String message) {
        super(code, message);
    }

    /** {@code code} for {@code key}: the key (cut if long), the code's name and its hint. */
    static KeyFailure of(ErrorCode code, String key) {
        return new KeyFailure(code, io.tiffin.core.util.Shown.key(key) + ": " + code.name() + ": " + code.hint());
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
        return this;
    }
}
