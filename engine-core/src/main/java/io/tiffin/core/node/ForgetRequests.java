package io.tiffin.core.node;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.local.LocalSegment;
import io.tiffin.core.transport.proto.ForgetReply;
import io.tiffin.core.transport.proto.ForgetRequest;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Applies a master's {@code FORGET} to a node: drops the segment's commit records it names, sets the deadlines of
 * records and of SSD copies whose objects' expiry changed, and deletes SSD copies of removed objects (the answer
 * waits until the SSD changes are on disk). A FORGET from a master of an older term than the node follows is
 * refused ({@code INVALID_VERSION}: that master was deposed), and so is one whose parallel lists differ in length
 * ({@code INVALID_PARAMS}), before any of it is applied.
 *
 * <p>Thread-safe (stateless; the ledger and the tier guard themselves).
 */
final class ForgetRequests {
    private ForgetRequests() {
    }

    /**
     * Applies {@code req} to {@code segment} and {@code tier} (null: the node has no SSD tier) for a node that
     * follows master term {@code term}. Never blocks.
     *
     * @return completes when the SSD changes are on disk too (copies deleted, see {@link
     *     NodeStorageTier#deleteDiskCopies}; deadlines in their stamps, see {@link NodeStorageTier#setDiskDeadlines}),
     *     with the node's answer: the copies the backend failed to delete, and those whose stamps it failed to write
     * @throws TiffinException {@code INVALID_VERSION} from a deposed master, {@code INVALID_PARAMS} for lists of
     *     unequal lengths
     */
    static CompletableFuture<ForgetReply> apply(ForgetRequest req, LocalSegment segment, NodeStorageTier tier,
                                                long term) {
        checkParallel(req);
        if (req.getTerm() < term) {
            throw new TiffinException(ErrorCode.INVALID_VERSION, "FORGET from a master of term " + req.getTerm()
                    + "; this node follows term " + term);
        }
        if (req.getSegment().equals(segment.name())) {
            for (int i = 0; i < req.getOffsetsCount(); i++) {
                segment.ledger().forget(req.getOffsets(i), req.getVersions(i));
            }
            for (int i = 0; i < req.getDeadlineOffsetsCount(); i++) {
                segment.ledger().setDeadline(req.getDeadlineOffsets(i), req.getDeadlineVersions(i),
                        req.getDeadlines(i));
            }
        }
        CompletableFuture<ForgetReply> deleted = CompletableFuture.completedFuture(ForgetReply.getDefaultInstance());
        if (tier != null && req.getDiskKeysCount() > 0) {
            deleted = tier.deleteDiskCopies(req.getDiskKeysList(),
                    versionsOrAny(req.getDiskKeyVersionsList(), req.getDiskKeysCount())).thenApply(failed ->
                    ForgetReply.newBuilder().addAllUndeletedDiskKeys(failed.keys())
                            .addAllUndeletedDiskKeyVersions(failed.versions()).build());
        }
        if (tier != null && req.getDiskDeadlineKeysCount() > 0) {
            return deleted.thenCombine(tier.setDiskDeadlines(req.getDiskDeadlineKeysList(),
                    versionsOrAny(req.getDiskDeadlineVersionsList(), req.getDiskDeadlineKeysCount()),
                    req.getDiskDeadlinesList()), (reply, unstamped) -> unstamped.isEmpty() ? reply
                    : reply.toBuilder().addAllUnstampedDiskKeys(unstamped.keys())
                            .addAllUnstampedDiskKeyVersions(unstamped.versions()).build());
        }
        return deleted;
    }

    /**
     * The versions a list of SSD copies comes with, or 0 ("whichever version") for each of the {@code count} copies
     * when it comes without (a master that sends none).
     */
    static List<Long> versionsOrAny(List<Long> versions, int count) {
        return versions.isEmpty() ? Collections.nCopies(count, 0L) : versions;
    }

    /**
     * Refuses a FORGET whose parallel lists differ in length.
     *
     * @throws TiffinException {@code INVALID_PARAMS} naming the lists
     */
    static void checkParallel(ForgetRequest req) {
        String wrong = null;
        if (req.getOffsetsCount() != req.getVersionsCount()) {
            wrong = req.getOffsetsCount() + " offsets and " + req.getVersionsCount() + " versions";
        } else if (req.getDeadlineOffsetsCount() != req.getDeadlineVersionsCount()
                || req.getDeadlineOffsetsCount() != req.getDeadlinesCount()) {
            wrong = req.getDeadlineOffsetsCount() + " deadline offsets, " + req.getDeadlineVersionsCount()
                    + " deadline versions and " + req.getDeadlinesCount() + " deadlines";
        } else if (req.getDiskKeyVersionsCount() != 0 && req.getDiskKeyVersionsCount() != req.getDiskKeysCount()) {
            wrong = req.getDiskKeysCount() + " SSD copies to delete and " + req.getDiskKeyVersionsCount() + " versions";
        } else if (req.getDiskDeadlineKeysCount() != req.getDiskDeadlinesCount()) {
            wrong = req.getDiskDeadlineKeysCount() + " SSD copies and " + req.getDiskDeadlinesCount() + " deadlines";
        } else if (req.getDiskDeadlineVersionsCount() != 0
                && req.getDiskDeadlineVersionsCount() != req.getDiskDeadlineKeysCount()) {
            wrong = req.getDiskDeadlineKeysCount() + " SSD copies and " + req.getDiskDeadlineVersionsCount()
                    + " versions of their deadlines";
        }
        if (wrong != null) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "FORGET names " + wrong
                    + "; nothing of it was applied (send the lists of each kind in equal lengths)");
        }
    }
}
