package io.tiffin.core.metrics;

import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * An admin HTTP endpoint beyond {@code /metrics}, {@code /health} and {@code /api/status}: a GET (or HEAD) of its path
 * is answered by {@code answer} from the request's query parameters, behind the same {@link AdminAccess} rule.
 *
 * <p>Thread-safe (immutable) when {@code answer} is.
 *
 * @param contentType the {@code Content-Type} of its answers
 * @param answer the answer to the query parameters (name → values, decoded)
 */
public record AdminEndpoint(String contentType, Function<Map<String, List<String>>, Answer> answer) {
    /**
     * One answer: an HTTP status code and its text.
     *
     * <p>Thread-safe (immutable).
     */
    public record Answer(int status, String body) {
        /** 200 with {@code body}. */
        public static Answer ok(String body) {
            return new Answer(200, body);
        }
    }
}
