package io.tiffin.core.cli;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.TiffinClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code tiffin rm [--force] KEY}: removes an object.
 *
 * <p>Not thread-safe: one instance runs once.
 */
@Command(name = "rm", mixinStandardHelpOptions = true, description = "Removes the object stored under KEY.")
final class RmCommand extends ClientCommand {
    @Option(names = "--force", description = "Remove even while the object is being read (holds a read lease).")
    boolean force;

    @Parameters(index = "0", paramLabel = "KEY", description = "The key.")
    String key;

    @Override
    String key() {
        return key;
    }

    @Override
    int run(TiffinClient client) {
        try {
            client.remove(key, force);
        } catch (TiffinException e) {
            if (e.code() == ErrorCode.OBJECT_HAS_LEASE) {
                throw new TiffinException(e.code(), "key " + key + " holds a read lease from a recent get (a lease "
                        + "lasts master.lease-ttl, 10s by default); retry after it or pass --force", e);
            }
            throw e;
        }
        out().println("OK removed " + key);
        return 0;
    }
}
