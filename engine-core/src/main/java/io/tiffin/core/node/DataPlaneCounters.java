package io.tiffin.core.node;

import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.RequestHandler;
import java.util.concurrent.atomic.LongAdder;

/**
 * What a node's data plane has served since start: DATA_READs and DATA_WRITEs answered, their bytes, and requests of
 * either refused (no valid grant, out of the segment, a stale mount epoch, a write whose bytes do not match), for
 * {@link NodeMetrics}. The handlers count on the event loop: an add to a {@link LongAdder} each, no lock.
 *
 * <p>Thread-safe.
 */
final class DataPlaneCounters {
    final LongAdder reads = new LongAdder();
    final LongAdder readBytes = new LongAdder();
    final LongAdder writes = new LongAdder();
    final LongAdder writeBytes = new LongAdder();
    final LongAdder refused = new LongAdder();

    /** {@code handler}, with each request it refuses (throws a {@link TiffinException} for) counted. */
    RequestHandler countingRefusals(RequestHandler handler) {
        return (request, responder) -> {
            try {
                handler.handle(request, responder);
            } catch (TiffinException e) {
                refused.increment();
                throw e;
            }
        };
    }
}
