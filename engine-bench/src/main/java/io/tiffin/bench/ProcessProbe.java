package io.tiffin.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Measures a local JVM process from outside, as an operator would: resident memory ({@code VmRSS} of
 * {@code /proc/PID/status}), CPU time ({@code utime + stime} of {@code /proc/PID/stat}) and live heap (the live
 * objects' bytes counted by {@code jcmd PID GC.class_histogram} after the full GC it runs). Linux only.
 *
 * <p>Thread-safe: it holds only the process id and reads files and runs {@code jcmd} on each call.
 */
final class ProcessProbe {
    /** Clock ticks per second of {@code /proc/PID/stat} (USER_HZ): 100 on every Linux architecture Tiffin runs on. */
    static final long CLOCK_TICKS_PER_SECOND = 100;
    private static final Pattern HISTOGRAM_TOTAL = Pattern.compile("(?m)^Total\\s+\\d+\\s+(\\d+)\\s*$");

    private final long pid;

    ProcessProbe(long pid) {
        this.pid = pid;
    }

    long pid() {
        return pid;
    }

    /** Resident set size in bytes ({@code VmRSS}). */
    long rssBytes() {
        for (String line : read("status").split("\n")) {
            if (line.startsWith("VmRSS:")) {
                String[] parts = line.substring(6).strip().split("\\s+");
                return Long.parseLong(parts[0]) * 1024; // the kernel reports kB
            }
        }
        throw new IllegalStateException("no VmRSS in /proc/" + pid + "/status");
    }

    /** User + system CPU time consumed so far, in clock ticks. */
    long cpuTicks() {
        String stat = read("stat");
        // Fields after the command name, which is in parentheses and may hold spaces: state is field 3.
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).strip().split("\\s+");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime (field 14) + stime (field 15)
    }

    /**
     * User + system CPU ticks of each of its threads so far, by thread id; a thread's name is its {@code comm} (the
     * kernel keeps 15 characters of it). A thread that ended between listing and reading is left out.
     */
    Map<String, ThreadTicks> threadCpuTicks() {
        Map<String, ThreadTicks> out = new HashMap<>();
        Path tasks = Path.of("/proc", Long.toString(pid), "task");
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(tasks)) {
            for (Path task : dir) {
                String stat;
                try {
                    stat = Files.readString(task.resolve("stat"), StandardCharsets.UTF_8);
                } catch (IOException e) {
                    continue; // the thread ended
                }
                String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).strip().split("\\s+");
                out.put(task.getFileName().toString(),
                        new ThreadTicks(name, Long.parseLong(f[11]) + Long.parseLong(f[12])));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + tasks + " (is the process local and running?)", e);
        }
        return out;
    }

    /** One thread's name and CPU ticks. */
    record ThreadTicks(String name, long ticks) {
    }

    /**
     * CPU ticks between two {@link #threadCpuTicks} readings by kind of thread, largest first: "event loops" (the
     * master's Netty threads), "GC" (the collector's threads and the VM thread, which runs its pauses), "JIT" (the
     * compilers), "other". A thread that started in between counts from 0.
     */
    static Map<String, Long> ticksByKind(Map<String, ThreadTicks> before, Map<String, ThreadTicks> after) {
        Map<String, Long> kinds = new HashMap<>();
        after.forEach((tid, t) -> {
            ThreadTicks b = before.get(tid);
            long d = t.ticks() - (b == null || !b.name().equals(t.name()) ? 0 : b.ticks());
            kinds.merge(kindOf(t.name()), d, Long::sum);
        });
        Map<String, Long> sorted = new LinkedHashMap<>();
        kinds.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(e -> sorted.put(e.getKey(), e.getValue()));
        return sorted;
    }

    static String kindOf(String threadName) {
        if (threadName.startsWith("tiffin-master-i")) { // tiffin-master-io-N-M, cut to 15 characters
            return "event loops";
        }
        if (threadName.startsWith("GC Thread") || threadName.startsWith("G1 ") || threadName.startsWith("VM Thread")
                || threadName.startsWith("ZWorker") || threadName.startsWith("ZDriver")) {
            return "GC";
        }
        if (threadName.startsWith("C1 CompilerThre") || threadName.startsWith("C2 CompilerThre")) {
            return "JIT";
        }
        return "other";
    }

    /**
     * Bytes of live objects on the heap: the total of {@code jcmd PID GC.class_histogram}, which collects
     * (a full GC) and then counts the objects it finds reachable, whatever the collector keeps around them.
     */
    long heapLiveBytes() {
        return parseHistogramTotal(jcmd("GC.class_histogram"));
    }

    /** The bytes of the {@code Total <instances> <bytes>} line of a class histogram. */
    static long parseHistogramTotal(String histogram) {
        Matcher m = HISTOGRAM_TOTAL.matcher(histogram);
        if (!m.find()) {
            throw new IllegalStateException("no Total line in GC.class_histogram output: "
                    + histogram.substring(Math.max(0, histogram.length() - 500)));
        }
        return Long.parseLong(m.group(1));
    }

    private String jcmd(String command) {
        Path jdkJcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        List<String> cmd = new ArrayList<>(List.of(Files.isExecutable(jdkJcmd) ? jdkJcmd.toString() : "jcmd",
                Long.toString(pid), command));
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", cmd) + " failed: "
                        + new String(out, StandardCharsets.UTF_8));
            }
            return new String(out, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", cmd), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + String.join(" ", cmd), e);
        }
    }

    private String read(String file) {
        try {
            return Files.readString(Path.of("/proc", Long.toString(pid), file), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read /proc/" + pid + "/" + file + " (is the process local and"
                    + " running?)", e);
        }
    }
}
