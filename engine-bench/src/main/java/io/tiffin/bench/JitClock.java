package io.tiffin.bench;

import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Total JIT compilation time of a JVM, in milliseconds: this JVM's from its {@link CompilationMXBean}, another
 * local JVM's (a master process) from its HotSpot performance counters ({@code jcmd PID PerfCounter.print}:
 * {@code java.ci.totalTime} ticks of {@code sun.os.hrt.frequency}). A bench reads it before and after its measured
 * window, so it can say how much of the window the compilers were busy.
 *
 * <p>Thread-safe: stateless.
 */
final class JitClock {
    private JitClock() {
    }

    /** This JVM's total compilation time so far, ms; -1 if the JVM does not report it. */
    static long self() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : -1;
    }

    /**
     * The total compilation time of the local JVM {@code pid} so far, ms; -1 when it cannot be read (not a
     * HotSpot JVM of this user, {@code -XX:-UsePerfData}, no {@code jcmd} beside this JVM's {@code java}).
     */
    static long of(long pid) {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        try {
            Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "PerfCounter.print")
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                return -1;
            }
            long ticks = counter(out, "java.ci.totalTime");
            long frequency = counter(out, "sun.os.hrt.frequency");
            return ticks < 0 || frequency <= 0 ? -1 : Math.round(ticks * 1000.0 / frequency);
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** The value of {@code name=VALUE} in {@code PerfCounter.print}'s output, -1 if absent. */
    static long counter(String perfCounters, String name) {
        for (String line : perfCounters.split("\n")) {
            if (line.startsWith(name + "=")) {
                try {
                    return Long.parseLong(line.substring(name.length() + 1).trim());
                } catch (NumberFormatException e) {
                    return -1;
                }
            }
        }
        return -1;
    }

    /** "X ms (Y% of the window)", or "unknown". */
    static String describe(long compileMs, double windowSeconds) {
        return compileMs < 0 ? "unknown"
                : compileMs + " ms (" + BenchSupport.fmt(100.0 * compileMs / (windowSeconds * 1000), 1) + "% of the window)";
    }
}
