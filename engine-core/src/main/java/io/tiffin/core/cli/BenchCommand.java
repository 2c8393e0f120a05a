package io.tiffin.core.cli;

import io.tiffin.core.bench.BenchAllocCommand;
import io.tiffin.core.bench.BenchCacheSimCommand;
import io.tiffin.core.bench.BenchKvCommand;
import io.tiffin.core.bench.BenchMasterCommand;
import io.tiffin.core.bench.BenchPrefixCommand;
import io.tiffin.core.bench.BenchPromotionCommand;
import io.tiffin.core.bench.BenchHotCacheCommand;
import io.tiffin.core.bench.BenchStorageCommand;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code tiffin bench}: the parent of the benchmark commands. Each benchmark is a picocli command class
 * registered in {@code subcommands} below (e.g. {@code subcommands = {PutGetBench.class}}); its
 * configuration options come from the {@link ConfigOptions} mixin and it reaches the streams through
 * {@code spec.root().userObject()} (a {@link TiffinCli}), as the other commands do via
 * {@link TiffinCommand}.
 *
 * <p>Not thread-safe: one instance runs once.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Benchmarks: allocation strategies, the master, the data path, the SSD tier, the hot cache.",
        // Register benchmark subcommand classes here.
        subcommands = {BenchAllocCommand.class, BenchHotCacheCommand.class, BenchStorageCommand.class,
                BenchCacheSimCommand.class, BenchMasterCommand.class, BenchPrefixCommand.class, BenchKvCommand.class,
                BenchPromotionCommand.class})
final class BenchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(),
                "missing benchmark (expected one of " + String.join(", ", spec.subcommands().keySet()) + ")");
    }
}
