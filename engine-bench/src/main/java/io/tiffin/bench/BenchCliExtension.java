package io.tiffin.bench;

import io.tiffin.core.cli.CliExtension;

/**
 * Adds {@code tiffin bench} to the command line when this jar is on the class path.
 *
 * <p>Thread-safe (stateless).
 */
public final class BenchCliExtension implements CliExtension {
    @Override
    public Object command() {
        return new BenchCommand();
    }
}
