package io.tiffin.core.client;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;

/**
 * The master's refusals that end within moments on their own, and the pauses a call takes before it asks again:
 * {@link #RETRIES} pauses of 20, 40, 80, 160 and 320 ms, about 0.6 s in all.
 *
 * <p>Thread-safe (no state).
 */
final class BriefRefusals {
    /** Attempts after the first. */
    static final int RETRIES = 5;

    private BriefRefusals() {
    }

    /**
     * Whether a put's PutStart answered {@code code} for a moment only: no room yet (the master's evictor, or an
     * offload to SSD, frees some), another writer's put of the key under way, or a node copying the object to SSD or
     * back from it.
     */
    static boolean ofPut(ErrorCode code) {
        return code == ErrorCode.NO_AVAILABLE_HANDLE || code == ErrorCode.REPLICA_IS_NOT_READY
                || code == ErrorCode.OBJECT_HAS_REPLICATION_TASK;
    }

    /**
     * Whether a batch put's PutStart answered {@code code} for one key for a moment only: another writer's put of the
     * key under way, or a node copying the object to SSD or back. Not {@code NO_AVAILABLE_HANDLE}: a batch answers it
     * at once, so that its caller sees the pressure (the engines back off on it).
     */
    static boolean ofBatchPut(ErrorCode code) {
        return code == ErrorCode.REPLICA_IS_NOT_READY || code == ErrorCode.OBJECT_HAS_REPLICATION_TASK;
    }

    /** Whether a removal answered {@code code} for a moment only: a node copying the object to SSD or back. */
    static boolean ofRemove(ErrorCode code) {
        return code == ErrorCode.OBJECT_HAS_REPLICATION_TASK;
    }

    /**
     * Sleeps before attempt {@code attempt + 1} of {@code what}.
     *
     * @throws TiffinException {@code refused} (the answer the caller would have given) if interrupted
     */
    static void pause(int attempt, ErrorCode refused, String what) {
        try {
            Thread.sleep(20L << attempt);
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            throw new TiffinException(refused, "interrupted while waiting to retry " + what, ie);
        }
    }
}
