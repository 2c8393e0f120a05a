package io.tiffin.core.cli;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.transport.Role;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code tiffin rm [--force] KEY} removes an object; {@code tiffin rm --all [--force]} removes every object.
 * {@code --all} is the admin role's: the command then presents {@code transport.admin-token} (else the shared
 * {@code transport.auth-token}); a removal of KEY, with {@code --force} too, the client role's.
 *
 * <p>Not thread-safe: one instance runs once.
 */
@Command(name = "rm", mixinStandardHelpOptions = true,
        description = "Removes the object stored under KEY, or with --all every object (admin role).")
final class RmCommand extends ClientCommand {
    @Option(names = "--force", description = "Remove even while the object is being read (holds a read lease).")
    boolean force;

    @Option(names = "--all", description = "Remove every object (REMOVE_ALL); admin role: presents"
            + " transport.admin-token.")
    boolean all;

    @Parameters(index = "0", arity = "0..1", paramLabel = "KEY", description = "The key (not with --all).")
    String key;

    @Override
    String key() {
        return key;
    }

    @Override
    Role role() {
        return all ? Role.ADMIN : Role.CLIENT;
    }

    @Override
    void check() {
        if (all == (key != null)) {
            throw new CommandLine.ParameterException(spec.commandLine(), all ? "rm --all takes no KEY"
                    : "rm needs a KEY, or --all to remove every object");
        }
    }

    @Override
    int run(TiffinClient client) {
        if (all) {
            long n = client.removeAll(force);
            out().println("OK removed " + n + " object" + (n == 1 ? "" : "s"));
            return 0;
        }
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
