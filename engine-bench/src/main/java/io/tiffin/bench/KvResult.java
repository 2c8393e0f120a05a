package io.tiffin.bench;

/**
 * One case of {@code tiffin bench kv} measured: a target's operation on values of one size, its
 * figures, and the round it was measured in.
 *
 * <p>Thread-safe (immutable).
 *
 * @param target what was measured, e.g. {@code tiffin-remote} or {@code socket}
 * @param operation put, get, batch_get or batch_put
 * @param valueSize bytes per value
 * @param clients client threads
 * @param opsPerSec keys per second (a batch of n keys counts n)
 * @param gbPerSec value bytes per second, in 10^9
 * @param p50Us median latency of one call, in microseconds
 * @param p99Us 99th percentile latency of one call, in microseconds
 * @param round 1 to N, or 0 for the medians over the rounds
 */
record KvResult(String target, String operation, long valueSize, int clients, double opsPerSec, double gbPerSec,
                double p50Us, double p99Us, int round) {
    /** The CSV columns every row starts with. */
    private static final String COLUMNS = "target,operation,value_size,clients,ops_per_sec,gb_per_sec,p50_us,p99_us";
    /** The CSV header of a run of one round: the columns, then the ratio to the socket baseline. */
    static final String CSV_HEADER = COLUMNS + ",socket_ratio";
    /** The CSV header of a run of several rounds. */
    static final String CSV_HEADER_WITH_ROUND = COLUMNS + ",round,socket_ratio";

    /** The CSV line, without the round. */
    String csv() {
        return target + "," + operation + "," + valueSize + "," + clients + "," + BenchSupport.fmt(opsPerSec, 1)
                + "," + BenchSupport.fmt(gbPerSec, 3) + "," + BenchSupport.fmt(p50Us, 1) + ","
                + BenchSupport.fmt(p99Us, 1);
    }

    /** The CSV line with the round: 1 to N, or {@code median}. */
    String csvWithRound() {
        return csv() + "," + (round == 0 ? "median" : Integer.toString(round));
    }

    /** The case, whatever the round: {@code target/operation/valueSize}. */
    String key() {
        return target + "/" + operation + "/" + valueSize;
    }
}
