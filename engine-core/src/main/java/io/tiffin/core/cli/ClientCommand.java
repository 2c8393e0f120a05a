package io.tiffin.core.cli;

import static io.tiffin.core.config.TiffinConfigKeys.MASTER_ADDRESS;

import io.tiffin.api.TiffinException;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.transport.Role;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * Base of the client commands ({@code put}, {@code get}, {@code rm}, {@code ls}, {@code stat}):
 * resolves the configuration (with {@code --master} as {@code master.address}), connects a
 * {@link TiffinClient}, runs the operation and closes the client.
 *
 * <p>Not thread-safe: one instance runs once.
 */
abstract class ClientCommand extends TiffinCommand {
    @Option(names = "--master", paramLabel = "HOST:PORT",
            description = "The master (master.address; default 127.0.0.1:50051, or as configured).")
    String master;

    /** The master address actually used, for messages; set once the configuration is resolved. */
    String masterAddress;

    /** Runs the operation with a connected client and returns the exit code. */
    abstract int run(TiffinClient client) throws Exception;

    /** The key this command works on, or null; named in errors whose message is only the key. */
    String key() {
        return null;
    }

    /**
     * The role whose token this command's connections present ({@code transport.client-token}, or
     * {@code transport.admin-token} for what only an admin may do); the client role unless overridden.
     */
    Role role() {
        return Role.CLIENT;
    }

    /** Checks the arguments before connecting; throws {@link picocli.CommandLine.ParameterException}. */
    void check() {
    }

    @Override
    public final Integer call() throws Exception {
        check();
        Map<String, Flag> f = flags();
        f.put(MASTER_ADDRESS.name(), new Flag("--master", master));
        TiffinConfig config = config(f);
        masterAddress = config.get(MASTER_ADDRESS).toString();
        TiffinClient.Options options = component(config, TiffinClient.Options.class);
        options = options.toBuilder().transport(options.transport().presentingAs(role())).build();
        try (TiffinClient client = TiffinClient.connect(options)) {
            int code = run(client);
            out().flush();
            return code;
        } catch (TiffinException e) {
            if (key() != null && TiffinCli.message(e).equals(key())) {
                throw new TiffinException(e.code(), "key " + key(), e);
            }
            throw e;
        }
    }
}
