package io.tiffin.core.master;

import com.google.protobuf.MessageLite;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.Responder;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Replies that may go out only later: a forced removal of an object clients may still read through their
 * location caches is answered once that reuse has ended ({@link CacheHold}), a PutEnd right after a
 * restart once the previous run's cached locations end ({@link MasterService#restartGuardUntilMillis}),
 * and, with failover, a removal once its nodes have forgotten the object. A reply over a connection is
 * scheduled on an executor (no event loop or worker waits); an in-process caller's own thread waits.
 *
 * <p>Thread-safe: the set of replies not yet sent is concurrent, and whoever removes a reply from it
 * (its scheduled task, its completion, or {@link #failAll}) answers it, so each is answered exactly once.
 */
final class HeldReplies {
    /**
     * A reply that may be sent only once the master's clock reaches {@code untilMillis} (0 = at once) and
     * {@code after} (null = nothing) has completed; if {@code after} fails, the call fails with its error.
     */
    record Held(MessageLite reply, long untilMillis, CompletableFuture<?> after, TiffinException failure) {
        Held(MessageLite reply, long untilMillis, CompletableFuture<?> after) {
            this(reply, untilMillis, after, null);
        }

        Held(MessageLite reply, long untilMillis) {
            this(reply, untilMillis, null, null);
        }

        /**
         * A failure answered no earlier than {@code untilMillis} and {@code after}: a removal that finds the key
         * already forced out says "not found" only once the first removal's answer may go out.
         */
        static Held failing(TiffinException failure, long untilMillis, CompletableFuture<?> after) {
            return new Held(null, untilMillis, after, failure);
        }
    }

    /** A held reply waiting for its time. Identity equality: one per request. */
    private record Pending(Opcode op, Responder responder) {
        @Override
        public boolean equals(Object o) {
            return this == o;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(this);
        }
    }

    private final MasterService master;
    private final Set<Pending> pending = ConcurrentHashMap.newKeySet();

    HeldReplies(MasterService master) {
        this.master = master;
    }

    /** Sends {@code held} through {@code responder} once its time has come, scheduled on {@code delays}. */
    void send(Opcode op, Held held, Responder responder, ScheduledExecutorService delays) {
        if (held.after() == null || held.after().isDone()) {
            answer(op, held, responder, delays);
            return;
        }
        Pending waiting = new Pending(op, responder);
        pending.add(waiting);
        held.after().whenComplete((v, err) -> {
            if (!pending.remove(waiting)) {
                return; // answered by failAll
            }
            if (err != null) {
                TiffinException f = failureOf(op, err);
                responder.fail(f.code(), f.getMessage());
            } else {
                answer(op, held, responder, delays);
            }
        });
    }

    /** Waits on the calling thread (an in-process caller) until {@code held} may be returned. */
    MessageLite await(Opcode op, Held held) {
        try {
            if (held.after() != null) {
                held.after().get();
            }
            long wait = held.untilMillis() == 0 ? 0 : master.millisUntil(held.untilMillis());
            if (wait > 0) {
                Thread.sleep(wait);
            }
        } catch (ExecutionException e) {
            throw failureOf(op, e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TiffinException(ErrorCode.INTERNAL_ERROR, tookEffect(op, "the calling thread was interrupted"
                    + " while it waited for locations clients cached before it to expire (or for its nodes to"
                    + " forget it); other clients may read the old object until then"));
        }
        if (held.failure() != null) {
            throw held.failure();
        }
        return held.reply();
    }

    private static void reply(Responder responder, Held held) {
        if (held.failure() != null) {
            responder.fail(held.failure().code(), held.failure().getMessage());
        } else {
            responder.ok(held.reply());
        }
    }

    /**
     * Answers every held reply still waiting with an error saying its operation took effect: for a master
     * that is closing (its scheduler has stopped), before its connections close, so no caller is left with
     * a dropped connection for an operation that happened. Idempotent.
     */
    void failAll() {
        for (Pending p : pending) {
            if (pending.remove(p)) {
                p.responder().fail(ErrorCode.INTERNAL_ERROR, tookEffect(p.op(), "the master closed before the"
                        + " locations clients cached before it expired"));
            }
        }
    }

    /** Answers {@code held} once its time has come (its {@code after} is done). */
    private void answer(Opcode op, Held held, Responder responder, ScheduledExecutorService delays) {
        if (held.after() != null && held.after().isCompletedExceptionally()) {
            TiffinException f = failureOf(op, held.after().exceptionNow());
            responder.fail(f.code(), f.getMessage());
            return;
        }
        long wait = held.untilMillis() == 0 ? 0 : master.millisUntil(held.untilMillis());
        if (wait == 0) {
            reply(responder, held);
            return;
        }
        Pending reply = new Pending(op, responder);
        pending.add(reply);
        try {
            delays.schedule(() -> {
                if (pending.remove(reply)) {
                    reply(responder, held);
                }
            }, wait, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            if (pending.remove(reply)) {
                responder.fail(ErrorCode.INTERNAL_ERROR, tookEffect(op, "the master is shutting down before the"
                        + " locations clients cached before it expire (in " + wait + " ms)"));
            }
        }
    }

    /** The error of a held call that took effect but whose reply cannot wait for the hold: {@code why} it cannot. */
    private static String tookEffect(Opcode op, String why) {
        return op + " took effect, but " + why + "; nothing needs redoing once a master is back";
    }

    /**
     * The failure of a held call whose wait failed: a node's disk refused to keep its effect ({@code FILE_WRITE_FAIL},
     * as the node named it), or a deposed master could not make its effect last.
     */
    private static TiffinException failureOf(Opcode op, Throwable cause) {
        Throwable c = cause;
        while ((c instanceof CompletionException || c instanceof ExecutionException) && c.getCause() != null) {
            c = c.getCause();
        }
        if (c instanceof TiffinException t && t.code() == ErrorCode.FILE_WRITE_FAIL) {
            return new TiffinException(ErrorCode.FILE_WRITE_FAIL, op + " failed: " + t.getMessage(), t);
        }
        if (c instanceof TiffinException t) {
            return new TiffinException(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, op + " may not have taken effect: "
                    + t.getMessage() + "; retry it at the leader");
        }
        return new TiffinException(ErrorCode.INTERNAL_ERROR, op + " failed: " + c);
    }
}
