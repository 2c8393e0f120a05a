package io.tiffin.core.transport;

import java.io.IOException;
import java.lang.ref.WeakReference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * When to look at credential files again, so that they rotate without a restart: TLS files ({@link TlsContexts}) and
 * token files ({@link TokensFile}). The looks run on one background thread shared by every instance ({@code
 * tiffin-reload}), so an event loop never waits for a disk; a look compares {@link #stampOf stamps} and reads the
 * files only when they changed. Two ways:
 * <ul>
 *   <li>{@link #poke}: a user of what the files hold pokes before each use (a new connection); once the interval has
 *       passed since the last look, a look is queued and the caller goes on with what it has. TLS: a certificate
 *       read a moment late is still valid.</li>
 *   <li>{@link #watch}: a look every interval, whether connections come or not. Tokens: a server must know a new
 *       token within the interval (clients move to it after that long), and stop accepting a dropped one.</li>
 * </ul>
 *
 * <p>Thread-safe: the next look's time is claimed with a compare-and-set, so one look at most is queued per interval.
 */
final class FileReloads {
    /** Runs the looks of every instance; its one daemon thread lives as long as the JVM. */
    private static final ScheduledThreadPoolExecutor LOOKS = new ScheduledThreadPoolExecutor(1,
            Thread.ofPlatform().daemon().name("tiffin-reload").factory());
    private static final Logger LOG = LogManager.getLogger(FileReloads.class);

    static {
        LOOKS.setRemoveOnCancelPolicy(true); // a watch whose owner is gone leaves the queue
    }

    private final long everyNanos;
    private final AtomicLong nextLookNanos;
    private final Runnable look;

    /** Runs {@code look} at most once per {@code interval} when poked; a zero interval never runs it. */
    FileReloads(Duration interval, Runnable look) {
        this.everyNanos = interval.toNanos();
        this.nextLookNanos = new AtomicLong(System.nanoTime() + everyNanos);
        this.look = look;
    }

    /** Queues a look if the interval has passed since the last one; never waits. */
    void poke() {
        if (everyNanos <= 0) {
            return;
        }
        long next = nextLookNanos.get();
        long now = System.nanoTime();
        if (now - next >= 0 && nextLookNanos.compareAndSet(next, now + everyNanos)) {
            LOOKS.execute(look);
        }
    }

    /**
     * Runs {@code look} on {@code owner} every {@code interval} (zero: never) until the owner is collected: the task
     * holds it weakly, so an owner nobody uses any more (a closed server's credentials) is not kept alive by it.
     */
    static <T> void watch(T owner, Duration interval, Consumer<T> look) {
        long every = interval.toNanos();
        if (every <= 0) {
            return;
        }
        WeakReference<T> ref = new WeakReference<>(owner);
        AtomicReference<ScheduledFuture<?>> task = new AtomicReference<>();
        task.set(LOOKS.scheduleWithFixedDelay(() -> {
            T o = ref.get();
            if (o == null) {
                if (task.get() != null) {
                    task.get().cancel(false);
                }
                return;
            }
            try {
                look.accept(o);
            } catch (RuntimeException e) { // a periodic task that throws is never run again: keep watching
                LOG.warn("Looking at {} again failed; the next look is in {}", o, interval, e);
            }
        }, every, every, TimeUnit.NANOSECONDS));
    }

    /**
     * What identifies the contents of {@code file} without reading it: its path, file key (inode), size and
     * modification time, or why it cannot be looked at. Links are followed, so a link moved to a new file (as
     * Kubernetes updates a mounted secret) counts as a change.
     */
    static String stampOf(Path file) {
        try {
            BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
            return file + " " + a.fileKey() + " " + a.size() + " " + a.lastModifiedTime().toMillis();
        } catch (IOException e) {
            return file + " unreadable: " + e;
        }
    }
}
