package io.tiffin.core.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * What the build recorded about itself ({@code io/tiffin/core/cli/build-info.properties}, written by
 * engine-core's {@code src/build/write-build-info.sh}): the Maven version, the git commit (with
 * {@code -dirty} for uncommitted changes; {@code unknown} for a build outside git) and the build time.
 *
 * <p>Thread-safe (immutable).
 *
 * @param version the Maven project version, e.g. {@code 0.1.0-SNAPSHOT}
 * @param commit the abbreviated commit id, or {@code unknown}
 * @param time when the jar was built (UTC, ISO 8601), or empty
 */
record BuildInfo(String version, String commit, String time) {
    static final String RESOURCE = "build-info.properties";

    /** The recorded facts; {@code unknown} for those missing (a build that skipped the script, an IDE). */
    static BuildInfo load() {
        Properties p = new Properties();
        try (InputStream in = BuildInfo.class.getResourceAsStream(RESOURCE)) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            // unreadable: reported as unknown below
        }
        return new BuildInfo(p.getProperty("version", "unknown"), p.getProperty("commit", "unknown"),
                p.getProperty("time", ""));
    }
}
