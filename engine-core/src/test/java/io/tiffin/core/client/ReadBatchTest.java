package io.tiffin.core.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.core.util.CpuCaches;
import org.junit.jupiter.api.Test;

/** {@link ReadBatch}: whether a call's hot-cache hits copy around the CPU's caches. */
class ReadBatchTest {
    @Test
    void onlyDestinationsThatTogetherExceedTheLastLevelCacheAreTakenAsOutOfIt() {
        long llc = CpuCaches.lastLevelBytes();
        assertThat(batch(0).destinationsOutOfCaches()).isFalse();
        assertThat(batch(llc).destinationsOutOfCaches()).isFalse();
        assertThat(batch(llc + 1).destinationsOutOfCaches()).isTrue();
    }

    private static ReadBatch batch(long destinationBytes) {
        return new ReadBatch(null, null, null, null, null, null, 0, destinationBytes);
    }
}
