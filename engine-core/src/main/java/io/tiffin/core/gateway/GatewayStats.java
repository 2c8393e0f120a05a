package io.tiffin.core.gateway;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of one gateway for INFO: connections, commands, bytes, hits and misses.
 *
 * <p>Thread-safe.
 */
final class GatewayStats {
    final AtomicInteger connected = new AtomicInteger();
    final LongAdder connectionsReceived = new LongAdder();
    final LongAdder rejectedConnections = new LongAdder();
    final LongAdder commandsProcessed = new LongAdder();
    final LongAdder inputBytes = new LongAdder();
    final LongAdder outputBytes = new LongAdder();
    final LongAdder hits = new LongAdder();
    final LongAdder misses = new LongAdder();
    final LongAdder errorReplies = new LongAdder();
    final LongAdder protocolErrors = new LongAdder();
    final LongAdder idleClosed = new LongAdder();
    /** Batch calls of the {@link PutCombiner} and the keys they carried. */
    final LongAdder putBatches = new LongAdder();
    final LongAdder putBatchKeys = new LongAdder();
}
