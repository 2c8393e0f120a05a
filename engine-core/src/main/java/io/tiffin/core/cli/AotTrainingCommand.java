package io.tiffin.core.cli;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code tiffin aot-training --master H:P} (hidden): the training run of the one-shot commands' ahead-of-time
 * cache. The distribution build starts a standalone from the tarball and runs this under
 * {@code -XX:AOTCacheOutput} (bin/tiffin with {@code TIFFIN_AOT_CACHE_OUTPUT}): one JVM runs {@code put} (file
 * and stdin), {@code get} (file and stdout), {@code ls}, {@code stat}, {@code rm}, help and version in process,
 * over the network, so the cache holds the classes and profiles those commands use. Fails when one of them fails.
 * Its objects stay in the training cluster, which the build stops.
 *
 * <p>Not thread-safe: one instance runs once.
 */
@Command(name = "aot-training", hidden = true, description = "Runs the client commands once (the start-up cache's training run).")
final class AotTrainingCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--master", required = true, paramLabel = "HOST:PORT", description = "A running master.")
    String master;

    @Override
    public Integer call() throws Exception {
        TiffinCli cli = (TiffinCli) spec.root().userObject();
        Path dir = Files.createTempDirectory("tiffin-aot-training");
        try {
            Path value = dir.resolve("value.bin");
            Files.write(value, new byte[256 * 1024]);
            String key = "tiffin-aot-training/" + ProcessHandle.current().pid();
            List<String[]> steps = new ArrayList<>();
            steps.add(new String[] {"put", "--master", master, key, value.toString()});
            steps.add(new String[] {"put", "--master", master, key + "/stdin", "-"});
            steps.add(new String[] {"get", "--master", master, key, dir.resolve("back.bin").toString()});
            steps.add(new String[] {"get", "--master", master, key + "/stdin"});
            steps.add(new String[] {"ls", "--master", master, "tiffin-aot-training/"});
            steps.add(new String[] {"stat", "--master", master});
            // a key no get read: a read leaves a lease that refuses rm for master.lease-ttl
            steps.add(new String[] {"put", "--master", master, key + "/unread", value.toString()});
            steps.add(new String[] {"rm", "--master", master, key + "/unread"});
            steps.add(new String[] {"--help"});
            steps.add(new String[] {"--version"});
            for (String[] step : steps) {
                ByteArrayOutputStream err = new ByteArrayOutputStream();
                InputStream in = new java.io.ByteArrayInputStream("a value from stdin".getBytes(StandardCharsets.UTF_8));
                int code = TiffinCli.run(in, new PrintStream(OutputStream.nullOutputStream()),
                        new PrintStream(err, true, StandardCharsets.UTF_8), cli.env(), step);
                if (code != 0) {
                    cli.err().println("aot-training: tiffin " + String.join(" ", step) + " failed (exit " + code + "): "
                            + err.toString(StandardCharsets.UTF_8).strip());
                    return TiffinCli.EXIT_FAILURE;
                }
            }
            // the launcher uses the cache only with the JDK build that made it
            cli.out().println("aot-training: " + steps.size() + " commands ran on JDK "
                    + System.getProperty("java.runtime.version"));
            return 0;
        } finally {
            try (var files = Files.list(dir)) {
                for (Path p : files.toList()) {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(dir);
        }
    }
}
