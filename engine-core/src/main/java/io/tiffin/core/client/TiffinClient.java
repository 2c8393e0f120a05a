package io.tiffin.core.client;

import io.netty.buffer.ByteBuf;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.KvStore;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaType;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.TiffinVersion;
import io.tiffin.core.client.hotcache.HotCacheSettings;
import io.tiffin.core.client.hotcache.LocalHotCache;
import io.tiffin.core.local.InProcessMaster;
import io.tiffin.core.local.InProcessMasters;
import io.tiffin.core.local.LocalSegment;
import io.tiffin.core.local.LocalSegmentDirectory;
import io.tiffin.core.transport.Frame;
import io.tiffin.core.transport.BlockingConnection;
import io.tiffin.core.transport.BlockingConnectionPool;
import io.tiffin.core.transport.Messages;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportClient;
import io.tiffin.core.transport.TransportClientPool;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.BatchCodesReply;
import io.tiffin.core.transport.proto.BatchExistReply;
import io.tiffin.core.transport.proto.BatchKeysRequest;
import io.tiffin.core.transport.proto.BatchLocationsReply;
import io.tiffin.core.transport.proto.BatchPutStartReply;
import io.tiffin.core.transport.proto.BatchPutStartRequest;
import io.tiffin.core.transport.proto.CountReply;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.ExistReply;
import io.tiffin.core.transport.proto.KeyRequest;
import io.tiffin.core.transport.proto.ListKeysReply;
import io.tiffin.core.transport.proto.ListKeysRequest;
import io.tiffin.core.transport.proto.LocationResult;
import io.tiffin.core.transport.proto.LocationsByRegexReply;
import io.tiffin.core.transport.proto.ObjectLocationMsg;
import io.tiffin.core.transport.proto.PutStartReply;
import io.tiffin.core.transport.proto.PutStartRequest;
import io.tiffin.core.transport.proto.PutStartResult;
import io.tiffin.core.transport.proto.RegexRequest;
import io.tiffin.core.transport.proto.RemoveAllRequest;
import io.tiffin.core.transport.proto.SegmentInfoReply;
import io.tiffin.core.transport.proto.SegmentInfoRequest;
import io.tiffin.core.transport.proto.ServiceReadyReply;
import io.tiffin.core.transport.proto.StatsReply;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The Tiffin client ({@link KvStore}): asks the master where objects live and moves the bytes directly
 * to and from nodes. A replica in a segment served by this JVM is copied with a plain memory copy (no
 * socket); other replicas go over the node's data plane in slices of at most
 * {@code client.transfer-slice-size} (16 MiB). Master RPCs and memory reads and writes run on pooled
 * blocking connections driven by the calling thread ({@link BlockingConnectionPool}): every slice
 * request of a call is written to its node before any answer is read, and answers are received
 * straight into the caller's memory. Reads the hot cache keeps, SSD reads and fallbacks to other
 * replicas use the asynchronous Netty client.
 *
 * <p>Writes: PutStart → write every replica → PutEnd; any failed write → PutRevoke and
 * {@link ErrorCode#TRANSFER_FAIL}. Reads: GetReplicaList (a lease) → local memory replica first, then
 * remote ones in the master's order (the next replica is tried if one fails) → {@link
 * ErrorCode#LEASE_EXPIRED} if the lease ran out before the read ended. A get of a key whose replica this
 * client saw before reads that replica while the lookup is under way and keeps the bytes only if the
 * lookup names that very replica ({@link ReadHints}).
 *
 * <p>Thread-safe: share one instance. Owns its connections; {@link #close()} releases them.
 */
public final class TiffinClient implements KvStore {
    private static final Logger LOG = LogManager.getLogger(TiffinClient.class);

    /**
     * How to connect.
     *
     * @param masterAddress {@code host:port} of the master
     * @param transport connection settings (frame limit, auth token, timeouts, event loops)
     * @param sliceSize largest data-plane transfer, bytes
     * @param localMemcpy same-JVM shortcuts: copy same-JVM replicas directly and call a master of this JVM
     *     directly ({@link InProcessMasters})
     * @param sharedMemory same-host shortcut: map the segments that nodes on this host keep in shared
     *     memory ({@link SharedSegments}) and copy directly
     * @param hotCache settings of the local hot cache of objects read from other nodes; null = none
     * @param locationCache reuse of lookups within their read lease ({@link LocationCache}); null = off
     * @param readHints most keys whose last known replica a get reads while looking the key up ({@link
     *     ReadHints}); 0 = off
     */
    public record Options(String masterAddress, TransportSettings transport, long sliceSize, boolean localMemcpy,
                          HotCacheSettings hotCache, boolean sharedMemory, LocationCache.Settings locationCache,
                          long readHints) {
        public Options {
            Objects.requireNonNull(masterAddress, "masterAddress");
            locationCache = locationCache == null ? LocationCache.Settings.DISABLED : locationCache;
            if (sliceSize < 1024) {
                throw new IllegalArgumentException("client.transfer-slice-size = " + sliceSize + " (expected: >= 1KiB)");
            }
            if (readHints < 0) {
                throw new IllegalArgumentException("client.read-hint-cache-size = " + readHints + " (expected: >= 0, 0 = off)");
            }
        }

        /** With {@link ReadHints#DEFAULT_SIZE} read hints. */
        public Options(String masterAddress, TransportSettings transport, long sliceSize, boolean localMemcpy,
                       HotCacheSettings hotCache, boolean sharedMemory, LocationCache.Settings locationCache) {
            this(masterAddress, transport, sliceSize, localMemcpy, hotCache, sharedMemory, locationCache,
                    ReadHints.DEFAULT_SIZE);
        }

        /** Without a location cache. */
        public Options(String masterAddress, TransportSettings transport, long sliceSize, boolean localMemcpy,
                       HotCacheSettings hotCache, boolean sharedMemory) {
            this(masterAddress, transport, sliceSize, localMemcpy, hotCache, sharedMemory, null);
        }

        /** The same-host shortcut follows {@code localMemcpy}. */
        public Options(String masterAddress, TransportSettings transport, long sliceSize, boolean localMemcpy,
                       HotCacheSettings hotCache) {
            this(masterAddress, transport, sliceSize, localMemcpy, hotCache, localMemcpy);
        }

        /** Without a hot cache; the same-host shortcut follows {@code localMemcpy}. */
        public Options(String masterAddress, TransportSettings transport, long sliceSize, boolean localMemcpy) {
            this(masterAddress, transport, sliceSize, localMemcpy, null, localMemcpy);
        }

        public Options withHotCache(HotCacheSettings settings) {
            return new Options(masterAddress, transport, sliceSize, localMemcpy, settings, sharedMemory, locationCache,
                    readHints);
        }

        public Options withSharedMemory(boolean enabled) {
            return new Options(masterAddress, transport, sliceSize, localMemcpy, hotCache, enabled, locationCache,
                    readHints);
        }

        public Options withMasterAddress(String address) {
            return new Options(address, transport, sliceSize, localMemcpy, hotCache, sharedMemory, locationCache,
                    readHints);
        }

        public Options withLocationCache(LocationCache.Settings settings) {
            return new Options(masterAddress, transport, sliceSize, localMemcpy, hotCache, sharedMemory, settings,
                    readHints);
        }

        /** {@code entries} read hints ({@link ReadHints}; 0 = none: every get waits for its lookup). */
        public Options withReadHints(long entries) {
            return new Options(masterAddress, transport, sliceSize, localMemcpy, hotCache, sharedMemory, locationCache,
                    entries);
        }

        public static Options defaults(String masterAddress) {
            return new Options(masterAddress, TransportSettings.defaults(), 16L << 20, true)
                    .withLocationCache(LocationCache.Settings.DEFAULT);
        }
    }

    private final Options options;
    private final UUID clientUuid = UUID.randomUUID();
    private final String clientId = "client-" + clientUuid;
    /**
     * This client's location cache as the master knows it ({@code cache_owner}): positive, never 0 (unknown).
     * A forced removal by this client does not wait for locations only this cache holds.
     */
    private final long cacheOwner = ((clientUuid.getLeastSignificantBits() ^ clientUuid.getMostSignificantBits())
            & Long.MAX_VALUE) | 1;
    private final TransportClientPool pool;
    /** Master RPCs and the memory data plane, driven by the calling thread (no event-loop hand-off). */
    private final BlockingConnectionPool direct;
    /** Null when disabled. */
    private final LocalHotCache hotCache;
    /** Mappings of same-host nodes' shared-memory segments; null when disabled. */
    private final SharedSegments shared;
    /** Lookups reused within their lease; null when disabled. */
    private final LocationCache locations;
    /** Replicas read while their keys are looked up; null when disabled. */
    private final ReadHints hints;
    private volatile boolean closed;

    private final java.util.concurrent.ScheduledExecutorService reporter;

    private TiffinClient(Options options) {
        this.options = options;
        this.hotCache = createHotCache(options.hotCache());
        this.locations = options.locationCache().enabled() ? new LocationCache(options.locationCache()) : null;
        this.hints = options.readHints() > 0 ? new ReadHints(options.readHints()) : null;
        this.pool = new TransportClientPool("client", options.transport(), clientId);
        this.direct = new BlockingConnectionPool("client", options.transport(), clientId);
        // SEGMENT_INFO over the data-plane connections the reads use anyway (no extra connection per node).
        this.shared = options.sharedMemory() ? new SharedSegments((endpoint, segment) -> direct.call(endpoint,
                Opcode.SEGMENT_INFO, SegmentInfoRequest.newBuilder().setSegment(segment).build(),
                SegmentInfoReply.parser())) : null;
        if (hotCache != null || locations != null) {
            reporter = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "tiffin-client-report");
                t.setDaemon(true);
                return t;
            });
            reporter.scheduleWithFixedDelay(this::reportCaches, 1, 2, TimeUnit.SECONDS);
        } else {
            reporter = null;
        }
    }

    /**
     * Sends this client's hot-cache and location-cache counters to the master (for /metrics and tiffin
     * stat); every 2 s on its own thread when either cache is on.
     */
    public void reportCaches() {
        if ((hotCache == null && locations == null) || closed) {
            return;
        }
        var report = io.tiffin.core.transport.proto.ClientReport.newBuilder().setClientId(clientId);
        if (hotCache != null) {
            LocalHotCache.Stats s = hotCache.stats();
            report.setHits(s.hits()).setMisses(s.misses()).setFills(s.fills()).setDroppedFills(s.droppedFills())
                    .setRejectedFills(s.rejectedFills()).setEvictions(s.evictions()).setStaleRejected(s.staleRejected())
                    .setInvalidations(s.invalidations()).setBytesCached(s.bytesCached())
                    .setCapacityBytes(s.capacityBytes());
        }
        if (locations != null) {
            LocationCache.Stats s = locations.stats();
            report.setLocationCache(true).setLocationHits(s.hits()).setLocationMisses(s.misses())
                    .setLocationRefused(s.refused());
        }
        try {
            rpc(Opcode.CLIENT_REPORT, report.build(), Empty.parser());
        } catch (RuntimeException e) {
            LOG.debug("cache report failed", e);
        }
    }

    /** The hot cache {@code s} describes, its policy created with its settings; null when disabled. */
    static LocalHotCache createHotCache(HotCacheSettings s) {
        if (s == null || s.size() == 0) {
            return null;
        }
        if (s.size() < s.blockSize()) {
            LOG.warn("hotcache.size = {} is smaller than one block (hotcache.block-size = {}); the hot cache is "
                    + "disabled. Raise hotcache.size to at least one block to enable it.", s.size(), s.blockSize());
            return null;
        }
        long blocks = s.size() / s.blockSize();
        return new LocalHotCache(s.size(), s.blockSize(), s.maxEntryShare(),
                io.tiffin.core.plugin.PluginRegistry.create("hotcache.policy " + s.policy().name(),
                        () -> s.policy().create(blocks, new io.tiffin.api.spi.PluginContext(s.policySettings(),
                                "client"))), s.ringSize());
    }

    /** The hot cache's counters, or empty when it is disabled. */
    public Optional<LocalHotCache.Stats> hotCacheStats() {
        return hotCache == null ? Optional.empty() : Optional.of(hotCache.stats());
    }

    /**
     * Refuses a key that cannot travel as the text it is: null, empty, or not valid Unicode (an unpaired
     * surrogate, which UTF-8 cannot encode: the wire would turn it into '?', and distinct keys would name
     * one object). Length and the master's other rules are checked by the master.
     *
     * @throws TiffinException {@code INVALID_KEY} saying what is wrong
     */
    static void checkKey(String key) {
        String problem = keyProblem(key);
        if (problem != null) {
            throw new TiffinException(ErrorCode.INVALID_KEY, problem);
        }
    }

    /**
     * For a batch: a null key or one that is not valid Unicode refuses the whole batch (naming its index),
     * since it cannot be sent; an empty key goes to the master, which answers it {@code INVALID_KEY} on its
     * own, like every other per-key rule.
     */
    static void checkKeys(List<String> keys) {
        if (keys == null) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "the list of keys is null");
        }
        for (int i = 0; i < keys.size(); i++) {
            String key = keys.get(i);
            String problem = key != null && key.isEmpty() ? null : keyProblem(key);
            if (problem != null) {
                throw new TiffinException(ErrorCode.INVALID_KEY, "key " + i + " of the batch: " + problem);
            }
        }
    }

    private static String keyProblem(String key) {
        if (key == null) {
            return "the key is null";
        }
        if (key.isEmpty()) {
            return "the key is empty";
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < key.length() && Character.isLowSurrogate(key.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return "the key has an unpaired surrogate (\\u" + String.format("%04X", (int) c) + ") at index " + i
                        + ": it is not valid Unicode text and cannot be sent as UTF-8";
            }
        }
        return null;
    }

    /**
     * Refuses, before any request, a segment the call cannot use: null, from a closed arena, or (as a
     * destination) read-only — the caller's mistake, not a transfer failure worth retrying.
     *
     * @throws TiffinException {@code INVALID_PARAMS} naming {@code what} and {@code which} (the message is
     *     built only then)
     */
    static void checkSegment(MemorySegment segment, boolean destination, String what, Object which) {
        String problem = segment == null ? "is null"
                : !segment.scope().isAlive() ? "belongs to an arena that is closed"
                : destination && segment.isReadOnly() ? "is read-only" : null;
        if (problem != null) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, what + which + " " + problem);
        }
    }

    /** The hot cache itself, for tests and benchmarks; null when disabled. */
    public LocalHotCache hotCache() {
        return hotCache;
    }

    private void invalidate(String key) {
        if (hotCache != null) {
            hotCache.invalidate(key);
        }
        if (locations != null) {
            locations.invalidate(key);
        }
        if (hints != null) {
            hints.invalidate(key);
        }
    }

    /**
     * Blocking connections (to the master and to nodes) this client has opened so far, each a TCP connect
     * and a handshake; for diagnostics (a steady rise means connections are being closed and reopened).
     */
    public long connectionsOpened() {
        return direct.connectionsOpened();
    }

    /** The read hints' counters, or empty when they are disabled. */
    public Optional<ReadHints.Stats> readHintStats() {
        return hints == null ? Optional.empty() : Optional.of(hints.stats());
    }

    /** The location cache's counters, or empty when it is disabled. */
    public Optional<LocationCache.Stats> locationCacheStats() {
        return locations == null ? Optional.empty() : Optional.of(locations.stats());
    }

    /**
     * The location of {@code key} for a read: the location cache's when it holds a usable one (then
     * {@code cached[0]} is set), else the master's (granting a lease), remembered when it may be reused.
     */
    private ObjectLocation locateForRead(String key, boolean useCache, boolean[] cached) {
        ObjectLocation hit = useCache ? cachedLocation(key, System.nanoTime(), cached) : null;
        return hit != null ? hit : lookUp(key);
    }

    /** The location cache's usable location of {@code key} (then {@code cached[0]} is set), or null. */
    private ObjectLocation cachedLocation(String key, long nowNanos, boolean[] cached) {
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
    private ObjectLocation lookUp(String key) {
        long stamp = locations == null ? 0 : locations.stamp(key);
        long sent = System.nanoTime();
        KeyRequest.Builder req = KeyRequest.newBuilder().setKey(key);
        if (locations != null) {
            req.setCacheForMs(locations.cacheForMillis()).setCacheOwner(cacheOwner); // forced removals wait for it
        }
        ObjectLocation loc = Messages.fromMsg(rpc(Opcode.GET_REPLICA_LIST, req.build(), ObjectLocationMsg.parser()));
        remember(loc, sent, stamp);
        if (hints != null) {
            hints.remember(key, loc.replicas(), this::isDirect);
        }
        return loc;
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
                if (d.mountEpoch() == 0 || (isDirect(d) && directMountEpoch(d) < 0)) {
                    return false;
                }
                memory = true;
            }
        }
        return memory;
    }

    /** Whether a failed read through a cached location should be retried with a fresh lookup. */
    private static boolean retryFresh(ErrorCode code) {
        return code != ErrorCode.BUFFER_OVERFLOW && code != ErrorCode.INVALID_PARAMS && code != ErrorCode.INVALID_KEY;
    }

    /**
     * Connects to the master and checks that it runs the same version. Throws {@link TiffinException}:
     * RPC_FAIL if unreachable, INVALID_VERSION on a version mismatch.
     */
    public static TiffinClient connect(Options options) {
        TiffinClient c = new TiffinClient(options);
        try {
            ServiceReadyReply ready = c.rpc(Opcode.SERVICE_READY, Empty.getDefaultInstance(),
                    ServiceReadyReply.parser());
            if (!TiffinVersion.VERSION.equals(ready.getVersion())) {
                throw new TiffinException(ErrorCode.INVALID_VERSION, "master " + options.masterAddress() + " runs Tiffin "
                        + ready.getVersion() + ", this client " + TiffinVersion.VERSION + "; run the same version everywhere");
            }
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    public static TiffinClient connect(String masterAddress) {
        return connect(Options.defaults(masterAddress));
    }

    public String clientId() {
        return clientId;
    }

    private void checkOpen() {
        if (closed) {
            throw new TiffinException(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, "the client is closed");
        }
    }

    /**
     * A master call on a pooled blocking connection, driven by the calling thread; with same-JVM
     * shortcuts on ({@code localMemcpy}) and the master running in this JVM, a direct call instead
     * ({@link InProcessMasters}).
     */
    private <T extends com.google.protobuf.MessageLite> T rpc(Opcode op, com.google.protobuf.MessageLite req,
                                                              com.google.protobuf.Parser<T> parser) {
        checkOpen();
        InProcessMaster local = options.localMemcpy() ? InProcessMasters.find(options.masterAddress()) : null;
        if (local == null) {
            return direct.call(options.masterAddress(), op, req, parser);
        }
        com.google.protobuf.MessageLite reply = local.call(op, req);
        try {
            // through bytes, as over the wire: the reply's type is the parser's, whatever the handler built
            return parser.parseFrom(reply == null ? com.google.protobuf.ByteString.EMPTY : reply.toByteString());
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new TiffinException(ErrorCode.DESERIALIZE_FAIL, "cannot decode the in-process master's "
                    + op + " reply: " + e.getMessage(), e);
        }
    }

    // ------------------------------------------------------------------ put

    @Override
    public void put(String key, byte[] value, PutOptions options) {
        putFrom(key, MemorySegment.ofArray(value), options);
    }

    @Override
    public void putFrom(String key, MemorySegment value, PutOptions putOptions) {
        checkKey(key);
        checkSegment(value, false, "the value of ", key);
        value = shareable(value);
        invalidate(key);
        long size = value.byteSize();
        List<ReplicaDescriptor> replicas;
        try {
            PutStartRequest request = PutStartRequest.newBuilder().setClientId(clientId).setKey(key)
                    .setSize(size).setOptions(Messages.toMsg(putOptions)).build();
            PutStartReply reply = null;
            for (int attempt = 0; reply == null; attempt++) {
                try {
                    reply = rpc(Opcode.PUT_START, request, PutStartReply.parser());
                } catch (TiffinException e) {
                    // A failed allocation wakes the master's evictor (every 10 ms); give it a moment.
                    if (e.code() != ErrorCode.NO_AVAILABLE_HANDLE || attempt >= PUT_RETRIES) {
                        throw e;
                    }
                    sleepBeforeRetry(attempt);
                }
            }
            replicas = Messages.fromMsgs(reply.getReplicasList());
        } catch (TiffinException e) {
            if (e.code() == ErrorCode.OBJECT_ALREADY_EXISTS && !putOptions.upsert()) {
                return; // Mooncake rule: a put of an existing key is a successful no-op.
            }
            throw e;
        }
        TiffinException failed;
        try {
            failed = writeAll(List.of(replicas), List.of(value))[0];
        } catch (RuntimeException e) {
            failed = transferFailure("put " + key, e);
        }
        if (failed != null) {
            revokeQuietly(key);
            throw transferFailure("put " + key, failed);
        }
        rpc(Opcode.PUT_END, KeyRequest.newBuilder().setClientId(clientId).setKey(key).build(), Empty.parser());
        if (hints != null) {
            hints.remember(key, replicas, this::isDirect);
        }
    }

    /** Retries of a PutStart that found no room, while eviction (or offload to SSD) frees some. */
    private static final int PUT_RETRIES = 5;

    private static void sleepBeforeRetry(int attempt) {
        try {
            Thread.sleep(20L << attempt);
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            throw new TiffinException(ErrorCode.NO_AVAILABLE_HANDLE, "interrupted while waiting for free space", ie);
        }
    }

    private void revokeQuietly(String key) {
        try {
            rpc(Opcode.PUT_REVOKE, KeyRequest.newBuilder().setClientId(clientId).setKey(key).build(), Empty.parser());
        } catch (RuntimeException e) {
            LOG.warn("PutRevoke of {} failed ({}); the master releases it after the put timeout", key, e.getMessage());
        }
    }

    /**
     * Writes every replica of every object: replicas in a segment of this JVM by memory copy, the others
     * over pooled blocking connections, all requests to all nodes sent before any answer is awaited.
     * Returns per object null when all its replicas were written, else the first failure.
     */
    private TiffinException[] writeAll(List<List<ReplicaDescriptor>> replicasPerObject, List<MemorySegment> srcs) {
        int n = srcs.size();
        TiffinException[] failed = new TiffinException[n];
        Map<String, DirectBatch> byNode = new LinkedHashMap<>();
        for (int k = 0; k < n; k++) {
            List<ReplicaDescriptor> replicas = replicasPerObject.get(k);
            if (replicas == null) {
                continue;
            }
            MemorySegment src = srcs.get(k);
            for (ReplicaDescriptor d : replicas) {
                MemorySegment local;
                try {
                    local = directSlice(d, true);
                } catch (RuntimeException e) {
                    failed[k] = failed[k] != null ? failed[k] : transferFailure("local write", e);
                    continue;
                }
                if (local != null && directEpochMoved(d)) {
                    local = null; // re-mounted since PutStart: the node refuses the write over the socket
                }
                if (local != null) {
                    try {
                        MemorySegment.copy(src, 0, local, 0, d.size());
                    } catch (RuntimeException e) {
                        failed[k] = failed[k] != null ? failed[k] : transferFailure("local write", e);
                    }
                    continue;
                }
                DirectBatch batch = byNode.computeIfAbsent(d.endpoint(), DirectBatch::new);
                for (long off = 0; off < d.size(); off += options.sliceSize()) {
                    long len = Math.min(options.sliceSize(), d.size() - off);
                    batch.add(k, DataRequest.newBuilder().setSegment(d.segment()).setOffset(d.offset() + off)
                            .setLength(len).setMountEpoch(d.mountEpoch()).build(), src.asSlice(off, len));
                }
            }
        }
        if (byNode.isEmpty()) {
            return failed;
        }
        TiffinException[] sent = exchange(Opcode.DATA_WRITE, byNode.values(), n, 0);
        for (int k = 0; k < n; k++) {
            if (failed[k] == null) {
                failed[k] = sent[k];
            }
        }
        return failed;
    }

    /** Data-plane requests for one node gathered during one call, each tagged with the object it serves. */
    private static final class DirectBatch {
        final String endpoint;
        final List<DataRequest> requests = new ArrayList<>();
        final List<MemorySegment> bulks = new ArrayList<>();
        final List<Integer> owners = new ArrayList<>();

        DirectBatch(String endpoint) {
            this.endpoint = endpoint;
        }

        void add(int owner, DataRequest request, MemorySegment bulk) {
            owners.add(owner);
            requests.add(request);
            bulks.add(bulk);
        }
    }

    @Override
    public List<KeyResult<Void>> batchPut(Map<String, byte[]> values, PutOptions putOptions) {
        List<String> keys = new ArrayList<>(values.keySet());
        List<MemorySegment> segs = new ArrayList<>(keys.size());
        for (String k : keys) {
            segs.add(MemorySegment.ofArray(values.get(k)));
        }
        return batchPutFrom(keys, segs, putOptions);
    }

    @Override
    public List<KeyResult<Void>> batchPutFrom(List<String> keys, List<MemorySegment> values, PutOptions putOptions) {
        checkKeys(keys);
        for (int i = 0; values != null && i < values.size(); i++) {
            checkSegment(values.get(i), false, "value of key ", i);
        }
        if (keys.size() != values.size()) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "batch put: " + keys.size() + " keys but "
                    + values.size() + " values");
        }
        values = values.stream().map(TiffinClient::shareable).toList();
        keys.forEach(this::invalidate);
        BatchPutStartRequest.Builder start = BatchPutStartRequest.newBuilder().setClientId(clientId)
                .setOptions(Messages.toMsg(putOptions)).addAllKeys(keys);
        for (MemorySegment v : values) {
            start.addSizes(v.byteSize());
        }
        BatchPutStartReply reply = rpc(Opcode.BATCH_PUT_START, start.build(), BatchPutStartReply.parser());
        int n = keys.size();
        ErrorCode[] codes = new ErrorCode[n];
        List<List<ReplicaDescriptor>> toWrite = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            PutStartResult r = reply.getResults(i);
            ErrorCode code = ErrorCode.fromValue(r.getCode());
            if (code == ErrorCode.OBJECT_ALREADY_EXISTS && !putOptions.upsert()) {
                code = ErrorCode.OK; // existing key: successful no-op
                toWrite.add(null);
            } else if (code == ErrorCode.OK) {
                toWrite.add(Messages.fromMsgs(r.getReplicasList()));
            } else {
                toWrite.add(null);
            }
            codes[i] = code;
        }
        TiffinException[] failed;
        try {
            failed = writeAll(toWrite, values);
        } catch (RuntimeException e) {
            failed = new TiffinException[n];
            java.util.Arrays.fill(failed, transferFailure("batch put", e));
        }
        List<String> toEnd = new ArrayList<>();
        List<Integer> endIdx = new ArrayList<>();
        List<String> toRevoke = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if (toWrite.get(i) == null) {
                continue;
            }
            if (failed[i] == null) {
                toEnd.add(keys.get(i));
                endIdx.add(i);
            } else {
                LOG.debug("batch put: write of {} failed", keys.get(i), failed[i]);
                codes[i] = ErrorCode.TRANSFER_FAIL;
                toRevoke.add(keys.get(i));
            }
        }
        if (!toRevoke.isEmpty()) {
            try {
                rpc(Opcode.BATCH_PUT_REVOKE, BatchKeysRequest.newBuilder().setClientId(clientId).addAllKeys(toRevoke).build(),
                        BatchCodesReply.parser());
            } catch (RuntimeException e) {
                LOG.warn("BatchPutRevoke failed ({}); the master releases the buffers after the put timeout", e.getMessage());
            }
        }
        if (!toEnd.isEmpty()) {
            BatchCodesReply ended = rpc(Opcode.BATCH_PUT_END, BatchKeysRequest.newBuilder().setClientId(clientId)
                    .addAllKeys(toEnd).build(), BatchCodesReply.parser());
            for (int j = 0; j < toEnd.size(); j++) {
                int i = endIdx.get(j);
                codes[i] = ErrorCode.fromValue(ended.getCodes(j));
                if (codes[i] == ErrorCode.OK && hints != null) {
                    hints.remember(keys.get(i), toWrite.get(i), this::isDirect);
                }
            }
        }
        List<KeyResult<Void>> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(codes[i] == ErrorCode.OK ? KeyResult.ok(keys.get(i), null) : KeyResult.failed(keys.get(i), codes[i]));
        }
        return out;
    }

    // ------------------------------------------------------------------ get

    @Override
    public byte[] get(String key) {
        checkKey(key);
        return withLocationRetry(key, (useCache, cached) -> get(key, useCache, cached));
    }

    /** One single-key read: told whether it may use the location cache, it sets {@code cached[0]} if it did. */
    @FunctionalInterface
    private interface LocatedRead<T> {
        T run(boolean useCache, boolean[] cached);
    }

    /**
     * Runs {@code read} with the location cache; when it fails after using a cached location (a node
     * refused a re-mounted segment's descriptor, or was unreachable), drops the entry and runs it once
     * more with a fresh lookup, so the caller gets the master's current answer.
     */
    private <T> T withLocationRetry(String key, LocatedRead<T> read) {
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

    /** {@code cached[0]} tells the caller whether the location came from the location cache. */
    private byte[] get(String key, boolean useCache, boolean[] cached) {
        long start = System.nanoTime();
        ObjectLocation loc = useCache ? cachedLocation(key, start, cached) : null;
        if (loc == null) {
            ReadHints.Hint hint = hintFor(key);
            if (hint != null && hint.size() <= Integer.MAX_VALUE - 16) {
                Speculation s = speculate(key, hint);
                loc = s.location;
                if (s.confirmed) {
                    byte[] out = new byte[(int) hint.size()];
                    if (s.receiveInto(MemorySegment.ofArray(out), start)) {
                        return out;
                    }
                }
            } else {
                loc = lookUp(key);
            }
        }
        if (loc.size() > Integer.MAX_VALUE - 16) {
            throw new TiffinException(ErrorCode.BUFFER_OVERFLOW, key + " is " + loc.size()
                    + " bytes, too large for a byte[]; use getInto with a MemorySegment");
        }
        byte[] out = new byte[(int) loc.size()];
        readAndCheckLease(loc, MemorySegment.ofArray(out), start);
        return out;
    }

    /**
     * The replica to read {@code key} from while it is looked up, or null: none is known, or the read
     * should wait for the lookup (the hot cache may hold or keep the object).
     */
    private ReadHints.Hint hintFor(String key) {
        if (hints == null) {
            return null;
        }
        ReadHints.Hint hint = hints.get(key);
        if (hint == null || (hotCache != null && hotCache.accepts(hint.size()))) {
            return null;
        }
        return hint;
    }

    /** Largest hinted read whose unwanted answer is read and thrown away rather than its connection closed. */
    private static final long DISCARD_MAX_BYTES = 1L << 20;
    /** Longest wait for an unwanted answer before its connection is closed instead. */
    private static final long DISCARD_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    /**
     * Sends the read of {@code hint} on an idle pooled connection to its node (if there is one: a hint
     * never waits for a connect), then looks {@code key} up. When the answer names the hinted replica
     * ({@link ReadHints#confirms}) the bytes stay in the socket for {@link Speculation#receiveInto}; else
     * the read's answer is thrown away (or its connection closed, for large reads or a node the answer
     * no longer names) and the caller reads the location the usual way.
     *
     * @throws TiffinException what the lookup fails with (OBJECT_NOT_FOUND, ...); the key's hint is dropped
     */
    private Speculation speculate(String key, ReadHints.Hint hint) {
        Speculation s = new Speculation(hint);
        BlockingConnection c = direct.acquireIdle(hint.endpoint());
        if (c != null) {
            try {
                s.first = c.send(Opcode.DATA_READ, s.requests, null);
                s.connection = c;
            } catch (TiffinException e) {
                direct.release(c); // closed by the failed send
            }
        }
        try {
            s.location = lookUp(key);
        } catch (RuntimeException | Error e) {
            hints.invalidate(key);
            // a key that is gone (evicted, removed) is common; its node is most likely fine
            s.abandon(e instanceof TiffinException t && t.code() == ErrorCode.OBJECT_NOT_FOUND);
            throw e;
        }
        if (s.connection != null) {
            s.confirmed = hints.confirms(s.location, hint);
            if (!s.confirmed) {
                s.abandon(namesEndpoint(s.location, hint.endpoint()));
            }
        }
        return s;
    }

    private static boolean namesEndpoint(ObjectLocation loc, String endpoint) {
        for (ReplicaDescriptor d : loc.replicas()) {
            if (d.endpoint().equals(endpoint)) {
                return true;
            }
        }
        return false;
    }

    /**
     * One get's speculative read ({@link #speculate}): the lookup's answer and, while the read's answer
     * has not been received, the lent connection it will arrive on.
     *
     * <p>Not thread-safe: used by the calling thread only.
     */
    private final class Speculation {
        final ReadHints.Hint hint;
        final List<DataRequest> requests = new ArrayList<>();
        ObjectLocation location;
        boolean confirmed;
        BlockingConnection connection;
        long first;

        Speculation(ReadHints.Hint hint) {
            this.hint = hint;
            for (long off = 0; off < hint.size(); off += options.sliceSize()) {
                requests.add(DataRequest.newBuilder().setSegment(hint.segment()).setMountEpoch(hint.mountEpoch())
                        .setOffset(hint.offset() + off).setLength(Math.min(options.sliceSize(), hint.size() - off))
                        .build());
            }
        }

        /**
         * Gives the connection back without the read's answer: read and thrown away when it is small and
         * its node is alive ({@code nodeAlive}: the master still names it), else the connection is closed.
         */
        void abandon(boolean nodeAlive) {
            BlockingConnection c = connection;
            connection = null;
            if (c == null) {
                return;
            }
            if (nodeAlive && hint.size() <= DISCARD_MAX_BYTES) {
                c.discardAnswers(Opcode.DATA_READ, first, requests.size(), System.nanoTime() + DISCARD_WAIT_NANOS);
            } else {
                c.close();
            }
            direct.release(c);
        }

        /**
         * Receives the confirmed read into {@code dst} (size {@code hint.size()}) within the lookup's lease,
         * counted from {@code startNanos}. Returns whether {@code dst} holds the object; false when the
         * read failed otherwise (the caller reads the location the usual way).
         *
         * @throws TiffinException LEASE_EXPIRED when the node did not answer within the lease (as any read)
         */
        boolean receiveInto(MemorySegment dst, long startNanos) {
            BlockingConnection c = connection;
            connection = null;
            List<MemorySegment> bulks = new ArrayList<>(requests.size());
            for (DataRequest r : requests) {
                bulks.add(dst.asSlice(r.getOffset() - hint.offset(), r.getLength()));
            }
            TiffinException[] outcome;
            try {
                outcome = c.receive(Opcode.DATA_READ, first, requests.size(), bulks,
                        startNanos + TimeUnit.MILLISECONDS.toNanos(location.leaseTtlMillis()));
            } finally {
                direct.release(c);
            }
            for (TiffinException e : outcome) {
                if (e != null) {
                    if (e.code() == ErrorCode.LEASE_EXPIRED) {
                        throw e; // the node may be stalled; after the lease no replica's bytes can be trusted
                    }
                    LOG.debug("speculative read of {} failed ({}); reading it again", location.key(), e.getMessage());
                    return false;
                }
            }
            checkLease(location, startNanos);
            return true;
        }
    }

    @Override
    public long getInto(String key, MemorySegment destination) {
        checkKey(key);
        checkSegment(destination, true, "the destination of ", key);
        return withLocationRetry(key, (useCache, cached) -> getInto(key, destination, useCache, cached));
    }

    private long getInto(String key, MemorySegment destination, boolean useCache, boolean[] cached) {
        long start = System.nanoTime();
        ObjectLocation loc = useCache ? cachedLocation(key, start, cached) : null;
        if (loc == null) {
            ReadHints.Hint hint = hintFor(key);
            if (hint != null && destination.byteSize() >= hint.size() && !isThreadConfined(destination)) {
                Speculation s = speculate(key, hint);
                loc = s.location;
                if (s.confirmed && s.receiveInto(destination.asSlice(0, hint.size()), start)) {
                    return hint.size();
                }
            } else {
                loc = lookUp(key);
            }
        }
        if (destination.byteSize() < loc.size()) {
            throw new TiffinException(ErrorCode.BUFFER_OVERFLOW, key + " is " + loc.size() + " bytes but the destination holds "
                    + destination.byteSize());
        }
        MemorySegment target = destination.asSlice(0, loc.size());
        if (isThreadConfined(target)) {
            MemorySegment staging = Arena.ofAuto().allocate(loc.size());
            readAndCheckLease(loc, staging, start);
            MemorySegment.copy(staging, 0, target, 0, loc.size());
        } else {
            readAndCheckLease(loc, target, start);
        }
        return loc.size();
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
        checkKey(key);
        return withLocationRetry(key, (useCache, cached) -> getPinned(key, useCache, cached));
    }

    private PinnedValue getPinned(String key, boolean useCache, boolean[] cached) {
        long start = System.nanoTime();
        ObjectLocation loc = locateForRead(key, useCache, cached);
        return pinnedReads(List.of(key), List.of(KeyResult.ok(key, loc)), start, true).getFirst().value();
    }

    /**
     * Zero-copy batch get: {@link #getPinned} for many keys with one master round trip; the misses are
     * read together (pipelined per node). One result per key, in order; close every value returned.
     */
    public List<KeyResult<PinnedValue>> batchGetPinned(List<String> keys) {
        checkKeys(keys);
        boolean[] cached = new boolean[keys.size()];
        long start = System.nanoTime();
        List<KeyResult<PinnedValue>> out = pinnedReads(keys, batchLocate(keys, cached), start, false);
        int[] again = refusedCached(out, cached);
        if (again.length > 0) {
            List<String> retry = pick(keys, again);
            long restart = System.nanoTime();
            try {
                splice(out, again, pinnedReads(retry, batchLocate(retry, null), restart, false));
            } catch (RuntimeException e) {
                // the caller gets no values to close: close those already opened (pinned cache blocks,
                // owned buffers), or they would be held for good
                for (KeyResult<PinnedValue> r : out) {
                    if (r != null && r.isOk()) {
                        r.value().close();
                    }
                }
                throw e;
            }
        }
        return out;
    }

    /**
     * Positions of failed results whose location came from the location cache; their entries are
     * dropped, so the caller reads them again after a fresh lookup.
     */
    private int[] refusedCached(List<? extends KeyResult<?>> results, boolean[] cached) {
        int n = 0;
        int[] at = new int[0];
        for (int i = 0; i < results.size(); i++) {
            KeyResult<?> r = results.get(i);
            if (cached[i] && !r.isOk() && retryFresh(r.code())) {
                locations.refused(r.key());
                if (n == at.length) {
                    at = java.util.Arrays.copyOf(at, Math.max(4, n * 2));
                }
                at[n++] = i;
            }
        }
        return java.util.Arrays.copyOf(at, n);
    }

    private static <T> List<T> pick(List<T> all, int[] at) {
        List<T> out = new ArrayList<>(at.length);
        for (int i : at) {
            out.add(all.get(i));
        }
        return out;
    }

    private static <T> void splice(List<T> into, int[] at, List<T> values) {
        for (int j = 0; j < at.length; j++) {
            into.set(at[j], values.get(j));
        }
    }

    /** Pinned reads of located keys; with {@code rethrow} a failed read throws instead of being reported. */
    private List<KeyResult<PinnedValue>> pinnedReads(List<String> keys, List<KeyResult<ObjectLocation>> locs,
                                                     long start, boolean rethrow) {
        int n = keys.size();
        List<KeyResult<PinnedValue>> out = new ArrayList<>(java.util.Collections.nCopies(n, null));
        LocalHotCache.Reservation[] reserved = new LocalHotCache.Reservation[n];
        List<Integer> viaCache = new ArrayList<>();
        List<Integer> owned = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            KeyResult<ObjectLocation> r = locs.get(i);
            if (!r.isOk()) {
                out.set(i, KeyResult.failed(keys.get(i), r.code()));
                continue;
            }
            ObjectLocation loc = r.value();
            List<ReplicaDescriptor> remote = remoteMemoryReplicas(loc);
            if (hotCache == null || remote == null) {
                owned.add(i); // no cache, or a replica in this JVM: nothing to cache
                continue;
            }
            try {
                LocalHotCache.Pinned pinned = hotCache.tryPin(loc.key(), loc.version(), loc.size());
                if (pinned != null) {
                    out.set(i, KeyResult.ok(keys.get(i), new PinnedValue(pinned.segments(), loc.size(), true, pinned)));
                    continue;
                }
                reserved[i] = remote.isEmpty() ? null : hotCache.reserve(loc.key(), loc.version(), loc.size());
            } catch (IllegalStateException closedArena) {
                LOG.debug("hot cache closed during a read of {}", loc.key(), closedArena);
            }
            (reserved[i] != null ? viaCache : owned).add(i);
        }
        if (!viaCache.isEmpty()) {
            List<ReplicaDescriptor> first = new ArrayList<>();
            List<List<MemorySegment>> targets = new ArrayList<>();
            for (int i : viaCache) {
                first.add(remoteMemoryReplicas(locs.get(i).value()).getFirst());
                targets.add(reserved[i].segments());
            }
            long leaseEnd = Long.MAX_VALUE;
            for (int i : viaCache) {
                leaseEnd = Math.min(leaseEnd, TimeUnit.MILLISECONDS.toNanos(locs.get(i).value().leaseTtlMillis()));
            }
            TiffinException[] failed = readScattered(first, targets, start + leaseEnd);
            for (int j = 0; j < viaCache.size(); j++) {
                int i = viaCache.get(j);
                ObjectLocation loc = locs.get(i).value();
                if (failed[j] == null && withinLease(loc, start)) {
                    LocalHotCache.Pinned pinned = reserved[i].commit();
                    out.set(i, KeyResult.ok(keys.get(i), new PinnedValue(pinned.segments(), loc.size(), false, pinned)));
                } else {
                    reserved[i].abort();
                    owned.add(i); // read again the ordinary way (other replicas, lease checked)
                }
            }
        }
        if (!owned.isEmpty()) {
            Arena[] arenas = new Arena[n];
            MemorySegment[] buffers = new MemorySegment[n];
            List<CompletableFuture<Void>> reads = new ArrayList<>(java.util.Collections.nCopies(n, null));
            ReadBatch batch = new ReadBatch(start);
            for (int i : owned) {
                ObjectLocation loc = locs.get(i).value();
                arenas[i] = Arena.ofShared();
                buffers[i] = arenas[i].allocate(Math.max(1, loc.size()), 64).asSlice(0, loc.size());
                reads.set(i, read(loc, buffers[i], batch, false));
            }
            batch.flush();
            for (int i : owned) {
                ObjectLocation loc = locs.get(i).value();
                try {
                    reads.get(i).join();
                    checkLease(loc, start);
                    out.set(i, KeyResult.ok(keys.get(i), new PinnedValue(List.of(buffers[i].asReadOnly()),
                            loc.size(), false, arenas[i]::close)));
                } catch (RuntimeException e) {
                    arenas[i].close();
                    TiffinException t = e instanceof CompletionException c ? transferFailure("get " + loc.key(),
                            c.getCause()) : e instanceof TiffinException te ? te : transferFailure("get " + loc.key(), e);
                    if (rethrow) {
                        throw t; // single-key call: nothing else was opened
                    }
                    out.set(i, KeyResult.failed(keys.get(i), t.code()));
                }
            }
        }
        return out;
    }

    /**
     * The object's memory replicas on other nodes, in the master's order; null when one lives in a
     * segment of this JVM (it is copied, not cached).
     */
    private List<ReplicaDescriptor> remoteMemoryReplicas(ObjectLocation loc) {
        List<ReplicaDescriptor> remote = new ArrayList<>();
        for (ReplicaDescriptor d : loc.replicas()) {
            if (d.type() == ReplicaType.MEMORY) {
                if (isDirect(d)) {
                    return null;
                }
                remote.add(d);
            }
        }
        return remote;
    }

    /**
     * Reads object k from {@code replicas.get(k)} into the pieces {@code targets.get(k)} (in order,
     * together the object's size), pipelined per node. Returns per object null or its failure.
     */
    /**
     * Reads each object's first replica into its targets; waits for answers until {@code leaseEndNanos}
     * at most (the end of the reads' leases; after it the bytes may be another object's anyway).
     */
    private TiffinException[] readScattered(List<ReplicaDescriptor> replicas, List<List<MemorySegment>> targets,
                                            long leaseEndNanos) {
        Map<String, DirectBatch> byNode = new LinkedHashMap<>();
        for (int k = 0; k < replicas.size(); k++) {
            ReplicaDescriptor d = replicas.get(k);
            DirectBatch batch = byNode.computeIfAbsent(d.endpoint(), DirectBatch::new);
            long objectOffset = 0;
            for (MemorySegment piece : targets.get(k)) {
                for (long off = 0; off < piece.byteSize(); off += options.sliceSize()) {
                    long len = Math.min(options.sliceSize(), piece.byteSize() - off);
                    batch.add(k, DataRequest.newBuilder().setSegment(d.segment()).setMountEpoch(d.mountEpoch())
                            .setOffset(d.offset() + objectOffset + off).setLength(len).build(), piece.asSlice(off, len));
                }
                objectOffset += piece.byteSize();
            }
        }
        return exchange(Opcode.DATA_READ, byNode.values(), replicas.size(), leaseEndNanos == 0 ? 1 : leaseEndNanos);
    }

    /**
     * Sends the data-plane requests of {@code batches} (one per node) with {@link
     * BlockingConnectionPool#exchange}: DATA_WRITE carries each request's bulk out, DATA_READ receives
     * each answer into it. Returns per object (the requests' owners, 0 to {@code objects} - 1) null or
     * its first failure.
     */
    private TiffinException[] exchange(Opcode opcode, java.util.Collection<DirectBatch> batches, int objects,
                                       long endNanos) {
        TiffinException[] failed = new TiffinException[objects];
        List<DirectBatch> list = new ArrayList<>(batches);
        boolean write = opcode == Opcode.DATA_WRITE;
        try {
            TiffinException[][] outcome = direct.exchange(opcode, list.stream().map(b -> new BlockingConnectionPool.Batch(
                    b.endpoint, b.requests, write ? b.bulks : null, write ? null : b.bulks)).toList(), endNanos);
            for (int b = 0; b < list.size(); b++) {
                for (int i = 0; i < outcome[b].length; i++) {
                    int k = list.get(b).owners.get(i);
                    if (outcome[b][i] != null && failed[k] == null) {
                        failed[k] = outcome[b][i];
                    }
                }
            }
        } catch (RuntimeException e) {
            java.util.Arrays.fill(failed, e instanceof TiffinException t ? t : transferFailure(opcode.name(), e));
        }
        return failed;
    }

    /** A thread that never runs: a segment it cannot access is confined to its owner thread. */
    private static final Thread ACCESS_PROBE = Thread.ofVirtual().unstarted(() -> { });

    /**
     * Whether only its owner thread may touch {@code segment} (an {@code Arena.ofConfined()} segment).
     * Transfers run on Netty threads, so such a segment costs one copy on the calling thread; shared,
     * global, automatic and heap segments are used directly (zero copy).
     */
    static boolean isThreadConfined(MemorySegment segment) {
        return !segment.isAccessibleBy(ACCESS_PROBE);
    }

    /** {@code segment} itself, or a shareable copy of it when it is thread-confined. */
    private static MemorySegment shareable(MemorySegment segment) {
        if (!isThreadConfined(segment)) {
            return segment;
        }
        MemorySegment copy = Arena.ofAuto().allocate(segment.byteSize());
        MemorySegment.copy(segment, 0, copy, 0, segment.byteSize());
        return copy;
    }

    private void readAndCheckLease(ObjectLocation loc, MemorySegment dst, long startNanos) {
        try {
            read(loc, dst, startNanos).join();
        } catch (CompletionException e) {
            throw transferFailure("get " + loc.key(), e.getCause());
        }
        checkLease(loc, startNanos);
    }

    /** Whether a read of {@code loc} that began at {@code startNanos} (before its lookup) is still within the lease. */
    private static boolean withinLease(ObjectLocation loc, long startNanos) {
        return System.nanoTime() - startNanos < TimeUnit.MILLISECONDS.toNanos(loc.leaseTtlMillis());
    }

    private static void checkLease(ObjectLocation loc, long startNanos) {
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
        if (elapsedMs >= loc.leaseTtlMillis()) {
            throw new TiffinException(ErrorCode.LEASE_EXPIRED, loc.key() + ": the read took " + elapsedMs
                    + " ms but the lease lasted " + loc.leaseTtlMillis() + " ms; the bytes may have been evicted, retry");
        }
    }

    /** Reads the object into {@code dst}: a local replica first, then remote ones in order. */
    private CompletableFuture<Void> read(ObjectLocation loc, MemorySegment dst, long startNanos) {
        ReadBatch ssd = new ReadBatch(startNanos);
        CompletableFuture<Void> f = read(loc, dst, ssd);
        ssd.flush();
        return f;
    }

    /**
     * Reads gathered during one call. Reads of SSD-only objects are sent as one {@code DATA_READ_SSD}
     * per node (in chunks that fit a frame), so a batch get costs one SSD round trip per node. Reads of
     * remote memory replicas that the hot cache will not keep go over pooled blocking connections: every
     * slice request to every node is written first, then the calling thread receives the answers
     * straight into the destinations (one copy, no event-loop hand-off); a read that fails there falls
     * back to the object's other replicas.
     *
     * <p>Not thread-safe: used by the calling thread only.
     */
    private final class ReadBatch {
        private record Pending(ObjectLocation loc, MemorySegment dst, CompletableFuture<Void> done) {
        }

        /**
         * A read of a remote memory replica. With {@code fill} set, the bytes are received into
         * {@code staging} (a pooled buffer), copied to {@code dst}, and {@code staging} is then handed to
         * the hot cache's ring, which copies it into cache blocks on its own thread.
         */
        private record MemoryRead(List<ReplicaDescriptor> replicas, MemorySegment dst, CompletableFuture<Void> done,
                                  ObjectLocation fill, ByteBuf staging) {
            MemorySegment target() {
                return staging == null ? dst : MemorySegment.ofBuffer(staging.nioBuffer(0, (int) dst.byteSize()));
            }
        }

        private final Map<String, List<Pending>> byEndpoint = new LinkedHashMap<>();
        private final List<MemoryRead> memoryReads = new ArrayList<>();
        /** When the call began, before its lookups: the leases they granted started later. */
        private final long startNanos;

        /** The shortest lease of the memory reads added (ns); their answers are awaited no longer. */
        private long leaseNanos = Long.MAX_VALUE / 4;

        ReadBatch(long startNanos) {
            this.startNanos = startNanos;
        }

        /** A memory read of {@code loc} is about to be added: its lease bounds the batch's wait. */
        void noteLease(ObjectLocation loc) {
            leaseNanos = Math.min(leaseNanos, TimeUnit.MILLISECONDS.toNanos(loc.leaseTtlMillis()));
        }

        /**
         * Whether bytes just received for {@code loc} were read under its lease and may be cached. After
         * the lease the master may have freed the replica and given its memory to another object, whose
         * bytes the read may have received: such a read fails ({@code LEASE_EXPIRED}) and must not leave
         * them in the cache under this object's version.
         */
        boolean withinLease(ObjectLocation loc) {
            return TiffinClient.withinLease(loc, startNanos);
        }

        CompletableFuture<Void> addMemory(List<ReplicaDescriptor> replicas, MemorySegment dst) {
            CompletableFuture<Void> done = new CompletableFuture<>();
            memoryReads.add(new MemoryRead(replicas, dst, done, null, null));
            return done;
        }

        /** A memory read whose bytes are also offered to the hot cache (see {@link MemoryRead}). */
        CompletableFuture<Void> addMemoryFill(List<ReplicaDescriptor> replicas, MemorySegment dst, ObjectLocation loc) {
            CompletableFuture<Void> done = new CompletableFuture<>();
            ByteBuf staging = io.netty.buffer.PooledByteBufAllocator.DEFAULT.directBuffer((int) loc.size(),
                    (int) loc.size());
            memoryReads.add(new MemoryRead(replicas, dst, done, loc, staging));
            return done;
        }

        private void flushMemory() {
            if (memoryReads.isEmpty()) {
                return;
            }
            List<ReplicaDescriptor> first = new ArrayList<>(memoryReads.size());
            List<List<MemorySegment>> targets = new ArrayList<>(memoryReads.size());
            for (MemoryRead r : memoryReads) {
                first.add(r.replicas().getFirst());
                targets.add(List.of(r.target()));
            }
            TiffinException[] failed = readScattered(first, targets, startNanos + leaseNanos);
            for (int k = 0; k < failed.length; k++) {
                MemoryRead r = memoryReads.get(k);
                if (r.staging() != null) {
                    if (failed[k] == null) {
                        try {
                            MemorySegment.copy(r.target(), 0, r.dst(), 0, r.dst().byteSize());
                        } catch (RuntimeException e) {
                            failed[k] = transferFailure("read", e);
                        }
                    }
                    if (failed[k] == null && withinLease(r.fill())) {
                        hotCache.offerFill(r.fill().key(), r.fill().version(), r.fill().size(),
                                List.of(r.staging().writerIndex((int) r.fill().size())));
                    } else {
                        r.staging().release();
                    }
                }
                if (failed[k] == null) {
                    r.done().complete(null);
                } else if (r.replicas().size() > 1 && failed[k].code() != ErrorCode.LEASE_EXPIRED) {
                    // (after the lease, no replica's bytes can be trusted: the read fails as it is)
                    LOG.debug("read of replica 0 failed ({}), trying the others", failed[k].getMessage());
                    readRemote(r.replicas(), 1, r.dst(), r.fill(), startNanos).whenComplete((v, err) -> {
                        if (err == null) {
                            r.done().complete(null);
                        } else {
                            r.done().completeExceptionally(err);
                        }
                    });
                } else {
                    r.done().completeExceptionally(failed[k]);
                }
            }
            memoryReads.clear();
        }

        CompletableFuture<Void> add(String endpoint, ObjectLocation loc, MemorySegment dst) {
            CompletableFuture<Void> done = new CompletableFuture<>();
            byEndpoint.computeIfAbsent(endpoint, e -> new ArrayList<>()).add(new Pending(loc, dst, done));
            return done;
        }

        /** Sends the SSD reads (answered asynchronously), then performs the memory reads. */
        void flush() {
            flushSsd();
            flushMemory();
        }

        private void flushSsd() {
            long budget = Math.max(1, options.transport().maxFrameSize() - (1L << 20));
            for (Map.Entry<String, List<Pending>> e : byEndpoint.entrySet()) {
                List<Pending> chunk = new ArrayList<>();
                long bytes = 0;
                for (Pending p : e.getValue()) {
                    if (!chunk.isEmpty() && bytes + p.loc().size() > budget) {
                        send(e.getKey(), chunk);
                        chunk = new ArrayList<>();
                        bytes = 0;
                    }
                    chunk.add(p);
                    bytes += p.loc().size();
                }
                if (!chunk.isEmpty()) {
                    send(e.getKey(), chunk);
                }
            }
            byEndpoint.clear();
        }

        private void send(String endpoint, List<Pending> chunk) {
            io.tiffin.core.transport.proto.SsdReadRequest.Builder req = io.tiffin.core.transport.proto.SsdReadRequest
                    .newBuilder();
            for (Pending p : chunk) {
                req.addKeys(p.loc().key());
            }
            CompletableFuture<Frame> call;
            try {
                call = pool.get(endpoint).call(Opcode.DATA_READ_SSD, req.build(), null);
            } catch (RuntimeException ex) {
                chunk.forEach(p -> p.done().completeExceptionally(ex));
                return;
            }
            call.whenComplete((frame, err) -> {
                if (err != null) {
                    chunk.forEach(p -> p.done().completeExceptionally(err));
                    return;
                }
                try {
                    var reply = frame.parseControl(io.tiffin.core.transport.proto.SsdReadReply.parser());
                    ByteBuf bulk = frame.bulk();
                    checkSsdReply(endpoint, chunk.size(), reply.getSizesList(), bulk.readableBytes());
                    int at = bulk.readerIndex();
                    for (int i = 0; i < chunk.size(); i++) {
                        Pending p = chunk.get(i);
                        long size = reply.getSizes(i);
                        if (size != p.loc().size()) {
                            // the node's copy has another size: not this version; its bytes are skipped
                            at += (int) Math.max(0, size);
                            p.done().completeExceptionally(new TiffinException(ErrorCode.OBJECT_NOT_FOUND,
                                    p.loc().key() + ": its SSD copy on " + endpoint + " is gone or corrupt"));
                            continue;
                        }
                        bulk.getBytes(at, p.dst().asByteBuffer());
                        if (hotCache != null && hotCache.accepts(size) && withinLease(p.loc())) {
                            hotCache.offerFill(p.loc().key(), p.loc().version(), size,
                                    List.of(bulk.retainedSlice(at, (int) size)));
                        }
                        at += (int) size;
                        p.done().complete(null);
                    }
                } catch (RuntimeException ex) {
                    chunk.forEach(p -> p.done().completeExceptionally(ex));
                } finally {
                    frame.release();
                }
            });
        }
    }

    /**
     * Checks a {@code DATA_READ_SSD} answer before any of its bytes is used: one size per key asked for
     * (-1 = not read, taking no room) and the bulk exactly the sum of the others, so every key's bytes are
     * where the sizes say.
     *
     * @throws TiffinException {@code TRANSFER_FAIL} naming the node, when the answer does not add up
     */
    static void checkSsdReply(String endpoint, int keys, List<Long> sizes, long bulkBytes) {
        long sum = 0;
        for (long size : sizes) {
            sum += Math.max(0, size);
        }
        if (sizes.size() != keys || sum != bulkBytes) {
            throw new TiffinException(ErrorCode.TRANSFER_FAIL, "node " + endpoint + " answered an SSD read of " + keys
                    + " keys with " + sizes.size() + " sizes adding up to " + sum + " bytes and " + bulkBytes
                    + " bytes of data; is it running the same Tiffin version?");
        }
    }

    private CompletableFuture<Void> read(ObjectLocation loc, MemorySegment dst, ReadBatch ssd) {
        return read(loc, dst, ssd, true);
    }

    /** {@code lookInCache} false: the caller already missed in the hot cache for this read. */
    private CompletableFuture<Void> read(ObjectLocation loc, MemorySegment dst, ReadBatch ssd, boolean lookInCache) {
        List<ReplicaDescriptor> memory = new ArrayList<>();
        for (ReplicaDescriptor d : loc.replicas()) {
            if (d.type() == ReplicaType.MEMORY) {
                MemorySegment local;
                try {
                    local = directSlice(d, false);
                } catch (RuntimeException e) {
                    local = null;
                }
                if (local != null) {
                    try {
                        MemorySegment.copy(local, 0, dst, 0, d.size());
                        if (directEpochMoved(d)) {
                            // Re-mounted since the master named it: leave it to the node, which refuses it.
                            memory.add(d);
                            continue;
                        }
                        return CompletableFuture.completedFuture(null);
                    } catch (RuntimeException e) {
                        LOG.debug("local read of {} failed, trying the socket", loc.key(), e);
                        memory.add(d);
                    }
                } else {
                    memory.add(d);
                }
            }
        }
        // Only objects read from remote nodes (or SSD) are cached: a local replica is already local.
        if (hotCache != null && lookInCache) {
            try {
                if (hotCache.tryRead(loc.key(), loc.version(), loc.size(), dst)) {
                    return CompletableFuture.completedFuture(null);
                }
            } catch (IllegalStateException closedArena) {
                LOG.debug("hot cache closed during a read of {}", loc.key(), closedArena);
            }
        }
        if (memory.isEmpty()) {
            for (ReplicaDescriptor d : loc.replicas()) {
                if (d.type() == ReplicaType.LOCAL_DISK) {
                    return ssd.add(d.endpoint(), loc, dst);
                }
            }
            return CompletableFuture.failedFuture(new TiffinException(ErrorCode.REPLICA_IS_NOT_READY,
                    loc.key() + ": no readable replica"));
        }
        ssd.noteLease(loc);
        if (hotCache != null && hotCache.accepts(loc.size())) {
            return ssd.addMemoryFill(memory, dst, loc);
        }
        return ssd.addMemory(memory, dst);
    }

    /**
     * Reads replica {@code index} (falling back to the next ones) into {@code dst}. With
     * {@code fillFor} set, the received buffers are kept (retained slices, no copy on this path) and
     * handed to the hot cache once the whole object has arrived.
     */
    private CompletableFuture<Void> readRemote(List<ReplicaDescriptor> replicas, int index, MemorySegment dst,
                                               ObjectLocation fillFor, long startNanos) {
        ReplicaDescriptor d = replicas.get(index);
        CompletableFuture<Void> attempt;
        int slices = (int) ((d.size() + options.sliceSize() - 1) / options.sliceSize());
        ByteBuf[] kept = fillFor == null ? null : new ByteBuf[slices];
        try {
            TransportClient node = pool.get(d.endpoint());
            List<CompletableFuture<?>> parts = new ArrayList<>(slices);
            for (int i = 0; i < slices; i++) {
                long off = i * options.sliceSize();
                long len = Math.min(options.sliceSize(), d.size() - off);
                MemorySegment target = dst.asSlice(off, len);
                int slice = i;
                DataRequest req = DataRequest.newBuilder().setSegment(d.segment()).setOffset(d.offset() + off)
                        .setLength(len).setMountEpoch(d.mountEpoch()).build();
                parts.add(node.call(Opcode.DATA_READ, req, null).thenAccept(frame -> {
                    try {
                        ByteBuf bulk = frame.bulk();
                        if (bulk.readableBytes() != len) {
                            throw new TiffinException(ErrorCode.TRANSFER_FAIL, "node " + d.endpoint() + " sent "
                                    + bulk.readableBytes() + " bytes, expected " + len);
                        }
                        bulk.getBytes(bulk.readerIndex(), target.asByteBuffer());
                        if (kept != null) {
                            kept[slice] = bulk.retainedSlice();
                        }
                    } finally {
                        frame.release();
                    }
                }));
            }
            attempt = CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new));
        } catch (RuntimeException e) {
            attempt = CompletableFuture.failedFuture(e);
        }
        if (kept != null) {
            attempt = attempt.whenComplete((v, err) -> {
                if (err == null && withinLease(fillFor, startNanos)) {
                    hotCache.offerFill(fillFor.key(), fillFor.version(), fillFor.size(), java.util.Arrays.asList(kept));
                } else {
                    for (ByteBuf b : kept) {
                        if (b != null) {
                            b.release();
                        }
                    }
                }
            });
        }
        if (index + 1 >= replicas.size()) {
            return attempt;
        }
        return attempt.handle((v, err) -> err == null ? CompletableFuture.<Void>completedFuture(null)
                : readRemote(replicas, index + 1, dst, fillFor, startNanos)).thenCompose(f -> f);
    }

    @Override
    public List<KeyResult<byte[]>> batchGet(List<String> keys) {
        checkKeys(keys);
        boolean[] cached = new boolean[keys.size()];
        List<KeyResult<byte[]>> out = batchGet(keys, cached);
        int[] again = refusedCached(out, cached);
        if (again.length > 0) {
            splice(out, again, batchGet(pick(keys, again), null));
        }
        return out;
    }

    /** {@code cached}: null = ask the master for every key, else set where the location cache answered. */
    private List<KeyResult<byte[]>> batchGet(List<String> keys, boolean[] cached) {
        long start = System.nanoTime();
        List<KeyResult<ObjectLocation>> locs = batchLocate(keys, cached);
        List<CompletableFuture<Void>> reads = new ArrayList<>(keys.size());
        byte[][] bufs = new byte[keys.size()][];
        ReadBatch ssd = new ReadBatch(start);
        for (int i = 0; i < keys.size(); i++) {
            KeyResult<ObjectLocation> r = locs.get(i);
            if (r.isOk() && r.value().size() <= Integer.MAX_VALUE - 16) {
                bufs[i] = new byte[(int) r.value().size()];
                reads.add(read(r.value(), MemorySegment.ofArray(bufs[i]), ssd));
            } else {
                reads.add(null);
            }
        }
        ssd.flush();
        List<KeyResult<byte[]>> out = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            KeyResult<ObjectLocation> r = locs.get(i);
            out.add(finishRead(r, reads.get(i), start, bufs[i]));
        }
        return out;
    }

    @Override
    public List<KeyResult<Long>> batchGetInto(List<String> keys, List<MemorySegment> destinations) {
        checkKeys(keys);
        for (int i = 0; destinations != null && i < destinations.size(); i++) {
            checkSegment(destinations.get(i), true, "destination of key ", i);
        }
        if (keys.size() != destinations.size()) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "batch get: " + keys.size() + " keys but "
                    + destinations.size() + " destinations");
        }
        if (destinations.stream().anyMatch(TiffinClient::isThreadConfined)) {
            List<MemorySegment> staging = destinations.stream()
                    .map(d -> isThreadConfined(d) ? Arena.ofAuto().allocate(Math.max(1, d.byteSize())) : d).toList();
            List<KeyResult<Long>> results = batchGetInto(keys, staging);
            for (int i = 0; i < keys.size(); i++) {
                if (staging.get(i) != destinations.get(i) && results.get(i).isOk()) {
                    MemorySegment.copy(staging.get(i), 0, destinations.get(i), 0, results.get(i).value());
                }
            }
            return results;
        }
        boolean[] cached = new boolean[keys.size()];
        List<KeyResult<Long>> out = batchGetIntoLocated(keys, destinations, cached);
        int[] again = refusedCached(out, cached);
        if (again.length > 0) {
            splice(out, again, batchGetIntoLocated(pick(keys, again), pick(destinations, again), null));
        }
        return out;
    }

    /** {@code cached}: null = ask the master for every key, else set where the location cache answered. */
    private List<KeyResult<Long>> batchGetIntoLocated(List<String> keys, List<MemorySegment> destinations,
                                                      boolean[] cached) {
        long start = System.nanoTime();
        List<KeyResult<ObjectLocation>> locs = batchLocate(keys, cached);
        List<CompletableFuture<Void>> reads = new ArrayList<>(keys.size());
        ReadBatch ssd = new ReadBatch(start);
        ErrorCode[] early = new ErrorCode[keys.size()];
        for (int i = 0; i < keys.size(); i++) {
            KeyResult<ObjectLocation> r = locs.get(i);
            if (!r.isOk()) {
                reads.add(null);
            } else if (destinations.get(i).byteSize() < r.value().size()) {
                early[i] = ErrorCode.BUFFER_OVERFLOW;
                reads.add(null);
            } else {
                reads.add(read(r.value(), destinations.get(i).asSlice(0, r.value().size()), ssd));
            }
        }
        ssd.flush();
        List<KeyResult<Long>> out = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            KeyResult<ObjectLocation> r = locs.get(i);
            if (early[i] != null) {
                out.add(KeyResult.failed(keys.get(i), early[i]));
            } else {
                out.add(finishRead(r, reads.get(i), start, r.isOk() ? r.value().size() : null));
            }
        }
        return out;
    }

    private static <T> KeyResult<T> finishRead(KeyResult<ObjectLocation> r, CompletableFuture<Void> read, long start, T value) {
        if (!r.isOk()) {
            return KeyResult.failed(r.key(), r.code());
        }
        if (read == null) {
            return KeyResult.failed(r.key(), ErrorCode.BUFFER_OVERFLOW);
        }
        try {
            read.join();
            checkLease(r.value(), start);
            return KeyResult.ok(r.key(), value);
        } catch (TiffinException e) {
            return KeyResult.failed(r.key(), e.code());
        } catch (CompletionException e) {
            return KeyResult.failed(r.key(), e.getCause() instanceof TiffinException t ? t.code() : ErrorCode.TRANSFER_FAIL);
        }
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
        long now = System.nanoTime();
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
    private List<KeyResult<ObjectLocation>> batchLocate(List<String> keys, boolean[] cached) {
        int n = keys.size();
        List<KeyResult<ObjectLocation>> out = new ArrayList<>(java.util.Collections.nCopies(n, null));
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
        long sent = System.nanoTime();
        BatchKeysRequest.Builder req = BatchKeysRequest.newBuilder().addAllKeys(ask);
        if (locations != null) {
            req.setCacheForMs(locations.cacheForMillis()).setCacheOwner(cacheOwner);
        }
        BatchLocationsReply reply = rpc(Opcode.BATCH_GET_REPLICA_LIST, req.build(), BatchLocationsReply.parser());
        for (int j = 0; j < ask.size(); j++) {
            int i = askAt == null ? j : askAt[j];
            LocationResult lr = reply.getResults(j);
            ErrorCode code = ErrorCode.fromValue(lr.getCode());
            if (code == ErrorCode.OK) {
                ObjectLocation loc = Messages.fromMsg(lr.getLocation());
                remember(loc, sent, stamps[j]);
                out.set(i, KeyResult.ok(keys.get(i), loc));
            } else {
                out.set(i, KeyResult.failed(keys.get(i), code));
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ exists, remove, query

    @Override
    public boolean exists(String key) {
        checkKey(key);
        if (locations != null && key != null && locations.get(key, System.nanoTime()) != null) {
            return true; // leased by this client's earlier lookup: not removed (a forced removal waits for it)
        }
        return rpc(Opcode.EXIST_KEY, KeyRequest.newBuilder().setKey(key).build(), ExistReply.parser()).getExists();
    }

    @Override
    public List<KeyResult<Boolean>> batchExists(List<String> keys) {
        checkKeys(keys);
        List<KeyResult<Boolean>> out = new ArrayList<>(java.util.Collections.nCopies(keys.size(), null));
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
        BatchExistReply reply = rpc(Opcode.BATCH_EXIST_KEY, BatchKeysRequest.newBuilder().addAllKeys(ask).build(),
                BatchExistReply.parser());
        for (int j = 0; j < ask.size(); j++) {
            ErrorCode code = ErrorCode.fromValue(reply.getCodes(j));
            out.set(askAt[j], code == ErrorCode.OK ? KeyResult.ok(ask.get(j), reply.getExists(j))
                    : KeyResult.failed(ask.get(j), code));
        }
        return out;
    }

    @Override
    public void remove(String key, boolean force) {
        checkKey(key);
        // Dropped before and after: a lookup of another thread answered meanwhile (with a lease that a
        // forced remove does not wait for) must not leave the removed object in the location cache.
        invalidate(key);
        try {
            rpc(Opcode.REMOVE, KeyRequest.newBuilder().setKey(key).setForce(force).setCacheOwner(cacheOwner).build(),
                    Empty.parser());
        } finally {
            invalidate(key);
        }
    }

    @Override
    public List<KeyResult<Void>> batchRemove(List<String> keys, boolean force) {
        checkKeys(keys);
        keys.forEach(this::invalidate);
        BatchCodesReply reply;
        try {
            reply = rpc(Opcode.BATCH_REMOVE, BatchKeysRequest.newBuilder().addAllKeys(keys).setForce(force)
                    .setCacheOwner(cacheOwner).build(), BatchCodesReply.parser());
        } finally {
            keys.forEach(this::invalidate); // as in remove
        }
        List<KeyResult<Void>> out = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            ErrorCode code = ErrorCode.fromValue(reply.getCodes(i));
            out.add(code == ErrorCode.OK ? KeyResult.ok(keys.get(i), null) : KeyResult.failed(keys.get(i), code));
        }
        return out;
    }

    @Override
    public long removeByRegex(String regex, boolean force) {
        if (hotCache != null) {
            io.tiffin.core.keys.KeyQuery q = io.tiffin.core.keys.KeyQuery.compile(regex);
            hotCache.invalidateMatching(q::matches);
        }
        io.tiffin.core.keys.KeyQuery q = locations == null ? null : io.tiffin.core.keys.KeyQuery.compile(regex);
        if (q != null) {
            locations.invalidateMatching(q::matches);
        }
        if (hints != null) {
            // not needed for correctness (a hint is only used once the lookup confirms it): saves wasted reads
            hints.invalidateMatching(io.tiffin.core.keys.KeyQuery.compile(regex)::matches);
        }
        try {
            return rpc(Opcode.REMOVE_BY_REGEX, RegexRequest.newBuilder().setRegex(regex).setForce(force)
                    .setCacheOwner(cacheOwner).build(), CountReply.parser()).getCount();
        } finally {
            if (q != null) {
                locations.invalidateMatching(q::matches); // as in remove
            }
        }
    }

    @Override
    public long removeAll(boolean force) {
        if (hotCache != null) {
            hotCache.invalidateMatching(k -> true);
        }
        if (locations != null) {
            locations.invalidateMatching(k -> true);
        }
        if (hints != null) {
            hints.invalidateMatching(k -> true);
        }
        try {
            return rpc(Opcode.REMOVE_ALL, RemoveAllRequest.newBuilder().setForce(force).setCacheOwner(cacheOwner)
                    .build(), CountReply.parser()).getCount();
        } finally {
            if (locations != null) {
                locations.invalidateMatching(k -> true); // as in remove
            }
        }
    }

    @Override
    public Optional<ObjectLocation> locate(String key) {
        checkKey(key);
        try {
            return Optional.of(Messages.fromMsg(rpc(Opcode.GET_REPLICA_LIST, KeyRequest.newBuilder().setKey(key).build(),
                    ObjectLocationMsg.parser())));
        } catch (TiffinException e) {
            if (e.code() == ErrorCode.OBJECT_NOT_FOUND) {
                return Optional.empty();
            }
            throw e;
        }
    }

    @Override
    public Map<String, ObjectLocation> locateByRegex(String regex) {
        LocationsByRegexReply reply = rpc(Opcode.GET_REPLICA_LIST_BY_REGEX, RegexRequest.newBuilder().setRegex(regex).build(),
                LocationsByRegexReply.parser());
        Map<String, ObjectLocation> out = new LinkedHashMap<>();
        for (ObjectLocationMsg m : reply.getLocationsList()) {
            out.put(m.getKey(), Messages.fromMsg(m));
        }
        return out;
    }

    /** Keys starting with {@code prefix}, in order, with their sizes; at most {@code limit}. */
    public ListKeysReply listKeys(String prefix, int limit) {
        return rpc(Opcode.LIST_KEYS, ListKeysRequest.newBuilder().setPrefix(prefix).setLimit(limit).build(),
                ListKeysReply.parser());
    }

    /** Cluster summary: capacity, usage, keys, nodes, segments. */
    public StatsReply stats() {
        return rpc(Opcode.STATS, Empty.getDefaultInstance(), StatsReply.parser());
    }

    // ------------------------------------------------------------------ helpers

    private TiffinException transferFailure(String what, Throwable cause) {
        if (closed) {
            return new TiffinException(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, what + ": the client was closed during"
                    + " the call", cause);
        }
        if (Thread.currentThread().isInterrupted() || causedBy(cause, java.nio.channels.ClosedByInterruptException.class)
                || causedBy(cause, InterruptedException.class)) {
            return new TiffinException(ErrorCode.TRANSFER_FAIL, what + ": the calling thread was interrupted and the"
                    + " transfer abandoned (not a network failure; the thread's interrupt flag is kept)", cause);
        }
        if (cause instanceof TiffinException t && t.code() != ErrorCode.RPC_FAIL && t.code() != ErrorCode.INTERNAL_ERROR) {
            return t;
        }
        return new TiffinException(ErrorCode.TRANSFER_FAIL, what + ": moving bytes to or from a node failed ("
                + (cause == null ? "unknown" : cause.getMessage()) + "); check that the nodes are reachable and retry", cause);
    }

    private static boolean causedBy(Throwable t, Class<? extends Throwable> type) {
        for (int depth = 0; t != null && depth < 16; t = t.getCause(), depth++) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void close() {
        if (reporter != null) {
            reporter.shutdownNow();
        }
        closed = true;
        direct.close();
        pool.close();
        if (shared != null) {
            shared.close();
        }
        if (hotCache != null) {
            hotCache.close();
        }
    }

    /**
     * The replica's bytes in this process's address space, or null: a segment of this JVM (same-JVM
     * shortcut) or a same-host node's shared-memory segment mapped here (same-host shortcut). A copy
     * from or to the returned slice may throw IllegalStateException if the segment closes meanwhile.
     */
    private MemorySegment directSlice(ReplicaDescriptor d, boolean forWrite) {
        if (options.localMemcpy()) {
            LocalSegment local = LocalSegmentDirectory.find(d.segment());
            if (local != null) {
                return local.slice(d.offset(), d.size());
            }
        }
        return shared == null ? null : shared.slice(d.endpoint(), d.segment(), d.offset(), d.size(), forWrite);
    }

    /**
     * The current mount epoch of the segment a direct replica is copied from (a segment of this JVM, or
     * a same-host segment mapped here), or -1 when it is not known.
     */
    private long directMountEpoch(ReplicaDescriptor d) {
        if (options.localMemcpy()) {
            LocalSegment local = LocalSegmentDirectory.find(d.segment());
            if (local != null) {
                return local.mountEpoch();
            }
        }
        return shared == null ? -1 : shared.mountEpoch(d.segment());
    }

    /**
     * Whether a direct copy of {@code d} may have met another mount's bytes: the segment's current mount
     * epoch, read after the copy (or before a write), is not the descriptor's. The node makes the same
     * check on the socket path.
     */
    private boolean directEpochMoved(ReplicaDescriptor d) {
        if (d.mountEpoch() == 0) {
            return false;
        }
        long now = directMountEpoch(d);
        return now >= 0 && now != d.mountEpoch();
    }

    private boolean isDirect(ReplicaDescriptor d) {
        try {
            return directSlice(d, false) != null;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** Number of same-host shared-memory segments this client has mapped now; for tests and diagnostics. */
    public int sharedSegmentsMapped() {
        return shared == null ? 0 : shared.mappedCount();
    }
}
