package io.tiffin.core.transport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * When to look at credential files again, so that they rotate without a restart: TLS files ({@link TlsContexts}) and
 * token files ({@link TokensFile}). A user of what the files hold calls {@link #poke} before each use (a new
 * connection, a handshake); once the interval has passed since the last look, the look runs on a background thread
 * shared by every instance ({@code tiffin-reload}) and the caller goes on with what it has, so an event loop never
 * waits for a disk. The look itself compares {@link #stampOf stamps} and reads the files only when they changed.
 *
 * <p>Thread-safe: the next look's time is claimed with a compare-and-set, so one look at most is queued per interval.
 */
final class FileReloads {
    /** Runs the looks of every instance; its one thread ends when idle. */
    private static final Executor LOOKS = new ThreadPoolExecutor(0, 1, 30, TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(), Thread.ofPlatform().daemon().name("tiffin-reload").factory());

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
