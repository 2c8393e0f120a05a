package io.tiffin.core.cli;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.TiffinVersion;
import io.tiffin.core.config.ConfigException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.Set;
import org.apache.logging.log4j.LogManager;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code tiffin} command line: server commands ({@code standalone}, {@code master}, {@code node},
 * {@code gateway}), client commands ({@code put}, {@code get}, {@code rm}, {@code ls}, {@code stat},
 * {@code plugins}), and the commands that jars on the class path add ({@link CliExtension}: {@code bench}
 * from engine-bench).
 *
 * <p>Exit codes: 0 on success, 1 when an operation fails, 2 for usage and configuration errors. Every
 * failure prints {@code error: <CODE>: <message>} and {@code hint: <what to do>} on stderr, without a
 * stack trace (stack traces are logged at debug level).
 *
 * <p>Not thread-safe: one instance runs one command line, on one thread. {@link #run} creates a fresh
 * instance per call, so concurrent calls of {@link #run} are independent.
 */
@Command(name = "tiffin", mixinStandardHelpOptions = true, versionProvider = TiffinCli.Version.class,
        description = "Tiffin: a distributed KV-cache store.")
public final class TiffinCli implements Runnable {
    /**
     * The built-in commands, in the order the usage lists them. A command line that names one gets only that one:
     * picocli builds every command it is given (an instance, its options' models), and building all of them took
     * a one-shot command's JVM hundreds of caught exceptions and the classes of every server.
     */
    static final List<Class<?>> COMMANDS = List.of(StandaloneCommand.class, MasterCommand.class, NodeCommand.class,
            CoordinatorCommand.class, GatewayCommand.class, PutCommand.class, GetCommand.class, RmCommand.class,
            LsCommand.class, StatCommand.class, PluginsCommand.class, AotTrainingCommand.class);

    /** Exit code of a failed operation. */
    static final int EXIT_FAILURE = 1;
    /** Exit code of a usage or configuration error (picocli's own usage code). */
    static final int EXIT_USAGE = 2;

    /** Commands that run servers; they log at info level, every other command only warnings. */
    private static final Set<String> SERVER_COMMANDS = Set.of("standalone", "master", "node", "gateway");

    private final InputStream in;
    private final PrintStream out;
    private final PrintStream err;
    private final Map<String, String> env;

    @Spec
    private CommandSpec spec;

    private TiffinCli(InputStream in, PrintStream out, PrintStream err, Map<String, String> env) {
        this.in = in;
        this.out = out;
        this.err = err;
        this.env = env;
    }

    /** Entry point of the launcher ({@code bin/tiffin}). */
    public static void main(String[] args) {
        if (System.getProperty("tiffin.log.level") == null
                && (args.length == 0 || !SERVER_COMMANDS.contains(args[0]))) {
            System.setProperty("tiffin.log.level", "warn");
        }
        System.exit(run(System.in, System.out, System.err, System.getenv(), args));
    }

    /** Runs one command line reading standard input from {@link System#in}; returns the exit code. */
    static int run(PrintStream out, PrintStream err, Map<String, String> env, String... args) {
        return run(System.in, out, err, env, args);
    }

    /**
     * Runs one command line and returns its exit code.
     *
     * @param in standard input (for {@code put KEY -})
     * @param out standard output: results only ({@code get} writes raw bytes here)
     * @param err standard error: errors and hints
     * @param env the environment ({@code TIFFIN_*} configuration variables, {@code TIFFIN_CONF_DIR})
     * @param args the arguments after {@code tiffin}
     */
    public static int run(InputStream in, PrintStream out, PrintStream err, Map<String, String> env, String... args) {
        TiffinCli cli = new TiffinCli(Objects.requireNonNull(in, "in"), Objects.requireNonNull(out, "out"),
                Objects.requireNonNull(err, "err"), Map.copyOf(Objects.requireNonNull(env, "env")));
        CommandLine cmd = new CommandLine(cli, CommandFactory.INSTANCE);
        // a built-in command gets only itself, --version none (start-up time); help, completion and unknown names get
        // every command
        Class<?> named = args.length == 0 ? null : builtIn(args[0]);
        if (named != null) {
            cmd.addSubcommand(named);
        } else if (!(args.length == 1 && ("-V".equals(args[0]) || "--version".equals(args[0])))) {
            COMMANDS.forEach(cmd::addSubcommand);
            cmd.addSubcommand("generate-completion", new picocli.AutoComplete.GenerateCompletion());
            for (CliExtension extension : ServiceLoader.load(CliExtension.class, TiffinCli.class.getClassLoader())) {
                cmd.addSubcommand(extension.command());
            }
        }
        cmd.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
        cmd.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
        cmd.setParameterExceptionHandler(cli::onUsageError);
        cmd.setExecutionExceptionHandler((e, commandLine, parseResult) -> cli.onFailure(e));
        int code = cmd.execute(args);
        out.flush();
        err.flush();
        return code;
    }

    /** The built-in command named {@code name}, or null if none is. */
    static Class<?> builtIn(String name) {
        for (Class<?> c : COMMANDS) {
            if (c.getAnnotation(Command.class).name().equals(name)) {
                return c;
            }
        }
        return null;
    }

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "missing command (expected one of "
                + String.join(", ", spec.subcommands().keySet()) + ")");
    }

    InputStream in() {
        return in;
    }

    PrintStream out() {
        return out;
    }

    PrintStream err() {
        return err;
    }

    Map<String, String> env() {
        return env;
    }

    private int onUsageError(ParameterException e, String[] args) {
        LogManager.getLogger(TiffinCli.class).debug("usage error", e);
        CommandLine cmd = e.getCommandLine();
        err.println("error: " + ErrorCode.INVALID_PARAMS.name() + ": " + e.getMessage());
        if (cmd.getUnmatchedArguments().isEmpty() || !CommandLine.UnmatchedArgumentException.printSuggestions(e,
                new PrintWriter(err, true, StandardCharsets.UTF_8))) {
            err.println("hint: run '" + cmd.getCommandSpec().qualifiedName() + " --help' for the usage");
        }
        err.flush();
        return EXIT_USAGE;
    }

    /** Prints a failure as {@code error:} and {@code hint:} lines and returns the exit code. */
    int onFailure(Exception e) {
        LogManager.getLogger(TiffinCli.class).debug("command failed", e);
        if (e instanceof ConfigException c) {
            err.println("error: " + c.code().name() + ": " + c.getMessage());
            err.println("hint: fix the settings above: flags, -D/--set KEY=VALUE, TIFFIN_* environment variables or "
                    + "the --config file; every key is listed in docs/CONFIGURATION.md");
            err.flush();
            return EXIT_USAGE;
        }
        TiffinException t = e instanceof TiffinException te ? te : translate(e);
        err.println("error: " + t.code().name() + ": " + message(t));
        err.println("hint: " + t.code().hint());
        err.flush();
        return EXIT_FAILURE;
    }

    /**
     * The exception's message without a repeated {@code CODE: hint} (servers append it; the CLI prints
     * the code and the hint on their own), or the hint when nothing else is left.
     */
    static String message(TiffinException t) {
        String m = t.getMessage() == null ? "" : t.getMessage();
        String repeated = t.code().name() + ": " + t.code().hint();
        int i = m.indexOf(repeated);
        if (i >= 0) {
            m = (m.substring(0, i) + m.substring(i + repeated.length())).strip();
            while (m.endsWith(":")) {
                m = m.substring(0, m.length() - 1).strip();
            }
        }
        return m.isEmpty() ? t.code().hint() : m;
    }

    /** Maps an exception that is not a {@link TiffinException} to the closest code. */
    private static TiffinException translate(Exception e) {
        Throwable cause = e instanceof UncheckedIOException u ? u.getCause() : e;
        if (cause instanceof NoSuchFileException n) {
            return new TiffinException(ErrorCode.FILE_NOT_FOUND, "file " + n.getFile()
                    + " does not exist (expected: an existing file, or - for standard input)", e);
        }
        if (cause instanceof AccessDeniedException a) {
            return new TiffinException(ErrorCode.FILE_OPEN_FAIL, "file " + a.getFile()
                    + " cannot be opened: permission denied", e);
        }
        if (cause instanceof IOException io) {
            return new TiffinException(ErrorCode.FILE_READ_FAIL, "I/O failed: " + io.getMessage(), e);
        }
        return new TiffinException(ErrorCode.INTERNAL_ERROR, e.getClass().getSimpleName() + ": " + e.getMessage()
                + " (unexpected; run with TIFFIN_OPTS=-Dtiffin.log.level=debug to log the stack trace)", e);
    }

    /**
     * Supplies {@code --version}.
     *
     * <p>Thread-safe (stateless).
     */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            BuildInfo build = BuildInfo.load();
            return new String[] {"Tiffin " + TiffinVersion.VERSION, "build " + build.version() + ", commit "
                    + build.commit() + (build.time().isEmpty() ? "" : ", built " + build.time())};
        }
    }
}
