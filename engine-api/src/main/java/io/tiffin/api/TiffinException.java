package io.tiffin.api;

import java.util.Objects;

/**
 * The one exception type of the Tiffin API: unchecked, carrying an {@link ErrorCode}. Every failure a
 * caller can act on surfaces as this exception; the code says what happened and {@link
 * ErrorCode#hint()} what to do.
 *
 * <p>Thread-safe (immutable once thrown).
 */
public class TiffinException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final ErrorCode code;

    public TiffinException(ErrorCode code, String message) {
        super(message);
        this.code = Objects.requireNonNull(code, "code");
    }

    public TiffinException(ErrorCode code, String message, Throwable cause) {
        super(message, cause);
        this.code = Objects.requireNonNull(code, "code");
    }

    public TiffinException(ErrorCode code) {
        this(code, code.name() + ": " + code.hint());
    }

    public ErrorCode code() {
        return code;
    }
}
