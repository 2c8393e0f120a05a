package io.tiffin.core.client;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.tiffin.api.ObjectLocation;
import io.tiffin.core.transport.LookupReuse;
import io.tiffin.core.util.Ticker;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;

/**
 * Object locations this client looked up, reused for later reads of the same key while the read lease
 * of the lookup still protects them, so a repeated get or exists costs no master round trip.
 *
 * <p><b>Why a reuse is safe.</b> A lookup grants a read lease ({@code master.lease-ttl}); until it ends the
 * master neither evicts the object nor lets an ordinary remove or an upsert replace it, and a forced
 * remove or an offload keeps the replica's memory out of reach of new puts until the lease ends. So the
 * bytes a cached location names stay the object's bytes for the whole lease. An entry is used only
 * within {@code min(client.location-cache-ttl, lease / 2, 20 s)} of the moment its lookup was <em>sent</em> (the
 * master started the lease later), and a read through it must end within the lease, as for any get.
 * What the master forgets without asking — a master restart, a node that missed its heartbeats and
 * re-mounted — is caught by the node once it has re-mounted: every descriptor carries the segment's mount
 * epoch and the node refuses a stale one, after which the client drops the entry and looks the key up
 * again (until then a restarted master holds PutEnd answers, {@code MasterService#restartGuardUntilMillis}).
 *
 * A forced remove ignores leases, so every lookup tells the master how long this cache may reuse its answer
 * ({@link #cacheForMillis}); the master reports a forced removal of the object only once that has passed
 * and refuses puts of the key until then, so a get that starts after a remove returned never finds the
 * object, cached or not. This client's own removes and puts drop its entries at once, so the master does
 * not wait for locations that only this cache asked for (the lookup names the cache: {@code cache_owner}).
 *
 * <p><b>What it changes.</b> Reads through a cached location are not seen by the master: they renew no
 * lease and do not move the object in the eviction order until the entry expires and the next lookup
 * does. A forced remove of an object some client has cached returns only after that client's reuse ends
 * (at most the TTL and a quarter); while it waits, the key is gone for lookups but a client holding the
 * location may still read the object.
 *
 * <p>Only locations whose memory replicas are all read through nodes' data planes (whose mount epoch the
 * node checks) and carry a mount epoch are kept; replicas read through same-JVM or shared-memory
 * mappings are looked up every time.
 *
 * <p>Moments ({@code nowNanos}, {@code lookupNanos}) are of the client's clock ({@link Ticker#nanos()}); the
 * entries' expiry runs on the same ticker.
 *
 * <p>Thread-safe (a Caffeine cache; counters are {@link LongAdder}s). Holds no off-heap memory.
 */
public final class LocationCache {

    /**
     * @param ttl longest reuse of one lookup; {@link Duration#ZERO} disables the cache
     * @param maxEntries most locations kept (least recently used ones go first)
     */
    public record Settings(Duration ttl, long maxEntries) {
        public static final Settings DISABLED = new Settings(Duration.ZERO, 0);
        /** The defaults of {@code client.location-cache-ttl} and {@code client.location-cache-size}. */
        public static final Settings DEFAULT = new Settings(Duration.ofSeconds(2), 100_000);

        public Settings {
            if (ttl == null || ttl.isNegative()) {
                throw new IllegalArgumentException("client.location-cache-ttl = " + ttl + " (expected: >= 0, 0 = off)");
            }
            if (maxEntries < 0) {
                throw new IllegalArgumentException("client.location-cache-size = " + maxEntries + " (expected: >= 0)");
            }
        }

        public boolean enabled() {
            return !ttl.isZero() && maxEntries > 0;
        }
    }

    /**
     * The longest any lookup's answer is reused, whatever the TTL and lease ({@link LookupReuse#MAX_MILLIS}):
     * the master holds a forced removal of a cached object up to this and a quarter, and applies the same
     * bound.
     */
    public static final long MAX_REUSE_MILLIS = LookupReuse.MAX_MILLIS;

    /** Counters since the client started. */
    public record Stats(long hits, long misses, long refused, long size) {
    }

    /**
     * @param location as the master answered
     * @param lookupNanos the client's clock ({@link Ticker#nanos()}) just before the lookup was sent
     * @param usableUntilNanos last moment the entry may be used
     */
    private record Entry(ObjectLocation location, long lookupNanos, long usableUntilNanos) {
    }

    /** Stripes of invalidation stamps: a key's stamp changes whenever its entry is dropped. */
    private static final int STRIPES = 256;

    private final long ttlNanos;
    /**
     * Per stripe of keys, how many invalidations it has seen. A lookup reads its key's stamp before it is
     * sent; its answer is kept only if the stamp has not moved since, so a lookup that overlapped this
     * client's own remove of the key cannot put back what the remove dropped.
     */
    private final AtomicLongArray stamps = new AtomicLongArray(STRIPES);
    private final Cache<String, Entry> entries;
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private final LongAdder refused = new LongAdder();

