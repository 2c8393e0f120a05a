package io.tiffin.core.client;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaType;
import io.tiffin.api.TiffinException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * Where keys live: the location cache's answer when it holds a usable one ({@link LocationCache}), else the
 * master's (granting a read lease), remembered for reuse when the location may be reused and as the key's
 * read hint ({@link ReadHints}). Also answers exists from the location cache when it can: a location
 * leased by this client's earlier lookup is of an object not removed (a forced removal waits for it).
 *
 * <p>Linearizability rules kept here: a lookup's invalidation stamp is read before it is sent and its answer
 * kept only if the stamp has not moved ({@link LocationCache#put}); an entry's window is counted from the
 * moment the lookup was sent; each lookup tells the master how long this cache may reuse it and names this
 * cache ({@code cache_owner}), so a forced removal waits for other caches only.
 *
 * <p>Thread-safe (its caches are; the rest is immutable).
 */
final class Locator {
    private final MasterStub master;
    /** Null when disabled. */
    private final LocationCache locations;
    /** Null when disabled. */
    private final ReadHints hints;
    private final SameHostSegments sameHost;
    private final LeaseClock clock;
    private final long cacheOwner;

    /**
     * @param cacheOwner this client's location cache as the master knows it ({@code cache_owner}): positive,
     *     never 0 (unknown)
     */
    Locator(MasterStub master, ClientCaches caches, SameHostSegments sameHost, LeaseClock clock, long cacheOwner) {
        this.master = master;
        this.locations = caches.locations();
        this.hints = caches.hints();
        this.sameHost = sameHost;
        this.clock = clock;
        this.cacheOwner = cacheOwner;
    }

    long cacheOwner() {
        return cacheOwner;
    }

    /**
     * The location of {@code key} for a read: the location cache's when it holds a usable one (then
     * {@code cached[0]} is set), else the master's (granting a lease), remembered when it may be reused.
     */
    ObjectLocation locateForRead(String key, boolean useCache, boolean[] cached) {
        ObjectLocation hit = useCache ? cachedLocation(key, clock.now(), cached) : null;
        return hit != null ? hit : lookUp(key);
    }

    /** The location cache's usable location of {@code key} (then {@code cached[0]} is set), or null. */
    ObjectLocation cachedLocation(String key, long nowNanos, boolean[] cached) {
        if (locations == null) {
            return null;
        }
        ObjectLocation hit = locations.get(key, nowNanos);
        if (hit != null) {
            cached[0] = true;
        }
        return hit;
    }

    /** Asks the master (granting a lease); remembers the answer for reuse and as a read hint. */
    ObjectLocation lookUp(String key) {
        return lookUp(key, master::lookUp);
    }

    /**
     * {@link #lookUp} when the master runs in this JVM (a direct call that never waits on the network: see
     * {@link MasterStub#lookUpInThisJvm}); null, nothing asked, when it runs elsewhere.
     */
    ObjectLocation lookUpInThisJvm(String key) {
        return lookUp(key, master::lookUpInThisJvm);
    }

    /** A GetReplicaList of {@code key} for a cache reusing it {@code cacheForMs} (owner {@code cacheOwner}); or null. */
    @FunctionalInterface
    private interface Asker {
        ObjectLocation ask(String key, int cacheForMs, long cacheOwner);
    }

    private ObjectLocation lookUp(String key, Asker asker) {
        long stamp = locations == null ? 0 : locations.stamp(key);
        long sent = clock.now();
        // forced removals wait for the reuse this cache asks for
        ObjectLocation loc = locations == null ? asker.ask(key, 0, 0)
                : asker.ask(key, locations.cacheForMillis(), cacheOwner);
        if (loc == null) {
            return null;
        }
        remember(loc, sent, stamp);
        if (hints != null) {
            hints.remember(key, loc.replicas(), sameHost::isDirect);
        }
        return loc;
    }

    /** The master's location of {@code key} (granting a lease, not cached), or empty when it does not exist. */
    Optional<ObjectLocation> locate(String key) {
        try {
            return Optional.of(master.lookUp(key, 0, 0));
        } catch (TiffinException e) {
            if (e.code() == ErrorCode.OBJECT_NOT_FOUND) {
                return Optional.empty();
            }
            throw e;
        }
    }

    private void remember(ObjectLocation loc, long sentNanos, long stamp) {
        if (locations != null && isReusable(loc)) {
            locations.put(loc, sentNanos, stamp);
        }
    }

    /**
     * Whether a location may be reused: it has memory replicas, each carrying a mount epoch that the read
     * checks — the node on its data plane, this client after a copy through a mapping whose node publishes
     * its epoch. Objects with a replica read through a mapping without one are looked up every time.
     */
    private boolean isReusable(ObjectLocation loc) {
        boolean memory = false;
        for (ReplicaDescriptor d : loc.replicas()) {
            if (d.type() == ReplicaType.MEMORY) {
                if (d.mountEpoch() == 0 || (sameHost.isDirect(d) && sameHost.mountEpoch(d) < 0)) {
                    return false;
                }
                memory = true;
            }
        }
        return memory;
    }

    /**
     * Keys split by the location cache: {@code hits[i]} is key i's usable cached location or null, and
     * {@code ask} lists the keys it could not answer (all of them without a cache), each at position
     * {@code askAt[j]} of the request.
     */
    private record CacheSplit(ObjectLocation[] hits, List<String> ask, int[] askAt) {
    }

    private CacheSplit splitByLocationCache(List<String> keys) {
        int n = keys.size();
        ObjectLocation[] hits = new ObjectLocation[n];
        List<String> ask = new ArrayList<>(n);
        int[] askAt = new int[n];
        long now = clock.now();
        for (int i = 0; i < n; i++) {
            String key = keys.get(i);
            hits[i] = locations == null || key == null ? null : locations.get(key, now);
            if (hits[i] == null) {
                askAt[ask.size()] = i;
                ask.add(key);
            }
        }
        return new CacheSplit(hits, ask, askAt);
    }

    /**
     * The keys' locations, one per key in order: with {@code cached} non-null, those the location cache
     * holds come from it (marked in {@code cached}) and only the others are asked of the master, in one
     * batch; with null, all are asked. Locations from the master are remembered when reusable.
     */
    List<KeyResult<ObjectLocation>> batchLocate(List<String> keys, boolean[] cached) {
        int n = keys.size();
        List<KeyResult<ObjectLocation>> out = new ArrayList<>(Collections.nCopies(n, null));
        List<String> ask = keys;
        int[] askAt = null;
        if (cached != null && locations != null) {
            CacheSplit split = splitByLocationCache(keys);
            for (int i = 0; i < n; i++) {
                if (split.hits()[i] != null) {
                    cached[i] = true;
                    out.set(i, KeyResult.ok(keys.get(i), split.hits()[i]));
                }
            }
            if (split.ask().isEmpty()) {
                return out;
            }
            ask = split.ask();
            askAt = split.askAt();
        }
        long[] stamps = new long[ask.size()];
        for (int j = 0; locations != null && j < ask.size(); j++) {
            stamps[j] = ask.get(j) == null ? 0 : locations.stamp(ask.get(j));
        }
        long sent = clock.now();
        List<KeyResult<ObjectLocation>> answers = locations == null ? master.batchLookUp(ask, 0, 0)
                : master.batchLookUp(ask, locations.cacheForMillis(), cacheOwner);
        for (int j = 0; j < ask.size(); j++) {
            int i = askAt == null ? j : askAt[j];
            KeyResult<ObjectLocation> r = answers.get(j);
            if (r.isOk()) {
                remember(r.value(), sent, stamps[j]);
                out.set(i, KeyResult.ok(keys.get(i), r.value()));
            } else {
                out.set(i, KeyResult.failed(keys.get(i), r.code()));
            }
        }
        return out;
    }

    /** Whether {@code key} exists: true at once when this client holds a usable location of it. */
    boolean exists(String key) {
        if (locations != null && key != null && locations.get(key, clock.now()) != null) {
            return true; // leased by this client's earlier lookup: not removed (a forced removal waits for it)
        }
        return master.exists(key);
    }

    /**
     * {@link #exists} when this client holds a usable location of the key or a master of this JVM answers it
     * directly ({@link MasterStub#existsInThisJvm}); null, nothing asked, when the master runs elsewhere.
     */
    Boolean existsInThisJvm(String key) {
        if (master.masterInThisJvm() == null) {
            // nothing asked here: a miss is counted once, by the exists() the caller asks next
            return locations != null && locations.getCountingHitsOnly(key, clock.now()) != null ? Boolean.TRUE : null;
        }
        if (locations != null && locations.get(key, clock.now()) != null) {
            return true;
        }
        return master.existsInThisJvm(key);
    }

    /** {@link #exists} for many keys: the master is asked, in one batch, about those the cache cannot answer. */
    List<KeyResult<Boolean>> batchExists(List<String> keys) {
        List<KeyResult<Boolean>> out = new ArrayList<>(Collections.nCopies(keys.size(), null));
        CacheSplit split = splitByLocationCache(keys);
        for (int i = 0; i < keys.size(); i++) {
            if (split.hits()[i] != null) {
                out.set(i, KeyResult.ok(keys.get(i), true));
            }
        }
        List<String> ask = split.ask();
        int[] askAt = split.askAt();
        if (ask.isEmpty()) {
            return out;
        }
        List<KeyResult<Boolean>> answers = master.batchExists(ask);
        for (int j = 0; j < ask.size(); j++) {
            out.set(askAt[j], answers.get(j));
        }
        return out;
    }
}
