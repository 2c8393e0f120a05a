package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.core.util.ManualTicker;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** The master when an allocation strategy (plugin code) throws in the middle of a placement. */
class PluginFailureTest {
    private static final long MiB = 1L << 20;

    @Test
    void aStrategyThatThrowsAfterPlacingFailsTheKeyAndLeaksNothing() {
        failsTheKeyAndLeaksNothing(() -> new IllegalStateException("a bug in the strategy"));
    }

    /** As a bug's exception, so an Error of a plugin whose dependency jar is missing or corrupt (it leaked for good). */
    @Test
    void aStrategyWhoseClassesAreMissingFailsTheKeyAndLeaksNothing() {
        failsTheKeyAndLeaksNothing(() -> new NoClassDefFoundError("p/Helper"));
    }

    private static void failsTheKeyAndLeaksNothing(java.util.function.Supplier<Throwable> failure) {
        AtomicBoolean broken = new AtomicBoolean(true);
        List<String> writers = new java.util.concurrent.CopyOnWriteArrayList<>();
        AllocationStrategy halfway = (request, segments, sink) -> {
            writers.add(request.writerNodeId());
            sink.tryPlace(segments.getFirst());
            if (broken.get()) {
                Throwable t = failure.get();
                if (t instanceof Error e) {
                    throw e;
                }
                throw (RuntimeException) t;
            }
        };
        MasterService master = new MasterService(MasterSettings.defaults(), halfway, new ManualTicker(), null);
        master.mountSegment("s", "n", "h:1", 64 * MiB);

        var batch = master.batchPutStart("c", List.of("a", "b"), List.of(MiB, MiB), PutOptions.DEFAULT);
        assertThat(batch).extracting(r -> r.code()).containsExactly(ErrorCode.INTERNAL_ERROR, ErrorCode.INTERNAL_ERROR);
        assertThat(master.putStart("c", "k", MiB, PutOptions.DEFAULT).code()).isEqualTo(ErrorCode.INTERNAL_ERROR);

        assertThat(master.usedBytes()).as("what the strategy placed before it threw").isZero();
        assertThat(master.keyCount()).isZero();
        assertThat(writers).as("a client is not a node: no writer node id").containsOnly("");
        broken.set(false);
        assertThat(master.putStart("c", "k", MiB, PutOptions.DEFAULT).code()).isEqualTo(ErrorCode.OK);
    }
}
