package io.tiffin.core.client;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.TiffinException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The fresh-lookup retry of reads through the location cache: a read that fails after using a cached
 * location (a node refused a re-mounted segment's descriptor, or was unreachable) drops the entry and runs
 * once more with a fresh lookup, so the caller gets the master's current answer. Failures that a fresh
 * lookup cannot change (the caller's buffer is too small, bad arguments) are not retried.
 *
 * <p>Thread-safe (the location cache is).
 */
final class LocationRetry {
    /** Null when the location cache is disabled (then no read used it, and nothing is retried). */
    private final LocationCache locations;

    LocationRetry(LocationCache locations) {
        this.locations = locations;
    }

    /** One single-key read: told whether it may use the location cache, it sets {@code cached[0]} if it did. */
    @FunctionalInterface
    interface LocatedRead<T> {
        T run(boolean useCache, boolean[] cached);
    }

    /** Runs {@code read} with the location cache; after a failure through a cached location, once more without. */
    <T> T run(String key, LocatedRead<T> read) {
        boolean[] cached = new boolean[1];
        try {
            return read.run(true, cached);
        } catch (TiffinException e) {
            if (!cached[0] || !retryFresh(e.code())) {
                throw e;
            }
            locations.refused(key);
            return read.run(false, cached);
        }
    }

    /** Whether a failed read through a cached location should be retried with a fresh lookup. */
    static boolean retryFresh(ErrorCode code) {
        return code != ErrorCode.BUFFER_OVERFLOW && code != ErrorCode.INVALID_PARAMS && code != ErrorCode.INVALID_KEY;
    }

    /**
     * Positions of failed results whose location came from the location cache ({@code cached[i]}); their
     * entries are dropped, so the caller reads them again after a fresh lookup.
     */
    int[] refusedCached(List<? extends KeyResult<?>> results, boolean[] cached) {
        int n = 0;
        int[] at = new int[0];
        for (int i = 0; i < results.size(); i++) {
            KeyResult<?> r = results.get(i);
            if (cached[i] && !r.isOk() && retryFresh(r.code())) {
                locations.refused(r.key());
                if (n == at.length) {
                    at = Arrays.copyOf(at, Math.max(4, n * 2));
                }
                at[n++] = i;
            }
        }
        return Arrays.copyOf(at, n);
    }

    /** The elements of {@code all} at positions {@code at}, in that order. */
    static <T> List<T> pick(List<T> all, int[] at) {
        List<T> out = new ArrayList<>(at.length);
        for (int i : at) {
            out.add(all.get(i));
        }
        return out;
    }

    /** Puts {@code values} (in order) at positions {@code at} of {@code into}. */
    static <T> void splice(List<T> into, int[] at, List<T> values) {
        for (int j = 0; j < at.length; j++) {
            into.set(at[j], values.get(j));
        }
    }
}
