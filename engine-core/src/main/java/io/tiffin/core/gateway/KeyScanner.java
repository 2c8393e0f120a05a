package io.tiffin.core.gateway;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * KEYS and SCAN for one connection, over the store's sorted prefix listings: a pattern's literal prefix
 * ({@link Glob#prefix()}) narrows the listing to that prefix (the master's prefix index), and the pattern
 * filters what it returns.
 *
 * <p>A SCAN cursor is the position after the last key returned in the sorted listing of the prefix. The
 * connection keeps the listing of its scan (fetched in growing pieces, each at least twice the last, so a
 * whole scan lists every key about twice) and the last key of each cursor it handed out, so it resumes
 * after that key even if keys before it were removed meanwhile: a key present for the whole scan is
 * returned. A cursor from elsewhere is taken as a position. The master lists at most
 * {@link GatewayStore#listLimit()} keys per call and cannot yet list from a given key on, so KEYS and SCAN
 * refuse to go beyond that many keys under one prefix (with an error that says so) instead of answering
 * part of them.
 *
 * <p>The listing held is counted in the gateway's memory budget until it is replaced or the connection ends.
 *
 * <p>Thread-safe: its connection's thread scans; the event loop resets it when the connection closes.
 */
final class KeyScanner {
    private static final int FIRST_FETCH = 1024;
    private static final int REMEMBERED_CURSORS = 64;

    private final GatewayStore store;
    private final MemoryBudget budget;
    /** Bytes of the listing held, counted in the budget. */
    private long held;
    private String prefix;
    private List<String> listing = List.of();
    private boolean truncated;
    private final Map<Long, String> lastKeys = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, String> eldest) {
            return size() > REMEMBERED_CURSORS;
        }
    };

    KeyScanner(GatewayStore store, MemoryBudget budget) {
        this.store = store;
        this.budget = budget;
    }

    /**
     * One SCAN step.
     *
     * @param cursor 0 to start, else a cursor this returned
     * @param count how many keys of the listing to look at (Redis's COUNT hint)
     */
    synchronized Page scan(long cursor, Glob glob, int count) {
        String p = glob.prefix();
        if (cursor == 0 || !p.equals(prefix)) {
            fetch(p, FIRST_FETCH);
        }
        int from = position(cursor);
        long want = (long) from + count;
        while (want > listing.size() && truncated) {
            if (listing.size() >= store.listLimit()) {
                throw tooMany("SCAN", p);
            }
            fetch(p, (int) Math.min(store.listLimit(), Math.max(want, 2L * listing.size())));
            from = position(cursor);
        }
        int to = (int) Math.min(listing.size(), want);
        List<String> keys = new ArrayList<>();
        for (int i = from; i < to; i++) {
            if (glob.matches(listing.get(i))) {
                keys.add(listing.get(i));
            }
        }
        if (to >= listing.size() && !truncated) {
            return new Page(0, keys);
        }
        long next = to == 0 ? 1 : to;
        if (to > 0) {
            lastKeys.put(next, listing.get(to - 1));
        }
        return new Page(next, keys);
    }

    /** Every key matching {@code glob} (KEYS). */
    List<String> keys(Glob glob) {
        GatewayStore.KeyListing all = store.list(glob.prefix(), store.listLimit());
        if (all.truncated()) {
            throw tooMany("KEYS", glob.prefix());
        }
        if (glob.matchesEverything()) {
            return all.keys();
        }
        List<String> out = new ArrayList<>();
        for (String k : all.keys()) {
            if (glob.matches(k)) {
                out.add(k);
            }
        }
        return out;
    }

    /** Forgets the scan in progress (RESET, the connection's end). */
    synchronized void reset() {
        prefix = null;
        listing = List.of();
        truncated = false;
        lastKeys.clear();
        budget.release(held);
        held = 0;
    }

    private void fetch(String p, int limit) {
        GatewayStore.KeyListing l = store.list(p, limit);
        long bytes = 0;
        for (String k : l.keys()) {
            bytes += 48 + 2L * k.length();
        }
        budget.forceReserve(bytes);
        budget.release(held);
        held = bytes;
        prefix = p;
        listing = l.keys();
        truncated = l.truncated();
    }

    /** Where cursor {@code c} resumes in the current listing. */
    private int position(long c) {
        if (c == 0) {
            return 0;
        }
        String last = lastKeys.get(c);
        if (last != null) {
            int i = Collections.binarySearch(listing, last);
            return i >= 0 ? i + 1 : -i - 1;
        }
        return c < 0 || c > listing.size() ? listing.size() : (int) c;
    }

    private RespError tooMany(String command, String p) {
        return RespError.err("NOT_SUPPORTED " + command + " would need more than the first " + store.listLimit()
                + " keys " + (p.isEmpty() ? "of the store" : "starting with '" + p + "'") + ": the master lists at most"
                + " that many per call and cannot page yet; use a pattern with a longer literal prefix");
    }

    /**
     * One SCAN answer.
     *
     * <p>Thread-safe (immutable).
     *
     * @param next the cursor to continue with; 0 when the scan is complete
     * @param keys the keys to return
     */
    record Page(long next, List<String> keys) {
    }
}
