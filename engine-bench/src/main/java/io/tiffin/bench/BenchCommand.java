package io.tiffin.bench;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code tiffin bench}: the parent of the benchmark commands, added to {@code tiffin} by
 * {@link BenchCliExtension}. Each benchmark is a picocli command class registered in {@code subcommands}
 * below; it prints its results on standard output.
 *
 * <p>Not thread-safe: one instance runs once.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Benchmarks: allocation strategies, the master, the data path, the SSD tier, the hot cache,"
                + " the Redis gateway.",
        // Register benchmark subcommand classes here.
        subcommands = {BenchAllocCommand.class, BenchHotCacheCommand.class, BenchStorageCommand.class,
                BenchCacheSimCommand.class, BenchMasterCommand.class, BenchPrefixCommand.class, BenchKvCommand.class,
                BenchPromotionCommand.class, BenchFailoverCommand.class, BenchRespCommand.class, BenchScaleCommand.class})
public final class BenchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(),
                "missing benchmark (expected one of " + String.join(", ", spec.subcommands().keySet()) + ")");
    }
}
