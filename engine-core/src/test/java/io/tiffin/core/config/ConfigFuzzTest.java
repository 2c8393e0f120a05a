package io.tiffin.core.config;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Coverage-guided fuzzing of the configuration parser: any properties file, environment and {@code -D}
 * settings give either a configuration or a {@link ConfigException} naming the problems, never another
 * exception. In CI the inputs under src/test/resources run as regression tests.
 */
class ConfigFuzzTest {
    private static final List<String> NAMES = TiffinConfigKeys.all().stream().map(ConfigKey::name).toList();

    @FuzzTest(maxDuration = "5m")
    void anySettingsGiveAConfigOrAConfigException(FuzzedDataProvider data) {
        TiffinConfig.Builder b = TiffinConfig.builder();
        int settings = data.consumeInt(0, 6);
        for (int i = 0; i < settings; i++) {
            String key = data.consumeBoolean() ? data.pickValue(NAMES) : data.consumeString(60);
            b.set(key, data.consumeString(200));
        }
        if (data.consumeBoolean()) {
            b.fromEnvironment(Map.of("TIFFIN_" + data.consumeString(40), data.consumeString(100),
                    data.pickValue(TiffinConfigKeys.ENV_ALIASES.keySet().toArray(String[]::new)), data.consumeString(40)));
        }
        Path file = null;
        if (data.consumeBoolean()) {
            try {
                file = Files.createTempFile("fuzz", ".properties");
                Files.write(file, data.consumeRemainingAsString().getBytes(StandardCharsets.ISO_8859_1));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            b.fromFile(file);
        }
        try {
            TiffinConfig config = b.build();
            for (ConfigKey<?> k : TiffinConfigKeys.all()) {
                config.get(k);
            }
            config.describe();
        } catch (ConfigException expected) {
            // a configuration problem, reported as such
        } finally {
            if (file != null) {
                try {
                    Files.deleteIfExists(file);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
    }
}
