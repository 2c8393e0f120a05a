package io.tiffin.core.config;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.util.List;

/**
 * The configuration is invalid. Carries every problem found, one per line of the message, so a user
 * fixes them all in one go. Code {@link ErrorCode#INVALID_PARAMS}.
 *
 * <p>Thread-safe (immutable).
 */
public final class ConfigException extends TiffinException {
    private static final long serialVersionUID = 1L;

    private final List<String> problems;

    /** @param problems one or more problems, each naming the key, value, source and what is expected */
    public ConfigException(List<String> problems) {
        super(ErrorCode.INVALID_PARAMS, message(problems));
        this.problems = List.copyOf(problems);
    }

    private static String message(List<String> problems) {
        if (problems.isEmpty()) {
            throw new IllegalArgumentException("problems is empty (expected: at least one problem)");
        }
        if (problems.size() == 1) {
            return "invalid configuration: " + problems.getFirst();
        }
        return "invalid configuration (" + problems.size() + " problems):\n  " + String.join("\n  ", problems);
    }

    /** The problems, in the order found. */
    public List<String> problems() {
        return problems;
    }
}
