package io.tiffin.core.cli;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.KeyListing;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.config.Durations;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.OptionalLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/**
 * {@code tiffin put KEY FILE|-}: stores a file (memory-mapped, no copy) or standard input under a key.
 * A key that already exists keeps its stored value (Tiffin's put semantics); the output says so.
 *
 * <p>Not thread-safe: one instance runs once.
 */
@Command(name = "put", mixinStandardHelpOptions = true,
        description = "Stores the bytes of FILE (or standard input for -) under KEY.")
final class PutCommand extends ClientCommand {
    @Option(names = "--replicas", paramLabel = "N", defaultValue = "1",
            description = "Memory replicas, each on a distinct segment (best effort; default ${DEFAULT-VALUE}).")
    int replicas;

    @Option(names = "--ttl", paramLabel = "DURATION",
            description = "Time to live: the object expires this long after the master starts the put and is then"
                    + " gone for every client (e.g. 10m, 1h; a plain number is seconds). Default: never.")
    String ttl;

    @Parameters(index = "0", paramLabel = "KEY", description = "The key.")
    String key;

    @Parameters(index = "1", paramLabel = "FILE", description = "File to store, or - for standard input.")
    String file;

    @Override
    void check() {
        if (replicas < 1) {
            throw new ParameterException(spec.commandLine(), "--replicas = " + replicas + " (expected: at least 1)");
        }
        ttlMillis();
    }

    /** {@code --ttl} in milliseconds, 0 without it. */
    private long ttlMillis() {
        if (ttl == null) {
            return 0;
        }
        try {
            long millis = Durations.parse(ttl, ChronoUnit.SECONDS).toMillis();
            if (millis > 0) {
                return millis;
            }
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "--ttl = " + ttl + ": " + e.getMessage());
        }
        throw new ParameterException(spec.commandLine(), "--ttl = " + ttl
                + " (expected: at least 1 ms, e.g. 10m; leave it out for no deadline)");
    }

    @Override
    String key() {
        return key;
    }

    @Override
    int run(TiffinClient client) throws IOException {
        PutOptions options = PutOptions.replicas(replicas).withTtlMillis(ttlMillis());
        OptionalLong existing = storedSize(client, key);
        long size;
        if (file.equals("-")) {
            byte[] bytes = cli().in().readAllBytes();
            size = bytes.length;
            requireNotEmpty(size, "standard input");
            client.put(key, bytes, options);
        } else {
            Path path = Path.of(file);
            if (Files.isDirectory(path)) {
                throw new TiffinException(ErrorCode.FILE_READ_FAIL, "FILE " + file
                        + " is a directory (expected: a file, or - for standard input)");
            }
            try (Arena arena = Arena.ofConfined();
                 FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
                size = ch.size();
                if (size == 0) {
                    // a pipe, a FIFO, /dev/stdin or a /proc file: no size to map, the bytes come as they are read
                    byte[] bytes = java.nio.channels.Channels.newInputStream(ch).readAllBytes();
                    size = bytes.length;
                    requireNotEmpty(size, "FILE " + file);
                    client.put(key, bytes, options);
                } else {
                    client.putFrom(key, ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena), options);
                }
            } catch (NoSuchFileException e) {
                throw new TiffinException(ErrorCode.FILE_NOT_FOUND, "FILE " + file
                        + " does not exist (expected: an existing file, or - for standard input)", e);
            } catch (AccessDeniedException e) {
                throw new TiffinException(ErrorCode.FILE_OPEN_FAIL, "FILE " + file
                        + " cannot be read: permission denied", e);
            } catch (IOException e) {
                throw new TiffinException(ErrorCode.FILE_READ_FAIL, "FILE " + file + " cannot be read: " + e, e);
            }
        }
        if (existing.isPresent()) {
            out().println("OK put " + key + ": already exists; kept the stored value (" + existing.getAsLong()
                    + " bytes), ignored the new " + size + " bytes");
        } else {
            out().println("OK put " + key + " (" + size + " bytes)");
        }
        return 0;
    }

    private static void requireNotEmpty(long size, String source) {
        if (size == 0) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, source
                    + " is empty (expected: at least 1 byte; Tiffin stores no empty objects)");
        }
    }

    /**
     * The size of the object stored under {@code key}, if complete. Uses a prefix listing (the key
     * itself sorts first among the keys it prefixes) rather than {@code exists}, which would take a
     * read lease and block a following {@code rm}.
     */
    static OptionalLong storedSize(TiffinClient client, String key) {
        List<KeyListing.KeySize> first = client.listKeys(key, 1).keys();
        return !first.isEmpty() && first.getFirst().key().equals(key) ? OptionalLong.of(first.getFirst().size())
                : OptionalLong.empty();
    }
}
