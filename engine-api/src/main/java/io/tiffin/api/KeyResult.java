package io.tiffin.api;

import java.util.Objects;

/**
 * The outcome for one key of a batch call: either a value or an error code, never both.
 *
 * <p>Thread-safe if {@code T} is.
 *
 * @param key the key, as passed in
 * @param code {@link ErrorCode#OK} when {@code value} holds the result
 * @param value the result, or null when {@code code} is not OK (and for calls whose only result is
 *     the code)
 * @param <T> the per-key result type
 */
public record KeyResult<T>(String key, ErrorCode code, T value) {
    public KeyResult {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(code, "code");
    }

    public static <T> KeyResult<T> ok(String key, T value) {
        return new KeyResult<>(key, ErrorCode.OK, value);
    }

    public static <T> KeyResult<T> failed(String key, ErrorCode code) {
        if (code == ErrorCode.OK) {
            throw new IllegalArgumentException("a failed result needs a code other than OK");
        }
        return new KeyResult<>(key, code, null);
    }

    public boolean isOk() {
        return code == ErrorCode.OK;
    }

    /** Returns the value, or throws a {@link TiffinException} carrying the code. */
    public T valueOrThrow() {
        if (code != ErrorCode.OK) {
            throw new TiffinException(code, key + ": " + code.name() + ": " + code.hint());
        }
        return value;
    }
}
