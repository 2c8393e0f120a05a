package io.tiffin.core.cli;

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
        description = "Benchmarks against a running cluster.",
        // Register benchmark subcommand classes here.
        subcommands = {})
final class BenchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(), spec.subcommands().isEmpty()
                ? "'tiffin bench' needs a benchmark, but this build has none installed"
                : "missing benchmark (expected one of " + String.join(", ", spec.subcommands().keySet()) + ")");
    }
}
