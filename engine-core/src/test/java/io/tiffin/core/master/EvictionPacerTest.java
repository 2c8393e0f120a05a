package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link EvictionPacer} on a real single-thread scheduler: the idle and the busy pace, a wake-up that brings the
 * next check forward, and wake-ups that never start a second chain of checks. The bounds leave room for a slow
 * machine: a check comes late there, never early or twice.
 */
class EvictionPacerTest {
    private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
    private final AtomicInteger checks = new AtomicInteger();
    private final AtomicBoolean pressed = new AtomicBoolean();

    @AfterEach
    void stop() {
        executor.shutdownNow();
    }

    private EvictionPacer pacer(Duration interval) {
        return new EvictionPacer(executor, checks::incrementAndGet, pressed::get, interval);
    }

    private int checksDuring(Duration d) throws InterruptedException {
        int before = checks.get();
        Thread.sleep(d.toMillis());
        return checks.get() - before;
    }

    @Test
    void farFromTheWatermarkItChecksAtATenthOfThePace() throws InterruptedException {
        pacer(Duration.ofMillis(10)).start();
        int n = checksDuring(Duration.ofSeconds(1));
        assertThat(n).as("checks in a second at the idle pace of 100 ms").isBetween(1, 12);
    }

    @Test
    void nearTheWatermarkItChecksEveryInterval() throws InterruptedException {
        pressed.set(true);
        pacer(Duration.ofMillis(10)).start();
        int n = checksDuring(Duration.ofSeconds(1));
        assertThat(n).as("checks in a second at the busy pace of 10 ms").isBetween(20, 101);
        pressed.set(false);
        Thread.sleep(50); // the check pending at the busy pace
        assertThat(checksDuring(Duration.ofSeconds(1))).as("back at the idle pace").isBetween(1, 12);
    }

    @Test
    void aWakeUpBringsTheNextCheckForward() throws InterruptedException {
        EvictionPacer pacer = pacer(Duration.ofMillis(500)); // idle pace 5 s
        pacer.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (checks.get() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(checks).as("the first check, one interval after the start").hasValue(1);
        long woken = System.nanoTime();
        pacer.wake();
        while (checks.get() == 1 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(checks).hasValue(2);
        assertThat(Duration.ofNanos(System.nanoTime() - woken)).as("well before the idle pace's 5 s")
                .isLessThan(Duration.ofSeconds(3));
    }

    @Test
    void wakeUpsFromManyThreadsNeverStartASecondChain() throws InterruptedException {
        EvictionPacer pacer = pacer(Duration.ofMillis(10));
        pacer.start();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        Thread[] threads = new Thread[4];
        for (int t = 0; t < threads.length; t++) {
            threads[t] = Thread.ofPlatform().start(() -> {
                try {
                    for (int i = 0; i < 2_000; i++) {
                        pacer.wake();
                        if (i % 100 == 0) {
                            Thread.sleep(1);
                        }
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            });
        }
        for (Thread t : threads) {
            t.join();
        }
        assertThat(errors).isEmpty();
        Thread.sleep(150); // the check pending when the wake-ups stopped
        assertThat(checksDuring(Duration.ofSeconds(1))).as("one chain at the idle pace").isBetween(1, 12);
    }
}
