package io.tiffin.bench.jmh;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the JMH benchmarks of one long master operation share (JMH applies a superclass's annotations to its
 * subclasses): single shots in milliseconds, 3 warm-up and 10 measured, one fork with a heap for millions of
 * objects, over a master of {@link #keys} objects.
 *
 * <p>Not thread-safe: one benchmark thread.
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3)
@Measurement(iterations = 10)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
        "-Xmx6g"})
@State(Scope.Benchmark)
public abstract class SingleShotMasterBench {
    @Param({"1000000"})
    public int keys;
}
