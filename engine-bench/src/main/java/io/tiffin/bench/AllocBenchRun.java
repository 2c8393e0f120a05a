package io.tiffin.bench;

import io.tiffin.api.spi.allocation.AllocationRequest;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * One strategy on one case of the allocation benchmark: a fresh simulated cluster of
 * {@link BenchSegment}s and the workload of Mooncake's {@code allocation_strategy_bench}
 * ({@code fillup}, {@code scaleout}, {@code size_class_churn}), on one thread with no locks.
 *
 * <p>Every random choice of the workload (size classes, eviction victims) and the strategy's random
 * source are seeded with {@value #SEED}, each from its own stream, so every strategy sees the same
 * size sequence.
 *
 * <p>Not thread-safe: one instance per run.
 */
final class AllocBenchRun {
    static final long SEED = 42;
    static final long MiB = 1L << 20;
    /** Mooncake's {@code --convergence_sample_interval}. */
    static final int SAMPLE_INTERVAL = 100;
    /** Mooncake's {@code kSizeClassMaxRetries}: retries after the first try, each after an eviction. */
    static final int MAX_RETRIES = 5;
    /** Mooncake's early exit (fillup) and prefill stop: consecutive failures. */
    static final int MAX_CONSECUTIVE_FAILURES = 10;
    /** Mooncake's {@code --scale_out_trigger_pct}. */
    static final double SCALE_OUT_TRIGGER_PCT = 50;
    /** Mooncake's {@code --alloc_percent_after_scale}. */
    static final double ALLOC_PCT_AFTER_SCALE = 30;
    /** Mooncake's {@code --convergence_threshold}: stddev of per-segment utilisation. */
    static final double CONVERGENCE_THRESHOLD = 0.1;
    /** Scale-out prefill uses blocks of at least this size. */
    static final long SCALE_OUT_MIN_BLOCK = 8 * MiB;
    static final int VIRTUAL_NODES = 10;

    private final AllocationStrategy strategy;
    /** The strategy's registered name, shown in the summary lines. */
    private final String strategyName;
    private final int replicas;
    private final long baseCapacity;
    private final boolean skewed;
    private final List<BenchSegment> segments = new ArrayList<>();
    private List<BenchSegment> view = Collections.unmodifiableList(segments);
    private final int initialSegments;
    private final BenchSink sink;
    private final SplittableRandom classRandom = new SplittableRandom(SEED);
    private final SplittableRandom evictRandom = new SplittableRandom(SEED);

    // Live objects: replica segment indexes and handles, `replicas` slots per object.
    private int[] liveSegment;
    private long[] liveHandle;
    private int[] liveReplicas = new int[1024];
    private long[] liveSize = new long[1024];
    private int live;
    private long evictions;
    /** Average utilisation (%) when the prefill stopped. */
    private double prefillUtil = Double.NaN;

    AllocBenchRun(AllocationStrategy strategy, String strategyName, int segmentCount, int replicas, long baseCapacity,
            boolean skewed) {
        this.strategy = strategy;
        this.strategyName = strategyName;
        this.replicas = replicas;
        this.baseCapacity = baseCapacity;
        this.skewed = skewed;
        this.initialSegments = segmentCount;
        this.sink = new BenchSink(new SplittableRandom(SEED), replicas);
        this.liveSegment = new int[1024 * replicas];
        this.liveHandle = new long[1024 * replicas];
        for (int i = 0; i < segmentCount; i++) {
            addSegment(segmentCount);
        }
    }

    /** Mooncake's naming: {@code node_<i / perNode>_seg_<i % perNode>} over 10 virtual nodes. */
    private void addSegment(int namingCount) {
        int i = segments.size();
        int perNode = Math.max(1, (namingCount + VIRTUAL_NODES - 1) / VIRTUAL_NODES);
        long capacity = skewed ? (i % 2 == 0 ? baseCapacity * 3 / 2 : baseCapacity / 2) : baseCapacity;
        String node = "node_" + (i / perNode);
        segments.add(new BenchSegment(i, node + "_seg_" + (i % perNode), node, capacity));
    }

    long clusterBytes() {
        long sum = 0;
        for (BenchSegment s : segments) {
            sum += s.capacity();
        }
        return sum;
    }

    // ------------------------------------------------------------------------------ allocation

    /** One {@code Allocate} call; returns the number of replicas placed (0 = failed). */
    private int allocateOnce(AllocationRequest request) {
        sink.reset(request.size(), request.replicas());
        strategy.place(request, view, sink);
        int placed = sink.placed();
        if (placed > 0) {
            if (live == liveReplicas.length) {
                int objects = live * 2;
                liveSegment = Arrays.copyOf(liveSegment, objects * replicas);
                liveHandle = Arrays.copyOf(liveHandle, objects * replicas);
                liveReplicas = Arrays.copyOf(liveReplicas, objects);
                liveSize = Arrays.copyOf(liveSize, objects);
            }
            int base = live * replicas;
            for (int r = 0; r < placed; r++) {
                liveSegment[base + r] = sink.segment(r).index;
                liveHandle[base + r] = sink.handle(r);
            }
            liveReplicas[live] = placed;
            liveSize[live] = request.size();
            live++;
        }
        return placed;
    }

    /** Mooncake's {@code sizeClassAllocateWithEvict}: up to 6 tries, evicting after each failure. */
    private int allocateWithEvict(AllocationRequest request, double evictRatio) {
        for (int attempt = 0; attempt <= MAX_RETRIES; attempt++) {
            int placed = allocateOnce(request);
            if (placed > 0) {
                return placed;
            }
            if (live == 0) {
                return 0;
            }
            evict(evictRatio);
        }
        return 0;
    }

    /** Drops {@code max(1, floor(live × ratio))} random live objects (swap-pop): one eviction round. */
    private void evict(double ratio) {
        int victims = Math.max(1, (int) Math.floor(live * ratio));
        for (int v = 0; v < victims && live > 0; v++) {
            int idx = evictRandom.nextInt(live);
            int base = idx * replicas;
            for (int r = 0; r < liveReplicas[idx]; r++) {
                BenchSegment s = segments.get(liveSegment[base + r]);
                s.allocator.free(liveHandle[base + r]);
                s.requested -= liveSize[idx];
            }
            int last = live - 1;
            if (idx != last) {
                int lastBase = last * replicas;
                System.arraycopy(liveSegment, lastBase, liveSegment, base, replicas);
                System.arraycopy(liveHandle, lastBase, liveHandle, base, replicas);
                liveReplicas[idx] = liveReplicas[last];
                liveSize[idx] = liveSize[last];
            }
            live = last;
        }
        evictions++;
    }

    // ------------------------------------------------------------------------------ statistics

    double averageUtilisation() {
        double sum = 0;
        for (BenchSegment s : segments) {
            sum += s.utilisation();
        }
        return segments.isEmpty() ? 0 : sum / segments.size();
    }

    double utilisationStdDev() {
        double mean = averageUtilisation();
        double sq = 0;
        for (BenchSegment s : segments) {
            double d = s.utilisation() - mean;
            sq += d * d;
        }
        return segments.isEmpty() ? 0 : Math.sqrt(sq / segments.size());
    }

    /** §4.5: per segment {@code 1 − largest / free} clamped to [0, 1], averaged weighted by free bytes. */
    double fragmentation() {
        double weighted = 0;
        double free = 0;
        for (BenchSegment s : segments) {
            long f = s.allocator.freeBytes();
            if (f <= 0) {
                continue;
            }
            double local = 1.0 - (double) s.allocator.largestFreeRegion() / f;
            weighted += f * Math.min(1.0, Math.max(0.0, local));
            free += f;
        }
        return free == 0 ? 0 : weighted / free;
    }

    long largestFreeRegion() {
        long max = 0;
        for (BenchSegment s : segments) {
            max = Math.max(max, s.allocator.largestFreeRegion());
        }
        return max;
    }

    // ------------------------------------------------------------------------------ workloads

    /** The {@code size_class_churn} workload. */
    CaseResult sizeClassChurn(String pattern, int numAllocations, double prefillPct, double evictRatio) {
        List<SizeClass> classes = SizeClass.pattern(pattern);
        int totalWeight = 0;
        double weightedSize = 0;
        for (SizeClass c : classes) {
            totalWeight += c.weight();
            weightedSize += (double) c.size() * c.weight();
        }
        weightedSize /= totalWeight;
        AllocationRequest[] requests = new AllocationRequest[classes.size()];
        int[] cumulative = new int[classes.size()];
        for (int i = 0, acc = 0; i < classes.size(); i++) {
            requests[i] = AllocationRequest.of(classes.get(i).size(), replicas);
            acc += classes.get(i).weight();
            cumulative[i] = acc;
        }
        CaseResult result = newResult(pattern);

        // Prefill.
        long prefillFull = 0;
        long prefillPartial = 0;
        long prefillFailed = 0;
        long attempts = 0;
        long maxAttempts = 0;
        boolean reached = prefillPct <= 0;
        if (prefillPct > 0) {
            double target = prefillPct / 100.0;
            double targetBytes = clusterBytes() * target;
            maxAttempts = Math.max(5000, (long) Math.ceil(targetBytes / (weightedSize * replicas) * 2.0));
            int consecutiveFailures = 0;
            while (attempts < maxAttempts) {
                if (attempts % SAMPLE_INTERVAL == 0 && averageUtilisation() >= target) {
                    break;
                }
                int placed = allocateWithEvict(requests[pick(cumulative, totalWeight)], evictRatio);
                attempts++;
                if (placed == replicas) {
                    prefillFull++;
                } else if (placed > 0) {
                    prefillPartial++;
                } else {
                    prefillFailed++;
                }
                consecutiveFailures = placed == 0 ? consecutiveFailures + 1 : 0;
                if (consecutiveFailures >= MAX_CONSECUTIVE_FAILURES) {
                    break;
                }
            }
            reached = averageUtilisation() >= target;
        }
        prefillUtil = averageUtilisation() * 100;
        evictions = 0;

        // Measured loop.
        long[] latencies = new long[numAllocations];
        long[][] classOutcome = new long[classes.size()][3];
        long[][] classLatencies = new long[classes.size()][numAllocations];
        int[] classCount = new int[classes.size()];
        double[] frag = new double[numAllocations / SAMPLE_INTERVAL + 2];
        int samples = 0;
        long instrumentation = 0;
        long start = System.nanoTime();
        for (int i = 0; i < numAllocations; i++) {
            int c = pick(cumulative, totalWeight);
            long t0 = System.nanoTime();
            int placed = allocateWithEvict(requests[c], evictRatio);
            long t1 = System.nanoTime();
            latencies[i] = t1 - t0;
            classLatencies[c][classCount[c]++] = t1 - t0;
            int outcome = placed == replicas ? 0 : placed > 0 ? 1 : 2;
            classOutcome[c][outcome]++;
            if ((i + 1) % SAMPLE_INTERVAL == 0 || i == numAllocations - 1) {
                frag[samples++] = fragmentation();
                instrumentation += System.nanoTime() - t1;
            }
        }
        long elapsed = System.nanoTime() - start - instrumentation;
        fillLatency(result, latencies, numAllocations, elapsed);
        for (long[] o : classOutcome) {
            result.full += o[0];
            result.partial += o[1];
            result.failed += o[2];
        }
        result.total = numAllocations;
        result.evictions = evictions;
        fillFragmentation(result, Arrays.copyOf(frag, samples));
        result.avgUtilPct = averageUtilisation() * 100;
        result.utilStdDev = utilisationStdDev();

        String tag = " [" + result.label() + "]";
        result.summaryLines.add(String.format(Locale.ROOT,
                "Prefill summary%s: requested_pct=%.1f, achieved_pct=%.2f, reached=%s, attempts=%d/%d, "
                        + "full/partial/failed=%d/%d/%d", tag, prefillPct, prefillUtil, reached ? "yes" : "no",
                attempts, maxAttempts, prefillFull, prefillPartial, prefillFailed));
        result.summaryLines.add(String.format(Locale.ROOT,
                "Fragmentation summary%s: avg=%.4f, p50=%.4f, p90=%.4f, p99=%.4f, max=%.4f, final_largest_free=%.2fMB",
                tag, result.fragAvg, result.fragP50, result.fragP90, result.fragP99, result.fragMax,
                result.largestFreeMb));
        StringBuilder breakdown = new StringBuilder("Size-class breakdown:");
        for (int c = 0; c < classes.size(); c++) {
            SizeClass sc = classes.get(c);
            long[] sorted = Arrays.copyOf(classLatencies[c], classCount[c]);
            Arrays.sort(sorted);
            long[] o = classOutcome[c];
            breakdown.append(String.format(Locale.ROOT, " %s(%dKB,w=%d,full/partial/failed/total=%d/%d/%d/%d,p99_ns=%d)",
                    sc.name(), sc.size() >> 10, sc.weight(), o[0], o[1], o[2], classCount[c],
                    percentile(sorted, 0.99)));
        }
        result.summaryLines.add(breakdown.toString());
        return result;
    }

    private int pick(int[] cumulative, int totalWeight) {
        // Mooncake: uniform_int(1, Σw), then the first class whose cumulative weight reaches it.
        int r = 1 + classRandom.nextInt(totalWeight);
        for (int i = 0; i < cumulative.length; i++) {
            if (r <= cumulative[i]) {
                return i;
            }
        }
        return cumulative.length - 1;
    }

    /** The {@code fillup} workload: allocate only, never free. */
    CaseResult fillup(long size, int numAllocations, double prefillPct) {
        CaseResult result = newResult(sizeLabel(size));
        AllocationRequest request = AllocationRequest.of(size, replicas);
        if (prefillPct > 0) {
            prefillWithoutEviction(request, prefillPct);
        }
        long[] latencies = new long[numAllocations];
        double[] frag = new double[numAllocations / SAMPLE_INTERVAL + 2];
        int samples = 0;
        int n = 0;
        int consecutiveFailures = 0;
        long instrumentation = 0;
        long start = System.nanoTime();
        for (int i = 0; i < numAllocations; i++) {
            long t0 = System.nanoTime();
            int placed = allocateOnce(request);
            long t1 = System.nanoTime();
            latencies[n++] = t1 - t0;
            countOutcome(result, placed);
            if ((i + 1) % SAMPLE_INTERVAL == 0) {
                frag[samples++] = fragmentation();
                instrumentation += System.nanoTime() - t1;
            }
            consecutiveFailures = placed == 0 ? consecutiveFailures + 1 : 0;
            if (prefillPct <= 0 && consecutiveFailures >= MAX_CONSECUTIVE_FAILURES) {
                break;
            }
        }
        long elapsed = System.nanoTime() - start - instrumentation;
        frag[samples++] = fragmentation();
        fillLatency(result, latencies, n, elapsed);
        result.total = n;
        fillFragmentation(result, Arrays.copyOf(frag, samples));
        result.avgUtilPct = averageUtilisation() * 100;
        result.utilStdDev = utilisationStdDev();
        return result;
    }

    /** The {@code scaleout} workload: prefill, inject empty segments, allocate 30% of the new capacity. */
    CaseResult scaleout(long size) {
        CaseResult result = newResult(sizeLabel(size));
        prefillWithoutEviction(AllocationRequest.of(Math.max(size, SCALE_OUT_MIN_BLOCK), replicas),
                SCALE_OUT_TRIGGER_PCT);
        int before = segments.size();
        int injected = Math.max(1, before / 2);
        for (int i = 0; i < injected; i++) {
            addSegment(before);
        }
        view = Collections.unmodifiableList(new ArrayList<>(segments));
        result.segments = before;
        result.clusterBytes = clusterBytes();
        long count = (long) Math.ceil(clusterBytes() * ALLOC_PCT_AFTER_SCALE / 100.0 / ((double) size * replicas));
        int n = (int) Math.min(count, Integer.MAX_VALUE - 8);
        AllocationRequest request = AllocationRequest.of(size, replicas);
        long[] latencies = new long[n];
        double[] frag = new double[n / SAMPLE_INTERVAL + 2];
        int samples = 0;
        long instrumentation = 0;
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            int placed = allocateOnce(request);
            long t1 = System.nanoTime();
            latencies[i] = t1 - t0;
            countOutcome(result, placed);
            if ((i + 1) % SAMPLE_INTERVAL == 0 || i == n - 1) {
                frag[samples++] = fragmentation();
                if (result.convergeAt < 0 && utilisationStdDev() < CONVERGENCE_THRESHOLD) {
                    result.convergeAt = i + 1;
                    result.convUtilPct = averageUtilisation() * 100;
                }
                instrumentation += System.nanoTime() - t1;
            }
        }
        long elapsed = System.nanoTime() - start - instrumentation;
        fillLatency(result, latencies, n, elapsed);
        result.total = n;
        fillFragmentation(result, Arrays.copyOf(frag, samples));
        result.avgUtilPct = averageUtilisation() * 100;
        result.finalUtilPct = result.avgUtilPct;
        result.utilStdDev = utilisationStdDev();
        double oldUtil = 0;
        double newUtil = 0;
        for (BenchSegment s : segments) {
            if (s.index < before) {
                oldUtil += s.utilisation() / before;
            } else {
                newUtil += s.utilisation() / injected;
            }
        }
        result.summaryLines.add(String.format(Locale.ROOT,
                "Scale-out summary [%s]: injected=%d, old_segment_util_pct=%.2f, new_segment_util_pct=%.2f, "
                        + "final_util_stddev=%.4f, converge@=%s", result.label(), injected, oldUtil * 100,
                newUtil * 100, result.utilStdDev, result.convergeAt < 0 ? "never" : result.convergeAt));
        return result;
    }

    private void prefillWithoutEviction(AllocationRequest request, double pct) {
        double target = pct / 100.0;
        long maxAttempts = Math.max(5000,
                (long) Math.ceil(clusterBytes() * target / ((double) request.size() * replicas) * 2.0));
        int consecutiveFailures = 0;
        for (long attempts = 0; attempts < maxAttempts; attempts++) {
            if (attempts % SAMPLE_INTERVAL == 0 && averageUtilisation() >= target) {
                break;
            }
            consecutiveFailures = allocateOnce(request) == 0 ? consecutiveFailures + 1 : 0;
            if (consecutiveFailures >= MAX_CONSECUTIVE_FAILURES) {
                break;
            }
        }
    }

    // ------------------------------------------------------------------------------ helpers

    private CaseResult newResult(String pattern) {
        CaseResult r = new CaseResult();
        r.strategy = strategyName;
        r.replicas = replicas;
        r.segments = initialSegments;
        r.pattern = pattern;
        r.skewed = skewed;
        r.clusterBytes = clusterBytes();
        prefillUtil = Double.NaN;
        return r;
    }

    private void countOutcome(CaseResult result, int placed) {
        if (placed == replicas) {
            result.full++;
        } else if (placed > 0) {
            result.partial++;
        } else {
            result.failed++;
        }
    }

    private static void fillLatency(CaseResult result, long[] latencies, int n, long elapsedNanos) {
        long[] sorted = Arrays.copyOf(latencies, n);
        Arrays.sort(sorted);
        long sum = 0;
        for (long l : sorted) {
            sum += l;
        }
        result.avgNs = n == 0 ? 0 : (double) sum / n;
        result.p50Ns = percentile(sorted, 0.50);
        result.p90Ns = percentile(sorted, 0.90);
        result.p99Ns = percentile(sorted, 0.99);
        result.throughput = elapsedNanos <= 0 ? 0 : n * 1e9 / elapsedNanos;
    }

    /** Latency percentile as in Mooncake: sorted vector, index {@code p × n}. */
    static long percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        return sorted[Math.min(sorted.length - 1, (int) (p * sorted.length))];
    }

    /** Fragmentation percentile as in Mooncake: index {@code round(p × (n − 1))}. */
    static double fragPercentile(double[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        return sorted[(int) Math.round(p * (sorted.length - 1))];
    }

    private void fillFragmentation(CaseResult result, double[] samples) {
        double[] sorted = samples.clone();
        Arrays.sort(sorted);
        double sum = 0;
        for (double f : sorted) {
            sum += f;
        }
        result.fragAvg = sorted.length == 0 ? 0 : sum / sorted.length;
        result.fragP50 = fragPercentile(sorted, 0.50);
        result.fragP90 = fragPercentile(sorted, 0.90);
        result.fragP99 = fragPercentile(sorted, 0.99);
        result.fragMax = sorted.length == 0 ? 0 : sorted[sorted.length - 1];
        result.largestFreeMb = (double) largestFreeRegion() / MiB;
    }

    static String sizeLabel(long size) {
        return size % MiB == 0 ? (size / MiB) + "MiB" : (size >> 10) + "KiB";
    }
}
