package io.tiffin.core.client;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.core.keys.KeyQuery;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * Removes through the master, keeping this client's caches consistent: the keys are dropped from them
 * before the remove and again after it (a lookup of another thread answered meanwhile, with a lease that a
 * forced remove does not wait for, must not leave the removed object in the location cache); every remove
 * names this client's location cache ({@code cache_owner}), so a forced removal does not wait for locations
 * only this cache holds.
 *
 * <p>Thread-safe (no state of its own). Arguments are checked by the caller ({@link TiffinClient}).
 */
final class Removals {
    private final MasterStub master;
    private final ClientCaches caches;
    private final long cacheOwner;

    Removals(MasterStub master, ClientCaches caches, long cacheOwner) {
        this.master = master;
        this.caches = caches;
        this.cacheOwner = cacheOwner;
    }

    void remove(String key, boolean force) {
        caches.invalidate(key);
        try {
            master.remove(key, force, cacheOwner);
        } finally {
            caches.invalidate(key);
        }
    }

    List<KeyResult<Void>> batchRemove(List<String> keys, boolean force) {
        keys.forEach(caches::invalidate);
        List<ErrorCode> codes;
        try {
            codes = master.batchRemove(keys, force, cacheOwner);
        } finally {
            keys.forEach(caches::invalidate);
        }
        List<KeyResult<Void>> out = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            ErrorCode code = codes.get(i);
            out.add(code == ErrorCode.OK ? KeyResult.ok(keys.get(i), null) : KeyResult.failed(keys.get(i), code));
        }
        return out;
    }

    /** The pattern is compiled here only when a cache is on; else the master alone judges it. */
    long removeByRegex(String regex, boolean force) {
        Predicate<String> matching = caches.anyEnabled() ? KeyQuery.compile(regex)::matches : null;
        if (matching != null) {
            caches.invalidateMatching(matching);
        }
        try {
            return master.removeByRegex(regex, force, cacheOwner);
        } finally {
            if (caches.locations() != null) {
                caches.locations().invalidateMatching(matching);
            }
        }
    }

    long removeAll(boolean force) {
        caches.invalidateMatching(k -> true);
        try {
            return master.removeAll(force, cacheOwner);
        } finally {
            if (caches.locations() != null) {
                caches.locations().invalidateMatching(k -> true);
            }
        }
    }
}
