package io.tiffin.core.master;

import io.tiffin.api.spi.allocation.SegmentView;
import io.tiffin.core.metrics.AdminEndpoint;
import java.util.List;
import java.util.Map;

/**
 * The admin HTTP endpoints of Mooncake's master that engines call, answered as Mooncake answers them:
 * <ul>
 *   <li>{@code /get_all_segments}: the mounted segments' names, one per line (empty while none is mounted). SGLang's
 *       Mooncake backend polls it at start-up ({@code MOONCAKE_CHECK_SERVER}) until the body is not empty.</li>
 *   <li>{@code /query_segment?segment=NAME}: the segment's name, then {@code Used(bytes): N} and {@code
 *       Capacity(bytes) : N} lines (404 for a segment not mounted; Mooncake answers 500).</li>
 * </ul>
 * A master that does not lead answers 503, as Mooncake's does while its service is not active.
 *
 * <p>Thread-safe (reads the service's thread-safe views).
 */
final class MooncakeAdminEndpoints {
    private static final String TEXT = "text/plain; version=0.0.4";

    private MooncakeAdminEndpoints() {
    }

    static Map<String, AdminEndpoint> of(MasterService service, Leadership leadership) {
        return Map.of(
                "/get_all_segments", new AdminEndpoint(TEXT, query -> {
                    if (!leadership.leads()) {
                        return notActive();
                    }
                    StringBuilder body = new StringBuilder();
                    for (SegmentView s : service.segmentViews()) {
                        body.append(s.name()).append('\n');
                    }
                    return AdminEndpoint.Answer.ok(body.toString());
                }),
                "/query_segment", new AdminEndpoint(TEXT, query -> {
                    if (!leadership.leads()) {
                        return notActive();
                    }
                    List<String> named = query.getOrDefault("segment", List.of());
                    String name = named.isEmpty() ? "" : named.get(0);
                    for (SegmentView s : service.segmentViews()) {
                        if (s.name().equals(name)) {
                            return AdminEndpoint.Answer.ok(name + "\nUsed(bytes): " + s.used()
                                    + "\nCapacity(bytes) : " + s.capacity() + "\n");
                        }
                    }
                    return new AdminEndpoint.Answer(404, name.isEmpty() ? "no segment named: use ?segment=NAME\n"
                            : "segment " + name + " is not mounted\n");
                }));
    }

    private static AdminEndpoint.Answer notActive() {
        return new AdminEndpoint.Answer(503, "this master does not lead: ask the leader\n");
    }
}
