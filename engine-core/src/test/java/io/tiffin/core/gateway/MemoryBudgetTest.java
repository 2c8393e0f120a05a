package io.tiffin.core.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The gateway's memory budget: a reservation that does not fit waits while memory is released or replies are being
 * written, gives up only when neither happened for its whole wait, and a reservation by the holder of everything in
 * use always passes.
 */
class MemoryBudgetTest {
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void stopTimer() {
        timer.shutdownNow();
    }

    @Test
    void aReservationThatFitsIsGrantedAtOnceAndGivenBack() throws Exception {
        MemoryBudget budget = new MemoryBudget(100);
        assertThat(budget.reserve(60, 1, TimeUnit.MILLISECONDS)).isTrue();
        assertThat(budget.tryReserve(50, 0)).isFalse();
        assertThat(budget.tryReserve(50, 60)).as("the holder of all in use may go beyond the limit").isTrue();
        budget.release(110);
        assertThat(budget.used()).isZero();
        assertThatThrownBy(() -> budget.release(1)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("released twice");
    }

    @Test
    void aWaitWithNothingReleasedAndNothingWrittenGivesUp() throws Exception {
        MemoryBudget budget = new MemoryBudget(100);
        budget.forceReserve(80);
        long start = System.nanoTime();
        assertThat(budget.reserve(40, 200, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(200));
        assertThat(budget.used()).isEqualTo(80);
    }

    @Test
    void aWaitGoesOnWhileRepliesAreWrittenWithoutARelease() throws Exception {
        MemoryBudget budget = new MemoryBudget(100);
        budget.forceReserve(80); // a large reply that a slow client is reading
        // its bytes reach the socket every 50 ms for 1 s, five times the wait's 200 ms, before it is released
        var progress = timer.scheduleAtFixedRate(budget::writeProgressed, 50, 50, TimeUnit.MILLISECONDS);
        timer.schedule(() -> {
            progress.cancel(false);
            budget.release(80);
        }, 1000, TimeUnit.MILLISECONDS);
        long start = System.nanoTime();
        CompletableFuture<Boolean> waited = CompletableFuture.supplyAsync(() -> {
            try {
                return budget.reserve(40, 200, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(waited.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(900));
        assertThat(budget.used()).isEqualTo(40);
    }

    @Test
    void aWaitGivesUpOnceTheWritesStop() throws Exception {
        MemoryBudget budget = new MemoryBudget(100);
        budget.forceReserve(80);
        var progress = timer.scheduleAtFixedRate(budget::writeProgressed, 50, 50, TimeUnit.MILLISECONDS);
        timer.schedule(() -> progress.cancel(false), 500, TimeUnit.MILLISECONDS); // the client stops reading
        long start = System.nanoTime();
        assertThat(budget.reserve(40, 200, TimeUnit.MILLISECONDS)).isFalse();
        long waited = System.nanoTime() - start;
        assertThat(waited).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(600));
        assertThat(waited).isLessThan(TimeUnit.SECONDS.toNanos(5));
    }

    @Test
    void aReservationOfValuesThatCannotBeHadIsAClearError() {
        MemoryBudget budget = new MemoryBudget(1);
        budget.forceReserve(1);
        assertThat(Thread.currentThread().isInterrupted()).isFalse();
        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> budget.reserveForValues(10)).hasMessageContaining("the gateway is stopping");
        assertThat(Thread.interrupted()).isTrue();
    }
}
