package io.tiffin.core.transport;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The tokens of {@code transport.tokens-file}, so that they rotate without a restart. Each line is {@code
 * role=token}, the role one of {@code auth} (the shared token, {@code transport.auth-token}), {@code client}, {@code
 * node} or {@code admin}; blank lines and lines starting with {@code #} are skipped. A role may have several lines: this
 * process presents the first, and its servers accept every one. A rotation therefore goes: add the new token as the
 * first line on the servers' files (they accept both), let the clients' files name the new one, then drop the old
 * line. A role the file names must not also have its configuration key set.
 *
 * <p>The file is looked at again (its {@link FileReloads#stampOf stamp}) every {@code
 * transport.tokens-reload-interval} on the background thread of {@link FileReloads} ({@link FileReloads#watch}), so a
 * server takes a new token, and stops taking a dropped one, within that time; new connections then use the new
 * tokens, established ones keep the roles they proved. A changed file that does not parse, that names a role whose key
 * is set, or that no longer names a role it named (the role would be open, or proven by the shared token) is logged
 * once per change and the tokens read before stay in use. At start a file that does not parse, or names a role whose
 * key is set, is an error.
 *
 * <p>Owner: the {@link Credentials} built from the configuration; every copy of those shares it. Thread-safe: the
 * tokens are a volatile reference to an immutable map, replaced by the reload thread alone.
 */
public final class TokensFile {
    private static final Logger LOG = LogManager.getLogger(TokensFile.class);
    /** Larger files are refused: a few tokens of any length fit many times over. */
    static final int MAX_BYTES = 64 * 1024;
    /** The slot of the shared token, beside the roles' labels. */
    static final String SHARED = "auth";

    /** The tokens of the file as read: slot ({@value #SHARED} or a role's label) → tokens in order; its stamp. */
    private record Read(String stamp, Map<String, List<String>> tokens) {
    }

    /** The credentials last derived from a base with the tokens read, so that the same instance is handed out. */
    private record Applied(Credentials base, Read read, Credentials result) {
    }

    private final Path path;
    private final Set<String> setInline;
    private final AtomicInteger reloads = new AtomicInteger();
    private final AtomicInteger failedReloads = new AtomicInteger();
    private volatile Read read;
    private volatile Applied applied;
    /** The stamp of the file last refused (logged once), or null. Reload thread only. */
    private String refused;

    private TokensFile(Path path, Set<String> setInline, Duration reloadInterval) {
        this.path = path;
        this.setInline = Set.copyOf(setInline);
        this.read = parse(path, this.setInline);
        FileReloads.watch(this, reloadInterval, TokensFile::reloadIfChanged);
    }

    /**
     * Reads {@code path}, whose roles must not be among {@code setInline} (the slots whose configuration keys are set:
     * {@value #SHARED}, {@code client}, {@code node}, {@code admin}), and looks at it again every {@code
     * reloadInterval} (zero: never).
     *
     * @throws TiffinException {@code INVALID_PARAMS} naming the file and what is wrong with it
     */
    public static TokensFile load(Path path, Set<String> setInline, Duration reloadInterval) {
        return new TokensFile(path, setInline, reloadInterval);
    }

    /** The file's path. */
    public Path path() {
        return path;
    }

    /** How many times the changed file was read since start. */
    public int reloads() {
        return reloads.get();
    }

    /** How many times the changed file was refused since start (each change counted once). */
    public int failedReloads() {
        return failedReloads.get();
    }

    /**
     * {@code base} with the file's current tokens in place of its own; never blocks. The same instance comes back
     * until the file changes.
     */
    Credentials apply(Credentials base) {
        Read r = read;
        Applied a = applied;
        if (a != null && a.base == base && a.read == r) {
            return a.result;
        }
        Credentials result = derive(base, r.tokens);
        applied = new Applied(base, r, result);
        return result;
    }

    private static Credentials derive(Credentials base, Map<String, List<String>> tokens) {
        Credentials c = base.withoutTokensFile();
        List<String> shared = tokens.get(SHARED);
        if (shared != null) {
            c = c.withAuthToken(shared.getFirst());
        }
        Map<Role, List<String>> also = new EnumMap<>(Role.class);
        for (Role role : Role.values()) {
            List<String> own = tokens.get(role.label());
            if (own != null) {
                c = c.withToken(role, own.getFirst());
            }
            // a role without a token of its own is proven by the shared one, so by each shared line too
            List<String> proving = own != null ? own : c.ownTokenOf(role).isEmpty() ? shared : null;
            if (proving != null && proving.size() > 1) {
                also.put(role, proving.subList(1, proving.size()));
            }
        }
        return c.withAlsoAccepted(also);
    }

    /** Reads the file again if its stamp changed since the tokens in use (or the last refused) were read. */
    private void reloadIfChanged() {
        String now = FileReloads.stampOf(path);
        if (now.equals(read.stamp) || now.equals(refused)) {
            return;
        }
        try {
            Read next = parse(path, setInline);
            for (String slot : read.tokens.keySet()) {
                if (!next.tokens.containsKey(slot)) {
                    throw invalid(path, "it no longer gives " + slot + " a token (a role the file named must keep one:"
                            + " dropping it would open the role, or hand it to the shared token)");
                }
            }
            read = next;
            refused = null;
            reloads.incrementAndGet();
            LOG.info("Reloaded transport.tokens-file {}: tokens of {}; new connections use them", path,
                    next.tokens.keySet());
        } catch (TiffinException e) {
            refused = now;
            failedReloads.incrementAndGet();
            LOG.warn("transport.tokens-file changed but is refused, so the tokens read before stay in use until it"
                    + " changes again: {}", e.getMessage());
        }
    }

    private static Read parse(Path path, Set<String> setInline) {
        String stamp = FileReloads.stampOf(path);
        byte[] bytes;
        try {
            if (Files.size(path) > MAX_BYTES) {
                throw invalid(path, "it is larger than " + MAX_BYTES + " bytes");
            }
            bytes = Files.readAllBytes(path);
        } catch (IOException e) {
            throw invalid(path, "it cannot be read (" + e + ")");
        }
        Map<String, List<String>> tokens = new LinkedHashMap<>();
        String[] lines = new String(bytes, StandardCharsets.UTF_8).split("\r?\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int eq = line.indexOf('=');
            String slot = eq < 0 ? "" : line.substring(0, eq).strip();
            String token = eq < 0 ? "" : line.substring(eq + 1).strip();
            if (!slot.equals(SHARED) && !isRole(slot)) {
                throw invalid(path, "line " + (i + 1) + " is not role=token with a role of auth, client, node or"
                        + " admin");
            }
            if (token.isEmpty()) {
                throw invalid(path, "line " + (i + 1) + " gives " + slot + " an empty token");
            }
            if (setInline.contains(slot)) {
                throw invalid(path, "line " + (i + 1) + " gives a token to " + slot + ", whose key "
                        + (slot.equals(SHARED) ? "transport.auth-token" : "transport." + slot + "-token")
                        + " is set too (expected: one place for each role's tokens)");
            }
            tokens.computeIfAbsent(slot, s -> new ArrayList<>()).add(token);
        }
        tokens.replaceAll((slot, list) -> List.copyOf(list));
        return new Read(stamp, Map.copyOf(tokens));
    }

    private static boolean isRole(String slot) {
        for (Role r : Role.values()) {
            if (r.label().equals(slot)) {
                return true;
            }
        }
        return false;
    }

    private static TiffinException invalid(Path path, String what) {
        return new TiffinException(ErrorCode.INVALID_PARAMS, "transport.tokens-file = " + path + " is refused: "
                + what);
    }

    @Override
    public String toString() {
        return "TokensFile[" + path + "]";
    }
}
