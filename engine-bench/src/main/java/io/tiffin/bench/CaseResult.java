package io.tiffin.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * What one strategy did in one case of the allocation benchmark: the figures of a table row and CSV
 * line, and the summary lines printed under the row.
 *
 * <p>Not thread-safe: filled by one run, then only read.
 */
final class CaseResult {
    String strategy;
    int replicas;
    int segments;
    /** Size-class pattern ({@code size_class_churn}) or object size label (fillup, scaleout). */
    String pattern;
    boolean skewed;
    long clusterBytes;
    double throughput;
    double avgNs;
    long p50Ns;
    long p90Ns;
    long p99Ns;
    double fragAvg;
    double fragP50;
    double fragP90;
    double fragP99;
    double fragMax;
    double largestFreeMb;
    double avgUtilPct;
    double utilStdDev;
    long full;
    long partial;
    long failed;
    long total;
    long evictions;
    /** Scale-out only: average utilisation when the spread first fell below the threshold, in %. */
    double convUtilPct = Double.NaN;
    /** Scale-out only: average utilisation at the end, in %. */
    double finalUtilPct = Double.NaN;
    /** Scale-out only: allocation count at convergence, or -1 if the spread never converged. */
    long convergeAt = -1;
    final List<String> summaryLines = new ArrayList<>();

    /** The case without the strategy: what strategies are compared on. */
    String caseKey() {
        return "r=" + replicas + " s=" + segments + " " + pattern + (skewed ? " skewed" : "");
    }

    String label() {
        return strategy + " " + caseKey();
    }

    long successes() {
        return full + partial;
    }
}
