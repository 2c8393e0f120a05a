package io.tiffin.core.gateway;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
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
    /** GETs answered on the event loop from a value the store had at hand ({@link ReadyGets}). */
    final LongAdder readyGets = new LongAdder();
    /** EXISTS of one key answered on the event loop ({@link ReadyGets}). */
    final LongAdder readyExists = new LongAdder();
    /** SETs stored on the event loop ({@link ReadySets}). */
    final LongAdder readySets = new LongAdder();
    /** Of those, replies sent from the store's memory without a copy ({@link LentValue}). */
    final LongAdder lentReplies = new LongAdder();
    /** Lent values not yet released: the store's memory held for replies being written. */
    final AtomicLong lentOpen = new AtomicLong();
    /** Connections closed because a lent reply was not taken before the store's hold on its bytes ended. */
    final LongAdder lentExpired = new LongAdder();
    /** Loans renewed for lent replies still being written when their lease was about to end ({@link LeaseGuard}). */
    final LongAdder lentRenewed = new LongAdder();
}
