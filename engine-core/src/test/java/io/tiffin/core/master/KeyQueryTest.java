package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.keys.KeyQuery;
import io.tiffin.core.util.ManualTicker;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/** The query fast paths agree with the regex engine. */
class KeyQueryTest {
    private static final String ALPHABET = "ab_/.0-\n*x";

    @Test
    void classifiesSimplePatterns() {
        assertThat(KeyQuery.compile("^tenant_042/session_").kind()).isEqualTo(KeyQuery.Kind.PREFIX);
        assertThat(KeyQuery.compile("^tenant_042/session_").literal()).isEqualTo("tenant_042/session_");
        assertThat(KeyQuery.compile("^key$").kind()).isEqualTo(KeyQuery.Kind.EXACT);
        assertThat(KeyQuery.compile("plain").kind()).isEqualTo(KeyQuery.Kind.CONTAINS);
        assertThat(KeyQuery.compile("^a\\.b.*").kind()).isEqualTo(KeyQuery.Kind.PREFIX);
        assertThat(KeyQuery.compile("^a\\.b.*").literal()).isEqualTo("a.b");
        assertThat(KeyQuery.compile("^a\\d").kind()).isEqualTo(KeyQuery.Kind.REGEX);
        assertThat(KeyQuery.compile("^ab|cd").kind()).isEqualTo(KeyQuery.Kind.REGEX);
        assertThat(KeyQuery.compile("^ab?").kind()).isEqualTo(KeyQuery.Kind.REGEX);
        assertThat(KeyQuery.compile("a+").kind()).isEqualTo(KeyQuery.Kind.REGEX);
    }

    @Test
    void rejectsBadPatterns() {
        assertThatThrownBy(() -> KeyQuery.compile("")).isInstanceOf(TiffinException.class);
        assertThatThrownBy(() -> KeyQuery.compile("[a")).isInstanceOf(TiffinException.class)
                .hasMessageContaining("RE2");
        assertThatThrownBy(() -> KeyQuery.compile("x".repeat(KeyQuery.MAX_LENGTH + 1)))
                .isInstanceOf(TiffinException.class);
    }

