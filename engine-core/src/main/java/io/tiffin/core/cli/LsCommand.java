package io.tiffin.core.cli;

import io.tiffin.core.client.KeyListing;
import io.tiffin.core.client.TiffinClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/**
 * {@code tiffin ls [PREFIX]}: lists keys and sizes, sorted, one {@code KEY<TAB>SIZE} line each (size
 * in bytes, for scripts). When more keys match than {@code --limit}, a note goes to standard error.
 *
 * <p>Not thread-safe: one instance runs once.
 */
@Command(name = "ls", mixinStandardHelpOptions = true,
        description = "Lists the keys starting with PREFIX (all keys without it), sorted, as KEY<TAB>SIZE in bytes.")
final class LsCommand extends ClientCommand {
    /** The largest {@code --limit} the master honours. */
    static final int MAX_LIMIT = 100_000;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "1000",
            description = "At most N keys (1.." + MAX_LIMIT + "; default ${DEFAULT-VALUE}).")
    int limit;

    @Parameters(index = "0", paramLabel = "PREFIX", arity = "0..1", defaultValue = "",
            description = "Key prefix; empty lists every key.")
    String prefix;

    @Override
    void check() {
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new ParameterException(spec.commandLine(), "--limit = " + limit + " (expected: 1.." + MAX_LIMIT + ")");
        }
    }

    @Override
    int run(TiffinClient client) {
        KeyListing listing = client.listKeys(prefix, limit);
        StringBuilder sb = new StringBuilder();
        for (KeyListing.KeySize k : listing.keys()) {
            sb.append(k.key()).append('\t').append(k.size()).append('\n');
        }
        out().print(sb);
        out().flush();
        if (listing.truncated()) {
            cli().err().println("(listed the first " + listing.keys().size() + " keys; more exist: raise --limit "
                    + "(at most " + MAX_LIMIT + ") or give a longer PREFIX)");
        }
        return 0;
    }
}
