package io.tiffin.core.cli;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.TiffinClient;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code tiffin get KEY [FILE|-]}: writes an object's bytes to a file, or raw to standard output
 * (nothing else is written there then).
 *
 * <p>Not thread-safe: one instance runs once.
 */
@Command(name = "get", mixinStandardHelpOptions = true,
        description = "Writes the bytes stored under KEY to FILE, or to standard output (- or no FILE).")
final class GetCommand extends ClientCommand {
    @Parameters(index = "0", paramLabel = "KEY", description = "The key.")
    String key;

    @Parameters(index = "1", paramLabel = "FILE", arity = "0..1", defaultValue = "-",
            description = "File to write (replaced if it exists), or - for standard output (the default).")
    String file;

    @Override
    String key() {
        return key;
    }

    @Override
    int run(TiffinClient client) {
        byte[] bytes = client.get(key);
        if (file.equals("-")) {
            out().write(bytes, 0, bytes.length);
            out().flush();
            if (out().checkError()) { // a PrintStream keeps its write errors to itself
                throw new TiffinException(ErrorCode.FILE_WRITE_FAIL, "standard output did not take the " + bytes.length
                        + " bytes of " + key + " (a full disk, a closed pipe?); the output is incomplete");
            }
            return 0;
        }
        Path path = Path.of(file);
        try {
            Files.write(path, bytes);
        } catch (NoSuchFileException e) {
            throw new TiffinException(ErrorCode.FILE_OPEN_FAIL, "FILE " + file
                    + " cannot be created: its directory does not exist (expected: a path in an existing directory)", e);
        } catch (AccessDeniedException e) {
            throw new TiffinException(ErrorCode.FILE_OPEN_FAIL, "FILE " + file
                    + " cannot be written: permission denied", e);
        } catch (IOException e) {
            throw new TiffinException(ErrorCode.FILE_WRITE_FAIL, "FILE " + file + " cannot be written: " + e, e);
        }
        out().println("OK get " + key + " (" + bytes.length + " bytes) to " + file);
        return 0;
    }
}
