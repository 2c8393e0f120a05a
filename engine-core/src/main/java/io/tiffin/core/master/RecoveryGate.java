package io.tiffin.core.master;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import java.util.List;

/**
 * What a master refuses while it recovers objects from its nodes after a takeover ({@link Recovery}), because an
 * object that a node has not reported yet may still come back: an upsert (it would replace that object; a put of
 * an existing key is a no-op, so a plain put may go on and yields if the object comes back, see
 * {@link SegmentAttachment}) and a PutEnd that finds no put of its key (the put may have been written under the
 * predecessor, its object coming back with a node; "not found" would report a put that took effect as failed).
 * Both fail as a whole with {@code UNAVAILABLE_IN_CURRENT_STATUS}, which clients repeat until the recovery ends;
 * removals are refused the same way ({@link MasterRpcService}).
 *
 * <p>Thread-safe ({@link Recovery} is).
 */
final class RecoveryGate {
    private final Recovery recovery;

    RecoveryGate(Recovery recovery) {
        this.recovery = recovery;
    }

    /** @throws TiffinException {@code UNAVAILABLE_IN_CURRENT_STATUS} for an upsert while the recovery runs */
    void checkPutStart(PutOptions options) {
        if (options.upsert() && recovery.active()) {
            throw new TiffinException(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, "upsert: this master took over moments"
                    + " ago and still recovers objects from its nodes (the object it would replace may come back);"
                    + " retry in a moment");
        }
    }

    /**
     * @throws TiffinException {@code UNAVAILABLE_IN_CURRENT_STATUS} when the PutEnd of {@code key} found no put
     *     ({@code ended}) while the recovery runs
     */
    void checkPutEnd(String key, ErrorCode ended) {
        if (ended == ErrorCode.OBJECT_NOT_FOUND && recovery.active()) {
            throw new TiffinException(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, "PutEnd of " + key + ": this master"
                    + " took over moments ago and still recovers objects from its nodes, perhaps this put's; retry in"
                    + " a moment");
        }
    }

    /**
     * As {@link #checkPutEnd} for a batch: the whole call fails when one key found no put (the keys it ended answer
     * OK again when their writer repeats it).
     */
    void checkBatchPutEnd(List<String> keys, List<ErrorCode> ended) {
        int missing = ended.indexOf(ErrorCode.OBJECT_NOT_FOUND);
        if (missing >= 0) {
            checkPutEnd(keys.get(missing), ended.get(missing));
        }
    }
}
