package io.tiffin.plugin.storage;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Mounts small throw-away file systems for fault tests (needs root; callers skip when mounting fails).
 * Not thread-safe; each test mounts and unmounts its own directories.
 */
final class Mounts {
    private Mounts() {
    }

    /** Runs {@code mount -t type [-o options] type dir}; returns whether it succeeded. */
    static boolean mount(String type, String options, Path dir) {
        List<String> cmd = new ArrayList<>(List.of("mount", "-t", type));
        if (options != null) {
            cmd.addAll(List.of("-o", options));
        }
        cmd.addAll(List.of(type, dir.toString()));
        return run(cmd);
    }

    static void unmount(Path dir) {
        if (!run(List.of("umount", dir.toString()))) {
            run(List.of("umount", "-l", dir.toString()));
        }
    }

    private static boolean run(List<String> cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