    /** On the system clock. */
    public LocationCache(Settings settings) {
        this(settings, Ticker.SYSTEM);
    }

    /** With entries expiring on {@code ticker} (the clock the callers' moments are read on). */
    public LocationCache(Settings settings, Ticker ticker) {
        if (!settings.enabled()) {
            throw new IllegalArgumentException("the location cache is disabled by " + settings);
        }
        this.ttlNanos = settings.ttl().toNanos();
        this.entries = Caffeine.newBuilder().maximumSize(settings.maxEntries())
                .expireAfterWrite(settings.ttl().toNanos(), TimeUnit.NANOSECONDS).ticker(ticker::nanos)
                .executor(Runnable::run) // maintenance on the calling thread: no pool threads of its own
                .build();
    }

    /**
     * The cached location of {@code key} to read now, or null. Its {@link ObjectLocation#leaseTtlMillis()}
     * is what is left of the lease at {@code nowNanos}, so the caller's usual check ("the read must end
     * within the lease, counted from the call's start") keeps holding.
     */
    public ObjectLocation get(String key, long nowNanos) {
        ObjectLocation l = getCountingHitsOnly(key, nowNanos);
        if (l == null) {
            misses.increment();
        }
        return l;
    }

    /**
     * {@link #get}, but a miss is not counted: for a caller that may give up and ask {@link #get} again, or that
     * counts the miss itself with {@link #countMiss} once it is sure it is one (one read, one count).
     */
    public ObjectLocation getCountingHitsOnly(String key, long nowNanos) {
        Entry e = entries.getIfPresent(key);
        if (e == null || nowNanos - e.usableUntilNanos() > 0) {
            return null;
        }
        long leftMillis = e.location().leaseTtlMillis() - TimeUnit.NANOSECONDS.toMillis(nowNanos - e.lookupNanos());
        if (leftMillis <= 0) {
            return null;
        }
        hits.increment();
        ObjectLocation l = e.location();
        return new ObjectLocation(l.key(), l.size(), l.version(), leftMillis, l.replicas(), l.crc32c());
    }

    /** Counts a miss of {@link #getCountingHitsOnly}. */
    public void countMiss() {
        misses.increment();
    }

    private static int stripe(String key) {
        return (key.hashCode() * 0x9E3779B9) >>> 24;
    }

    /**
     * What a lookup tells the master ({@code cache_for_ms}): the longest this cache reuses its answer, in
     * whole milliseconds rounded up. The master reports a forced removal of the object only after that.
     */
    public int cacheForMillis() {
        return (int) Math.min(Integer.MAX_VALUE, (ttlNanos + 999_999) / 1_000_000);
    }

    /** The key's invalidation stamp; read it before sending a lookup and pass it to {@link #put}. */
    public long stamp(String key) {
        return stamps.get(stripe(key));
    }

    /**
     * Keeps a location the master just answered; {@code lookupNanos} is when the lookup was sent and
     * {@code stamp} the key's {@link #stamp} read before that. Not kept if the key's entry was dropped
     * since (the answer may predate a remove).
     */
    public void put(ObjectLocation location, long lookupNanos, long stamp) {
        long leaseNanos = TimeUnit.MILLISECONDS.toNanos(location.leaseTtlMillis());
        long usable = Math.min(Math.min(ttlNanos, leaseNanos / 2), TimeUnit.MILLISECONDS.toNanos(MAX_REUSE_MILLIS));
        String key = location.key();
        if (usable <= 0 || stamp(key) != stamp) {
            return;
        }
        Entry entry = new Entry(location, lookupNanos, lookupNanos + usable);
        entries.put(key, entry);
        if (stamp(key) != stamp) {
            entries.asMap().remove(key, entry); // an invalidation ran between the check and the put
        }
    }

    /** Drops the key's entry (this client removed or wrote it). */
    public void invalidate(String key) {
        stamps.incrementAndGet(stripe(key));
        entries.invalidate(key);
    }

    /** Drops the key's entry after a read through it failed (a node refused it or was unreachable). */
    public void refused(String key) {
        refused.increment();
        invalidate(key);
    }

    /** Drops the entries of matching keys. */
    public void invalidateMatching(Predicate<String> keys) {
        for (int i = 0; i < STRIPES; i++) {
            stamps.incrementAndGet(i);
        }
        entries.asMap().keySet().removeIf(keys);
    }

    public Stats stats() {
        entries.cleanUp(); // pending evictions first, so the size is current
        return new Stats(hits.sum(), misses.sum(), refused.sum(), entries.estimatedSize());
    }
}
