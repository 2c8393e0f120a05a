package io.tiffin.bench;

import java.util.List;

/**
 * One object size of the {@code size_class_churn} workload and its weight, as in Mooncake's
 * {@code allocation_strategy_bench}.
 *
 * <p>Thread-safe (immutable).
 *
 * @param name label in the size-class breakdown
 * @param size bytes per replica
 * @param weight relative frequency
 */
record SizeClass(String name, long size, int weight) {
    /** DeepSeek-style KV page: 3,274,752 B (3198 KiB). */
    static final long KV_PAGE = 3_274_752L;
    /** DSA indexer page: 658,432 B (643 KiB). */
    static final long INDEXER_PAGE = 658_432L;

    /** The classes of a {@code --size-class-pattern}: {@code kv_mixed} or {@code dsa_pair}. */
    static List<SizeClass> pattern(String pattern) {
        return switch (pattern) {
            case "kv_mixed" -> List.of(new SizeClass("small", 4L << 10, 70), new SizeClass("medium", 256L << 10, 20),
                    new SizeClass("large", KV_PAGE, 10));
            case "dsa_pair" -> List.of(new SizeClass("kv", KV_PAGE, 50), new SizeClass("indexer", INDEXER_PAGE, 50));
            default -> throw new IllegalArgumentException("--size-class-pattern = " + pattern
                    + " (expected: kv_mixed, dsa_pair or all)");
        };
    }
}
