package io.tiffin.core.client;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.TiffinException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Writes: PutStart → write every replica → PutEnd; any failed write → PutRevoke and {@link
 * ErrorCode#TRANSFER_FAIL}. A PutStart that finds no room ({@code NO_AVAILABLE_HANDLE}) is retried a few
 * times while the master's evictor frees some. A put of an existing key without upsert is a successful
 * no-op (Mooncake's rule). Replicas in a segment this client reaches directly ({@link SameHostSegments}) are
 * written with a memory copy, the others through {@link SliceExchange}. The key is dropped from the client's
 * caches before the put, and a written object's first replica becomes its read hint.
 *
 * <p>Thread-safe (no state of its own). Arguments are checked by the caller ({@link TiffinClient}).
 */
final class PutPipeline {
    private static final Logger LOG = LogManager.getLogger(PutPipeline.class);
    /** Retries of a PutStart that found no room, while eviction (or offload to SSD) frees some. */
    private static final int PUT_RETRIES = 5;

    private final MasterStub master;
    private final String clientId;
    private final ClientCaches caches;
    private final SameHostSegments sameHost;
    private final SliceExchange slices;
    private final ClientLifecycle lifecycle;

    PutPipeline(MasterStub master, String clientId, ClientCaches caches, SameHostSegments sameHost,
                SliceExchange slices, ClientLifecycle lifecycle) {
        this.master = master;
        this.clientId = clientId;
        this.caches = caches;
        this.sameHost = sameHost;
        this.slices = slices;
        this.lifecycle = lifecycle;
    }

    /** Stores {@code value} (shareable: not thread-confined) under {@code key}. */
    void put(String key, MemorySegment value, PutOptions putOptions) {
        caches.invalidate(key);
        long size = value.byteSize();
        List<ReplicaDescriptor> replicas = null;
        try {
            for (int attempt = 0; replicas == null; attempt++) {
                try {
                    replicas = master.putStart(clientId, key, size, putOptions);
                } catch (TiffinException e) {
                    // A failed allocation wakes the master's evictor (every 10 ms); give it a moment.
                    if (e.code() != ErrorCode.NO_AVAILABLE_HANDLE || attempt >= PUT_RETRIES) {
                        throw e;
                    }
                    sleepBeforeRetry(attempt);
                }
            }
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
            failed = lifecycle.transferFailure("put " + key, e);
        }
        if (failed != null) {
            revokeQuietly(key);
            throw lifecycle.transferFailure("put " + key, failed);
        }
        master.putEnd(clientId, key);
        if (caches.hints() != null) {
            caches.hints().remember(key, replicas, sameHost::isDirect);
        }
    }

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
            master.putRevoke(clientId, key);
        } catch (RuntimeException e) {
            LOG.warn("PutRevoke of {} failed ({}); the master releases it after the put timeout", key, e.getMessage());
        }
    }

    /** Stores many values (shareable, one per key) with one master round trip per step; one result per key. */
    List<KeyResult<Void>> batchPut(List<String> keys, List<MemorySegment> values, PutOptions putOptions) {
        keys.forEach(caches::invalidate);
        int n = keys.size();
        long[] sizes = new long[n];
        for (int i = 0; i < n; i++) {
            sizes[i] = values.get(i).byteSize();
        }
        List<KeyResult<List<ReplicaDescriptor>>> started = master.batchPutStart(clientId, keys, sizes, putOptions);
        ErrorCode[] codes = new ErrorCode[n];
        List<List<ReplicaDescriptor>> toWrite = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            KeyResult<List<ReplicaDescriptor>> r = started.get(i);
            ErrorCode code = r.code();
            if (code == ErrorCode.OBJECT_ALREADY_EXISTS && !putOptions.upsert()) {
                code = ErrorCode.OK; // existing key: successful no-op
                toWrite.add(null);
            } else if (code == ErrorCode.OK) {
                toWrite.add(r.value());
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
            Arrays.fill(failed, lifecycle.transferFailure("batch put", e));
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
                master.batchPutRevoke(clientId, toRevoke);
            } catch (RuntimeException e) {
                LOG.warn("BatchPutRevoke failed ({}); the master releases the buffers after the put timeout", e.getMessage());
            }
        }
        if (!toEnd.isEmpty()) {
            List<ErrorCode> ended = master.batchPutEnd(clientId, toEnd);
            for (int j = 0; j < toEnd.size(); j++) {
                int i = endIdx.get(j);
                codes[i] = ended.get(j);
                if (codes[i] == ErrorCode.OK && caches.hints() != null) {
                    caches.hints().remember(keys.get(i), toWrite.get(i), sameHost::isDirect);
                }
            }
        }
        List<KeyResult<Void>> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(codes[i] == ErrorCode.OK ? KeyResult.ok(keys.get(i), null) : KeyResult.failed(keys.get(i), codes[i]));
        }
        return out;
    }

    /**
     * Writes every replica of every object: replicas in a segment this client reaches directly by memory
     * copy, the others over pooled blocking connections, all requests to all nodes sent before any answer
     * is awaited. Returns per object null when all its replicas were written, else the first failure.
     */
    private TiffinException[] writeAll(List<List<ReplicaDescriptor>> replicasPerObject, List<MemorySegment> srcs) {
        int n = srcs.size();
        TiffinException[] failed = new TiffinException[n];
        Map<String, SliceExchange.NodeRequests> byNode = new LinkedHashMap<>();
        for (int k = 0; k < n; k++) {
            List<ReplicaDescriptor> replicas = replicasPerObject.get(k);
            if (replicas == null) {
                continue;
            }
            MemorySegment src = srcs.get(k);
            for (ReplicaDescriptor d : replicas) {
                MemorySegment local;
                try {
                    local = sameHost.slice(d, true);
                } catch (RuntimeException e) {
                    failed[k] = failed[k] != null ? failed[k] : lifecycle.transferFailure("local write", e);
                    continue;
                }
                if (local != null && sameHost.epochMoved(d)) {
                    local = null; // re-mounted since PutStart: the node refuses the write over the socket
                }
                if (local != null) {
                    try {
                        MemorySegment.copy(src, 0, local, 0, d.size());
                    } catch (RuntimeException e) {
                        failed[k] = failed[k] != null ? failed[k] : lifecycle.transferFailure("local write", e);
                    }
                    continue;
                }
                slices.addWrite(byNode, k, d, src);
            }
        }
        if (byNode.isEmpty()) {
            return failed;
        }
        TiffinException[] sent = slices.write(byNode.values(), n);
        for (int k = 0; k < n; k++) {
            if (failed[k] == null) {
                failed[k] = sent[k];
            }
        }
        return failed;
    }
}
