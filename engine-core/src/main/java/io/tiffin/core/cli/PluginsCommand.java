package io.tiffin.core.cli;

import io.tiffin.core.TiffinModule;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.plugin.ExtensionPoint;
import io.tiffin.core.plugin.PluginInfo;
import io.tiffin.core.plugin.PluginRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Command;

/**
 * {@code tiffin plugins}: what is installed — the plugins folder, every plugin found there or on the
 * class path and where it came from, and the names each extension point offers (the values of
 * {@code allocation.strategy}, {@code node.storage-backend} and {@code hotcache.policy}), each with the
 * configuration keys it reads.
 *
 * <p>Not thread-safe: one instance runs once.
 */
@Command(name = "plugins", mixinStandardHelpOptions = true,
        description = "Lists the installed plugins and the allocation strategies, storage backends and hot cache"
                + " policies they provide.")
final class PluginsCommand extends TiffinCommand {

    @Override
    public Integer call() {
        TiffinConfig config = config(flags());
        Path dir = TiffinModule.pluginsDir(config);
        try (PluginRegistry plugins = TiffinModule.pluginRegistry(config)) {
            out().print(format(dir, plugins));
        }
        return 0;
    }

    static String format(Path dir, PluginRegistry plugins) {
        StringBuilder sb = new StringBuilder();
        sb.append("Plugins folder: ").append(dir == null ? "none (set plugins.dir, or run through the launcher)"
                : dir.toAbsolutePath() + (Files.isDirectory(dir) ? "" : " (missing)")).append('\n');
        sb.append("Plugins:\n");
        for (PluginInfo p : plugins.plugins()) {
            sb.append("  ").append(p.name()).append("  ").append(p.className()).append("  ").append(p.source())
                    .append('\n');
        }
        for (ExtensionPoint<?> point : ExtensionPoint.all()) {
            String what = point.description();
            what = what.endsWith("y") ? what.substring(0, what.length() - 1) + "ies" : what + "s";
            sb.append(Character.toUpperCase(what.charAt(0))).append(what.substring(1)).append(" (")
                    .append(point.configKey()).append("):");
            if (plugins.names(point).isEmpty()) {
                sb.append(" none");
            }
            sb.append('\n');
            for (String name : plugins.names(point)) {
                sb.append("  ").append(name).append("  from ").append(plugins.providerOf(point, name).name())
                        .append("  settings: ").append(settings(plugins, point, name)).append('\n');
            }
        }
        return sb.toString();
    }

    /** The keys a factory declares, in full; or what a factory that declares none gets. */
    private static String settings(PluginRegistry plugins, ExtensionPoint<?> point, String name) {
        String prefix = point.settingsPrefix(name);
        try {
            return plugins.settingKeys(point, name).map(keys -> keys.isEmpty() ? "none"
                    : String.join(", ", keys.stream().map(k -> prefix + k).toList()))
                    .orElse(prefix + "* (not declared; checked by the plugin)");
        } catch (io.tiffin.api.TiffinException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }
}
