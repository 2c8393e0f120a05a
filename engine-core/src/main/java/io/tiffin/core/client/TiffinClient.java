package io.tiffin.core.client;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.KvStore;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.hotcache.HotCacheSettings;
import io.tiffin.core.client.hotcache.LocalHotCache;
import io.tiffin.core.local.InProcessMasters;
import io.tiffin.core.transport.BlockingConnectionPool;
import io.tiffin.core.transport.TiffinVersion;
import io.tiffin.core.transport.TransportClientPool;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.util.Ticker;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * The Tiffin client ({@link KvStore}): asks the master where objects live and moves the bytes directly
 * to and from nodes. A replica in a segment served by this JVM is copied with a plain memory copy (no
 * socket); other replicas go over the node's data plane in slices of at most
 * {@code client.transfer-slice-size} (16 MiB). Master RPCs and memory reads and writes run on pooled
 * blocking connections driven by the calling thread ({@link BlockingConnectionPool}): every slice
 * request of a call is written to its node before any answer is read, and answers are received
 * straight into the caller's memory (bytes the hot cache keeps are received into a staging buffer first
 * and handed to the cache). SSD reads and fallbacks to other replicas use the asynchronous Netty client.
 *
 * <p>Writes: PutStart → write every replica → PutEnd; any failed write → PutRevoke and {@link
 * ErrorCode#TRANSFER_FAIL} ({@link PutPipeline}). Reads: GetReplicaList (a lease) → local memory replica
 * first, then remote ones in the master's order (the next replica is tried if one fails) → {@link
 * ErrorCode#LEASE_EXPIRED} if the lease ran out before the read ended ({@link ReadPipeline}, {@link
 * PinnedReads}). A get of a key whose replica this client saw before reads that replica while the lookup
 * is under way and keeps the bytes only if the lookup names that very replica ({@link HintedReads}).
 *
 * <p>This class checks arguments and hands each call to its collaborator: {@link MasterStub} (the master's
 * operations), {@link Locator} (lookups and the location cache), {@link SameHostSegments} (direct copies),
 * {@link Removals}, {@link CacheReporter}.
 *
 * <p>Thread-safe: share one instance. Owns its connection pools, caches, mappings and reporting thread;
 * {@link #close()} releases them.
 */
public final class TiffinClient implements KvStore {

    /**
     * How to connect; build with {@link #builder(String)} (or start from {@link #defaults(String)}).
     *
     * <p>Thread-safe (immutable).
     *
     * @param masterAddress {@code host:port} of the master
     * @param transport connection settings (frame limit, auth token, timeouts, event loops)
     * @param sliceSize largest data-plane transfer, bytes ({@code client.transfer-slice-size}, at least 1 KiB)
     * @param localMemcpy same-JVM shortcuts: copy same-JVM replicas directly and call a master of this JVM
     *     directly ({@link InProcessMasters})
     * @param hotCache settings of the local hot cache of objects read from other nodes; null = none
     * @param sharedMemory same-host shortcut: map the segments that nodes on this host keep in shared
     *     memory ({@link SharedSegments}) and copy directly
     * @param locationCache reuse of lookups within their read lease ({@link LocationCache}); null = off
     * @param readHints most keys whose last known replica a get reads while looking the key up ({@link
     *     ReadHints}; {@code client.read-hint-cache-size}); 0 = off
     * @param ticker the client's clock: leases, location-cache windows, shared-memory liveness
     * @param failoverTimeout how long a call looks for the leader among several masters, or waits for one that
     *     recovers after a takeover ({@code client.failover-timeout})
     * @param verifyChecksums reads check the bytes they receive against the object's CRC32C and try another
     *     replica when they fail it ({@code client.verify-checksums})
     */
    public record Options(String masterAddress, TransportSettings transport, long sliceSize, boolean localMemcpy,
                          HotCacheSettings hotCache, boolean sharedMemory, LocationCache.Settings locationCache,
                          long readHints, Ticker ticker, java.time.Duration failoverTimeout, boolean verifyChecksums) {
        /** Prefer {@link #builder(String)}, which names each setting. */
        public Options {
            Objects.requireNonNull(masterAddress, "masterAddress");
            failoverTimeout = failoverTimeout == null ? java.time.Duration.ofSeconds(15) : failoverTimeout;
            Objects.requireNonNull(transport, "transport");
            Objects.requireNonNull(ticker, "ticker");
            locationCache = locationCache == null ? LocationCache.Settings.DISABLED : locationCache;
            if (sliceSize < 1024) {
                throw new IllegalArgumentException("client.transfer-slice-size = " + sliceSize + " (expected: >= 1KiB)");
            }
            if (readHints < 0) {
                throw new IllegalArgumentException("client.read-hint-cache-size = " + readHints + " (expected: >= 0, 0 = off)");
            }
        }

        /**
         * A builder starting from {@link #defaults(String)}: default transport, 16 MiB slices, same-JVM and
         * same-host shortcuts on, no hot cache, the default location cache and read hints, the system clock.
         */
        public static Builder builder(String masterAddress) {
            return new Builder(masterAddress);
        }

        /** The defaults ({@link #builder(String)} with nothing changed). */
        public static Options defaults(String masterAddress) {
            return builder(masterAddress).build();
        }

        /** A builder holding these options. */
        public Builder toBuilder() {
            return new Builder(masterAddress).transport(transport).sliceSize(sliceSize).localMemcpy(localMemcpy)
                    .hotCache(hotCache).sharedMemory(sharedMemory).locationCache(locationCache).readHints(readHints)
                    .ticker(ticker).failoverTimeout(failoverTimeout).verifyChecksums(verifyChecksums);
        }

        public Options withHotCache(HotCacheSettings settings) {
            return toBuilder().hotCache(settings).build();
        }

        public Options withSharedMemory(boolean enabled) {
            return toBuilder().sharedMemory(enabled).build();
        }

        public Options withMasterAddress(String address) {
            return toBuilder().masterAddress(address).build();
        }

        public Options withLocationCache(LocationCache.Settings settings) {
            return toBuilder().locationCache(settings).build();
        }

        /** {@code entries} read hints ({@link ReadHints}; 0 = none: every get waits for its lookup). */
        public Options withReadHints(long entries) {
            return toBuilder().readHints(entries).build();
        }

        /**
         * Builds {@link Options}; every setting has a default (see {@link Options#builder(String)}). Values
         * are checked by {@link #build()}, whose exceptions name the setting.
         *
         * <p>Not thread-safe: build on one thread.
         */
        public static final class Builder {
            private String masterAddress;
            private TransportSettings transport = TransportSettings.defaults();
            private long sliceSize = 16L << 20;
            private boolean localMemcpy = true;
            private HotCacheSettings hotCache;
            private boolean sharedMemory = true;
            private LocationCache.Settings locationCache = LocationCache.Settings.DEFAULT;
            private long readHints = ReadHints.DEFAULT_SIZE;
            private Ticker ticker = Ticker.SYSTEM;
            private java.time.Duration failoverTimeout = java.time.Duration.ofSeconds(15);
            private boolean verifyChecksums = true;

            private Builder(String masterAddress) {
                this.masterAddress = masterAddress;
            }

            /** How long a call looks for the leader, or waits for one that recovers ({@code client.failover-timeout}). */
            public Builder failoverTimeout(java.time.Duration timeout) {
                this.failoverTimeout = timeout;
                return this;
            }

            /** {@code host:port} of the master, or of every master ({@code host:port,host:port,...}). */
            public Builder masterAddress(String address) {
                this.masterAddress = address;
                return this;
            }

            /** Connection settings (frame limit, auth token, timeouts, event loops). */
            public Builder transport(TransportSettings settings) {
                this.transport = settings;
                return this;
            }

            /** Largest data-plane transfer, bytes ({@code client.transfer-slice-size}; at least 1 KiB). */
            public Builder sliceSize(long bytes) {
                this.sliceSize = bytes;
                return this;
            }

            /** Same-JVM shortcuts: direct copies of this JVM's segments, direct calls of this JVM's master. */
            public Builder localMemcpy(boolean enabled) {
                this.localMemcpy = enabled;
                return this;
            }

            /** Same-host shortcut: map same-host nodes' shared-memory segments and copy directly. */
            public Builder sharedMemory(boolean enabled) {
                this.sharedMemory = enabled;
                return this;
            }

            /** The hot cache of objects read from other nodes; null = none. */
            public Builder hotCache(HotCacheSettings settings) {
                this.hotCache = settings;
                return this;
            }

            /** Reuse of lookups within their lease; null or {@link LocationCache.Settings#DISABLED} = off. */
            public Builder locationCache(LocationCache.Settings settings) {
                this.locationCache = settings;
                return this;
            }

            /** Most read hints kept ({@code client.read-hint-cache-size}); 0 = off. */
            public Builder readHints(long entries) {
                this.readHints = entries;
                return this;
            }

            /** Whether reads check the bytes they receive against the object's CRC32C ({@code client.verify-checksums}). */
            public Builder verifyChecksums(boolean enabled) {
                this.verifyChecksums = enabled;
                return this;
            }

            /** The client's clock (leases, location-cache windows, shared-memory liveness); for tests. */
            public Builder ticker(Ticker clock) {
                this.ticker = clock;
                return this;
            }

            /**
             * @throws IllegalArgumentException naming the setting whose value is out of range
             * @throws NullPointerException naming the setting that is null and must not be
             */
            public Options build() {
                return new Options(masterAddress, transport, sliceSize, localMemcpy, hotCache, sharedMemory,
                        locationCache, readHints, ticker, failoverTimeout, verifyChecksums);
            }
        }
    }

    private final String clientId;
    private final ClientLifecycle lifecycle = new ClientLifecycle();
    private final ClientCaches caches;
    private final TransportClientPool pool;
    /** Master RPCs and the memory data plane, driven by the calling thread (no event-loop hand-off). */
    private final BlockingConnectionPool direct;
    private final SameHostSegments sameHost;
    private final MasterStub master;
    private final Locator locator;
    private final PutPipeline puts;
    private final ReadPipeline reads;
    private final PinnedReads pinnedReads;
    private final RangeReads rangeReads;
    private final Removals removals;
    private final CacheReporter reporter;

    private TiffinClient(Options options) {
        UUID uuid = UUID.randomUUID();
        this.clientId = "client-" + uuid;
        // This client's location cache as the master knows it (cache_owner): positive, never 0 (unknown).
        long cacheOwner = ((uuid.getLeastSignificantBits() ^ uuid.getMostSignificantBits()) & Long.MAX_VALUE) | 1;
        LeaseClock clock = new LeaseClock(options.ticker());
        this.caches = ClientCaches.create(options);
        // one clock for the client and its connections: lease ends are transport deadlines as they are
        this.pool = new TransportClientPool("client", options.transport(), clientId, options.ticker());
        this.direct = new BlockingConnectionPool("client", options.transport(), clientId, options.ticker());
        this.sameHost = new SameHostSegments(options.localMemcpy(), options.sharedMemory(), direct, options.ticker());
        this.master = new MasterStub(options.masterAddress(), options.localMemcpy(), direct, lifecycle,
                options.failoverTimeout());
        this.locator = new Locator(master, caches, sameHost, clock, cacheOwner);
        SliceExchange slices = new SliceExchange(direct, options.sliceSize(), clock, lifecycle);
        Checksums checks = new Checksums(options.verifyChecksums());
        this.puts = new PutPipeline(master, clientId, caches, sameHost, slices, lifecycle, cacheOwner);
        LocationRetry retry = new LocationRetry(caches.locations());
        this.reads = new ReadPipeline(locator, retry, new HintedReads(direct, options.sliceSize(), caches, locator,
                clock, checks), sameHost, caches.hotCache(), slices, new AsyncNodeReads(pool, options.sliceSize(),
                caches.hotCache(), clock, checks), clock, lifecycle, checks);
        this.pinnedReads = new PinnedReads(locator, retry, reads, sameHost, caches.hotCache(), slices, clock, lifecycle,
                checks);
        this.rangeReads = new RangeReads(locator, retry, reads, sameHost, slices, clock, lifecycle);
        this.removals = new Removals(master, caches, cacheOwner);
        this.reporter = new CacheReporter(master, clientId, caches, lifecycle);
    }

    /**
     * Connects to the master and checks that it runs the same version. Throws {@link TiffinException}:
     * RPC_FAIL if unreachable, INVALID_VERSION on a version mismatch.
     */
    public static TiffinClient connect(Options options) {
        TiffinClient c = new TiffinClient(options);
        try {
            String version = c.master.version();
            if (!TiffinVersion.VERSION.equals(version)) {
                throw new TiffinException(ErrorCode.INVALID_VERSION, "master " + options.masterAddress() + " runs Tiffin "
                        + version + ", this client " + TiffinVersion.VERSION + "; run the same version everywhere");
            }
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    /** {@link #connect(Options)} with {@link Options#defaults(String)}. */
    public static TiffinClient connect(String masterAddress) {
        return connect(Options.defaults(masterAddress));
    }

    public String clientId() {
        return clientId;
    }

    // ------------------------------------------------------------------ put

    @Override
    public void put(String key, byte[] value, PutOptions options) {
        putFrom(key, value == null ? null : MemorySegment.ofArray(value), options);
    }

    @Override
    public void putFrom(String key, MemorySegment value, PutOptions putOptions) {
        KeyChecks.checkKey(key);
        KeyChecks.checkSegment(value, false, "the value of ", key);
        KeyChecks.checkGiven(putOptions, "the put options (PutOptions.DEFAULT for none)");
        puts.put(key, ConfinedSegments.shareable(value), putOptions);
    }

    /**
     * {@link #putFrom} made without any wait, for callers that must not block (an event loop): only when the
     * master runs in this JVM (as in {@code tiffin standalone}) and grants replicas in segments of this JVM, so the
     * whole put is direct calls and memory copies. Returns null when it cannot be done so (nothing is stored; use
     * {@link #putFrom}, which waits for room or for another put of the key). Otherwise the put has taken effect on
     * return; the future completes when {@code putFrom} would have returned — at once, or, for a value replacing
     * one that other clients hold cached, once their caches let go — or exceptionally with the error it would have
     * thrown.
     *
     * @throws TiffinException {@code INVALID_KEY} / {@code INVALID_PARAMS} for a key or value {@code putFrom} refuses
     */
    public java.util.concurrent.CompletableFuture<Void> tryPutInThisJvm(String key, MemorySegment value,
                                                                        PutOptions putOptions) {
        KeyChecks.checkKey(key);
        KeyChecks.checkSegment(value, false, "the value of ", key);
        if (ConfinedSegments.isThreadConfined(value)) {
            return null;
        }
        return puts.putInThisJvm(key, value, putOptions);
    }

    @Override
    public List<KeyResult<Void>> batchPut(Map<String, byte[]> values, PutOptions putOptions) {
        KeyChecks.checkGiven(values, "the map of values");
        List<String> keys = new ArrayList<>(values.keySet());
        List<MemorySegment> segs = new ArrayList<>(keys.size());
        for (String k : keys) {
            byte[] v = values.get(k);
            segs.add(v == null ? null : MemorySegment.ofArray(v)); // a null one is refused naming its key
        }
        return batchPutFrom(keys, segs, putOptions);
    }

    @Override
    public List<KeyResult<Void>> batchPutFrom(List<String> keys, List<MemorySegment> values, PutOptions putOptions) {
        KeyChecks.checkKeys(keys);
        for (int i = 0; values != null && i < values.size(); i++) {
            KeyChecks.checkSegment(values.get(i), false, "value of key ", i);
        }
        KeyChecks.checkSameCount("batch put", keys, values, "values");
        KeyChecks.checkGiven(putOptions, "the put options (PutOptions.DEFAULT for none)");
        return puts.batchPut(keys, values.stream().map(ConfinedSegments::shareable).toList(), putOptions);
    }

    // ------------------------------------------------------------------ get

    @Override
    public byte[] get(String key) {
        KeyChecks.checkKey(key);
        return reads.get(key);
    }

    @Override
    public long getInto(String key, MemorySegment destination) {
        KeyChecks.checkKey(key);
        KeyChecks.checkSegment(destination, true, "the destination of ", key);
        return reads.getInto(key, destination);
    }

    /**
     * Reads a byte range of the object: from {@code offset} on, as many bytes as {@code destination} holds or the
     * object has after {@code offset}, whichever is less; returns how many. Only those bytes are moved (see
     * {@code RangeReads}); the hot cache is not consulted and the range is not checked against the object's
     * CRC32C.
     *
     * @throws TiffinException {@code OBJECT_NOT_FOUND} for a missing key, {@code INVALID_PARAMS} for a negative
     *     offset or one past the object's end, and what {@link #getInto} throws for the transfer
     */
    public long getRangeInto(String key, long offset, MemorySegment destination) {
        KeyChecks.checkKey(key);
        KeyChecks.checkSegment(destination, true, "the destination of ", key);
        if (offset < 0) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "negative offset " + offset + " into " + key);
        }
        return rangeReads.getRangeInto(key, offset, destination);
    }

    @Override
    public List<KeyResult<byte[]>> batchGet(List<String> keys) {
        KeyChecks.checkKeys(keys);
        return reads.batchGet(keys);
    }

    @Override
    public List<KeyResult<Long>> batchGetInto(List<String> keys, List<MemorySegment> destinations) {
        KeyChecks.checkKeys(keys);
        for (int i = 0; destinations != null && i < destinations.size(); i++) {
            KeyChecks.checkSegment(destinations.get(i), true, "destination of key ", i);
        }
        KeyChecks.checkSameCount("batch get", keys, destinations, "destinations");
        return reads.batchGetInto(keys, destinations);
    }

    /**
     * Zero-copy get: the object's bytes as read-only views that stay valid until the returned value is
     * closed. When this client's hot cache holds the current version (checked against the master, as
     * for every read), the views are the cache's blocks, pinned: no network transfer and no copy. On a
     * miss of a remote object the cache admits, the bytes are received straight into cache blocks
     * reserved for them, which become the cached copy and are returned pinned (still no copy); anything
     * else is read into a buffer the value owns.
     *
     * @throws TiffinException as {@link #getInto}
     */
    public PinnedValue getPinned(String key) {
        KeyChecks.checkKey(key);
        return pinnedReads.getPinned(key);
    }

    /**
     * Zero-copy get that never waits (for callers on an event loop): the key's bytes when this client has
     * them at hand — a location in its location cache and either a replica in a segment of this JVM (the
     * views are the replica itself, {@link PinnedValue#inPlace()}, valid only for
     * {@link PinnedValue#validForNanos()} more: the rest of the read lease) or the hot cache's current copy
     * (pinned until closed) — else null, and the caller reads the key the ordinary way. Makes no master
     * call and no transfer. A replica in a mapped same-host segment is not served in place (the mapping may
     * be unmapped while the views are in use).
     *
     * @throws TiffinException {@code INVALID_KEY} for a key that is null or not valid Unicode
     */
    public PinnedValue pinLocal(String key) {
        KeyChecks.checkKey(key);
        return pinnedReads.pinLocal(key, PinnedReads.Ask.NOBODY);
    }

    /**
     * {@link #pinLocal}, asking the master for the location when the location cache has none (this waits for
     * the master; the location is then kept for later reads): null when the bytes are neither in this JVM's
     * segment nor in the hot cache.
     *
     * @throws TiffinException as {@link #getInto} for the lookup ({@code OBJECT_NOT_FOUND} for a missing key)
     */
    public PinnedValue pinLocalOrLookUp(String key) {
        KeyChecks.checkKey(key);
        return pinnedReads.pinLocal(key, PinnedReads.Ask.MASTER);
    }

    /**
     * {@link #pinLocal}, asking the master for the location when the location cache has none only if that master
     * runs in this JVM (as in {@code tiffin standalone}): a direct call to its lookup handler on this thread, the
     * one the master runs on its own event loops, so it never waits on the network. A master elsewhere is not
     * asked (null). One attempt: a master that cannot answer now throws, as does a missing key.
     *
     * @throws TiffinException as {@link #getInto} for the lookup ({@code OBJECT_NOT_FOUND} for a missing key)
     */
    public PinnedValue pinLocalAskingMasterInThisJvm(String key) {
        KeyChecks.checkKey(key);
        return pinnedReads.pinLocal(key, PinnedReads.Ask.MASTER_IN_THIS_JVM);
    }

    /**
     * Extends the hold on an {@link PinnedValue#inPlace()} view that {@link #pinLocal} (or its variants) returned
     * for {@code key}, for a reader that needs its bytes longer than the read lease: a lookup at the master (a new
     * lease; this waits, so never call it from an event loop) that returns a new in-place view of the same memory,
     * valid for the new lease, when the key still holds the same object there; else null (replaced, removed or
     * moved since), and {@code held} stays valid only for what is left of its lease. Both values stay the
     * caller's to close.
     *
     * @throws TiffinException as {@link #getInto} for the lookup ({@code OBJECT_NOT_FOUND} for a removed key)
     */
    public PinnedValue renewInPlace(String key, PinnedValue held) {
        KeyChecks.checkKey(key);
        return pinnedReads.renewInPlace(key, Objects.requireNonNull(held, "held"));
    }

    /**
     * Zero-copy batch get: {@link #getPinned} for many keys with one master round trip; the misses are
     * read together (pipelined per node). One result per key, in order; close every value returned.
     */
    public List<KeyResult<PinnedValue>> batchGetPinned(List<String> keys) {
        KeyChecks.checkKeys(keys);
        return pinnedReads.batchGetPinned(keys);
    }

    // ------------------------------------------------------------------ exists, remove, query

    @Override
    public boolean exists(String key) {
        KeyChecks.checkKey(key);
        return locator.exists(key);
    }

    /**
     * {@link #exists} without a wait on the network: from the location cache, or asked of the master only if it
     * runs in this JVM (as in {@code tiffin standalone}; a direct call to the handler its own event loops run, as
     * {@link #pinLocalAskingMasterInThisJvm}). Null when the master runs elsewhere (nothing asked). One attempt.
     *
     * @throws TiffinException the master's refusal ({@code REPLICA_IS_NOT_READY} for a first put under way)
     */
    public Boolean existsAskingMasterInThisJvm(String key) {
        KeyChecks.checkKey(key);
        return locator.existsInThisJvm(key);
    }

    @Override
    public List<KeyResult<Boolean>> batchExists(List<String> keys) {
        KeyChecks.checkKeys(keys);
        return locator.batchExists(keys);
    }

    /**
     * Gives {@code key}'s object an expiry deadline {@code ttlMillis} from now (master clock; 0 = now: it goes at
     * once). Returns false when the key holds no object.
     */
    public boolean expire(String key, long ttlMillis) {
        KeyChecks.checkKey(key);
        if (ttlMillis < 0) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "expire " + key + " in " + ttlMillis
                    + " ms: a time to live is >= 0");
        }
        return expiryCall(key, 1, ttlMillis) != MISSING;
    }

    /**
     * {@link #expire(String, long)} only if {@code condition} holds (checked by the master with the key locked).
     * Returns whether the deadline was set: false when the key holds no object or the condition does not hold.
     */
    public boolean expire(String key, long ttlMillis, ExpireCondition condition) {
        KeyChecks.checkKey(key);
        KeyChecks.checkGiven(condition, "the expire condition");
        if (ttlMillis < 0) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "expire " + key + " in " + ttlMillis
                    + " ms: a time to live is >= 0");
        }
        caches.invalidate(key); // as in expiryCall
        try {
            return master.expire(key, 1, ttlMillis, condition.wire).getApplied();
        } catch (TiffinException e) {
            if (e.code() == ErrorCode.OBJECT_NOT_FOUND) {
                return false;
            }
            throw e;
        }
    }

    /** Drops {@code key}'s expiry deadline; returns whether it had one. */
    public boolean persist(String key) {
        KeyChecks.checkKey(key);
        return expiryCall(key, 2, 0) >= 0;
    }

    /** {@code key}'s time to live in ms (master clock), -1 when it has no deadline, -2 when it holds no object. */
    public long ttlMillis(String key) {
        KeyChecks.checkKey(key);
        return expiryCall(key, 0, 0);
    }

    private static final long MISSING = -2;

    private long expiryCall(String key, int mode, long ttlMillis) {
        if (mode == 1) {
            // this client's cached location of the key was granted before the deadline: it must not outlive it
            caches.invalidate(key);
        }
        try {
            return master.expire(key, mode, ttlMillis);
        } catch (TiffinException e) {
            if (e.code() == ErrorCode.OBJECT_NOT_FOUND) {
                return MISSING;
            }
            throw e;
        }
    }

    @Override
    public void remove(String key, boolean force) {
        KeyChecks.checkKey(key);
        removals.remove(key, force);
    }

    @Override
    public List<KeyResult<Void>> batchRemove(List<String> keys, boolean force) {
        KeyChecks.checkKeys(keys);
        return removals.batchRemove(keys, force);
    }

    @Override
    public long removeByRegex(String regex, boolean force) {
        return removals.removeByRegex(regex, force);
    }

    @Override
    public long removeAll(boolean force) {
        return removals.removeAll(force);
    }

    @Override
    public Optional<ObjectLocation> locate(String key) {
        KeyChecks.checkKey(key);
        return locator.locate(key);
    }

    @Override
    public Map<String, ObjectLocation> locateByRegex(String regex) {
        KeyChecks.checkGiven(regex, "the regex");
        return master.locateByRegex(regex);
    }

    /** Keys starting with {@code prefix}, in order, with their sizes; at most {@code limit} (at least 1). */
    public KeyListing listKeys(String prefix, int limit) {
        KeyChecks.checkGiven(prefix, "the prefix (\"\" for every key)");
        if (limit < 1) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "list keys: limit = " + limit + " (expected: >= 1)");
        }
        return master.listKeys(prefix, limit);
    }

    /** Cluster summary: capacity, usage, keys, nodes, segments, clients' caches. */
    public ClusterStats stats() {
        return master.stats();
    }

    // ------------------------------------------------------------------ caches and diagnostics

    /**
     * Sends this client's hot-cache and location-cache counters to the master (for /metrics and tiffin
     * stat); every 2 s on its own thread when either cache is on.
     */
    public void reportCaches() {
        reporter.report();
    }

    /** The hot cache itself, for tests and benchmarks; null when disabled. */
    public LocalHotCache hotCache() {
        return caches.hotCache();
    }

    /** The hot cache's counters, or empty when it is disabled. */
    public Optional<LocalHotCache.Stats> hotCacheStats() {
        return caches.hotCache() == null ? Optional.empty() : Optional.of(caches.hotCache().stats());
    }

    /** The read hints' counters, or empty when they are disabled. */
    public Optional<ReadHints.Stats> readHintStats() {
        return caches.hints() == null ? Optional.empty() : Optional.of(caches.hints().stats());
    }

    /** The location cache's counters, or empty when it is disabled. */
    public Optional<LocationCache.Stats> locationCacheStats() {
        return caches.locations() == null ? Optional.empty() : Optional.of(caches.locations().stats());
    }

    /**
     * Blocking connections (to the master and to nodes) this client has opened so far, each a TCP connect
     * and a handshake; for diagnostics (a steady rise means connections are being closed and reopened).
     */
    public long connectionsOpened() {
        return direct.connectionsOpened();
    }

    /** Number of same-host shared-memory segments this client has mapped now; for tests and diagnostics. */
    public int sharedSegmentsMapped() {
        return sameHost.mappedCount();
    }

    @Override
    public void close() {
        reporter.close();
        lifecycle.markClosed();
        direct.close();
        pool.close();
        sameHost.close();
        caches.close();
    }
}