    private static String randomString(SplittableRandom rnd, int maxLen) {
        int len = rnd.nextInt(maxLen + 1);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < len; i++) {
            sb.append(ALPHABET.charAt(rnd.nextInt(ALPHABET.length())));
        }
        return sb.toString();
    }

    private static String escape(String literal) {
        StringBuilder sb = new StringBuilder();
        for (char c : literal.toCharArray()) {
            if (".*+?()[]{}|^$\\".indexOf(c) >= 0) {
                sb.append('\\');
            }
            sb.append(c);
        }
        return sb.toString();
    }

    private static String randomPattern(SplittableRandom rnd, List<String> keys) {
        String base = keys.get(rnd.nextInt(keys.size()));
        String lit = escape(base.substring(0, rnd.nextInt(base.length() + 1)));
        return switch (rnd.nextInt(9)) {
            case 0 -> "^" + lit;
            case 1 -> "^" + escape(base) + "$";
            case 2 -> lit.isEmpty() ? "a" : lit;
            case 3 -> "^" + lit + ".*";
            case 4 -> "^" + lit + ".*$";
            case 5 -> "^" + lit + "[ab]";
            case 6 -> lit + "$";
            case 7 -> "^(" + lit + ")";
            default -> "^" + lit + "|b";
        };
    }

    @RepeatedTest(5)
    void fastPathAndRegexEngineAgreeOnRandomKeysAndPatterns() {
        long seed = System.nanoTime();
        SplittableRandom rnd = new SplittableRandom(seed);
        MasterService master = new MasterService(MasterSettings.defaults(), MasterServiceTest.IN_ORDER,
                new ManualTicker(), null);
        master.mountSegment("s", "n", "h:1", 64L << 20);
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            String key = "k" + randomString(rnd, 8);
            if (master.putStart("c", key, 1, PutOptions.DEFAULT).isOk()) {
                master.putEnd("c", key);
                keys.add(key);
            }
        }
        for (int i = 0; i < 300; i++) {
            String pattern = randomPattern(rnd, keys);
            KeyQuery q = KeyQuery.compile(pattern);
            for (String key : keys) {
                assertThat(q.matches(key)).as("seed %d pattern %s key %s", seed, pattern, key)
                        .isEqualTo(q.matchesWithRegexEngine(key));
            }
            List<String> fast = master.getReplicaListByRegex(pattern).stream().map(ObjectLocation::key).toList();
            List<String> full = master.getReplicaListByRegexFullScan(pattern).stream().map(ObjectLocation::key).toList();
            assertThat(fast).as("seed %d pattern %s", seed, pattern).isEqualTo(full);
        }
    }

    @Test
    void prefixRemovalAndListingUseTheIndex() {
        MasterService master = new MasterService(MasterSettings.defaults(), MasterServiceTest.IN_ORDER,
                new ManualTicker(), null);
        master.mountSegment("s", "n", "h:1", 64L << 20);
        for (int t = 0; t < 5; t++) {
            for (int i = 0; i < 20; i++) {
                String key = "tenant_%03d/session_%d".formatted(t, i);
                master.putStart("c", key, 10, PutOptions.DEFAULT);
                master.putEnd("c", key);
            }
        }
        var listed = master.listKeys("tenant_002/", 5);
        assertThat(listed.keys().keySet()).containsExactly("tenant_002/session_0", "tenant_002/session_1",
                "tenant_002/session_10", "tenant_002/session_11", "tenant_002/session_12");
        assertThat(listed.truncated()).isTrue();
        assertThat(master.removeByRegex("^tenant_002/", false)).isEqualTo(20);
        assertThat(master.listKeys("tenant_002/", 100).keys()).isEmpty();
        assertThat(master.getReplicaListByRegex("^tenant_003/session_7$")).hasSize(1);
        assertThat(master.keyCount()).isEqualTo(80);
    }
    @Test
    void aReplacedKeyStaysListedThroughoutItsReplacement() throws Exception {
        MasterService master = new MasterService(MasterSettings.defaults(), MasterServiceTest.IN_ORDER,
                new ManualTicker(), null);
        master.mountSegment("s", "n", "h:1", 64L << 20);
        for (int i = 0; i < 3; i++) {
            master.putStart("c", "kv/" + i, 10, PutOptions.DEFAULT);
            master.putEnd("c", "kv/" + i);
        }
        // A lister that runs while kv/1 is replaced over and over must find all three keys every time: the
        // replacement never takes the key out of the sorted index, not even for an instant.
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicInteger misses = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger listings = new java.util.concurrent.atomic.AtomicInteger();
        Thread lister = Thread.ofPlatform().start(() -> {
            while (!done.get()) {
                if (master.listKeys("kv/", 10).keys().size() != 3) {
                    misses.incrementAndGet();
                }
                listings.incrementAndGet();
            }
        });
        PutOptions upsert = PutOptions.DEFAULT.withUpsert(true);
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        int replaced = 0;
        while (replaced < 20_000 || listings.get() < 2_000) {
            assertThat(master.putStart("c", "kv/1", 10 + replaced % 7, upsert).code()).isEqualTo(ErrorCode.OK);
            assertThat(master.putEnd("c", "kv/1")).isEqualTo(ErrorCode.OK);
            replaced++;
            if (System.nanoTime() > deadline) {
                break;
            }
        }
        done.set(true);
        lister.join();
        assertThat(listings.get()).as("listings during %d replacements", replaced).isPositive();
        assertThat(misses.get()).as("listings that missed a key, of %d", listings.get()).isZero();
        assertThat(master.keyCount()).isEqualTo(3);
        assertThat(master.getReplicaList("kv/1").value().size()).isEqualTo(10 + (replaced - 1) % 7);
        assertThat(master.removeByRegex("^kv/", true)).as("forced: the read above leased kv/1").isEqualTo(3);
        assertThat(master.listKeys("kv/", 10).keys()).isEmpty();
        assertThat(master.keyCount()).isZero();
    }
}
