package io.tiffin.core.client;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.TiffinException;
import io.tiffin.core.keys.KeyQuery;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * Removes through the master, keeping this client's caches consistent: the keys are dropped from them
 * before the remove and again after it (a lookup of another thread answered meanwhile, with a lease that a
 * forced remove does not wait for, must not leave the removed object in the location cache); every remove
 * names this client's location cache ({@code cache_owner}), so a forced removal does not wait for locations
 * only this cache holds. A removal refused while a node copies the object to SSD or back is asked again
 * ({@link BriefRefusals}).
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
            for (int attempt = 0; ; attempt++) {
                try {
                    master.remove(key, force, cacheOwner);
                    return;
                } catch (TiffinException e) {
                    if (!BriefRefusals.ofRemove(e.code()) || attempt >= BriefRefusals.RETRIES) {
                        throw e;
                    }
                    BriefRefusals.pause(attempt, e.code(), "the removal of " + key);
                }
            }
        } finally {
            caches.invalidate(key);
        }
    }

    List<KeyResult<Void>> batchRemove(List<String> keys, boolean force) {
        keys.forEach(caches::invalidate);
        List<ErrorCode> codes;
        try {
            codes = new ArrayList<>(master.batchRemove(keys, force, cacheOwner));
            for (int attempt = 0; attempt < BriefRefusals.RETRIES; attempt++) {
                List<Integer> again = new ArrayList<>();
                for (int i = 0; i < keys.size(); i++) {
                    if (BriefRefusals.ofRemove(codes.get(i))) {
                        again.add(i);
                    }
                }
                if (again.isEmpty()) {
                    break;
                }
                BriefRefusals.pause(attempt, codes.get(again.getFirst()), "a batch removal");
                List<ErrorCode> retried = master.batchRemove(again.stream().map(keys::get).toList(), force, cacheOwner);
                for (int j = 0; j < again.size(); j++) {
                    codes.set(again.get(j), retried.get(j));
                }
            }
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
