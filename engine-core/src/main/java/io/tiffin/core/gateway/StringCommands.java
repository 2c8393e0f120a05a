package io.tiffin.core.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.redis.FullBulkStringRedisMessage;
import io.netty.handler.codec.redis.RedisMessage;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The string commands: GET, SET, MGET, MSET, STRLEN, GETRANGE, and the batched forms the connection uses for
 * runs of pipelined GETs and SETs ({@link #getRun}, {@link #setRun}).
 *
 * <p>SET replaces the value at once, even one being read (a forced upsert); NX and XX are conditions the master
 * checks with the put, EX, PX, EXAT, PXAT and KEEPTTL its expiry deadline (EXAT and PXAT become a time to live
 * by the gateway's clock). SET ... GET reads the old value and stores the new one only over that version
 * ({@link #setGet}).
 *
 * <p>Thread-safe (stateless besides the shared context).
 */
final class StringCommands {
    /** How many times SET ... GET reads and tries to store before it gives up (other writers keep winning). */
    static final int SET_GET_ATTEMPTS = 8;

    private final GatewayContext gw;

    StringCommands(GatewayContext gw) {
        this.gw = gw;
    }

    RedisMessage get(CommandSpec.Call call) {
        String key = call.command().key(1);
        RedisMessage lent = lentReply(key);
        if (lent != null) {
            return lent;
        }
        ByteBuf value;
        try {
            value = gw.store.get(key, call.buffers());
        } catch (TiffinException e) {
            throw RespError.store(e, "GET of '" + key + "'");
        }
        return reply(call.protocol(), value);
    }

    /** A GET's reply: its value framed in place, or nil. */
    private RedisMessage reply(int protocol, ByteBuf value) {
        if (value == null || !value.isReadable()) {
            return found(protocol, value);
        }
        gw.stats.hits.increment();
        return EncodedReply.bulk(value);
    }

    /** A value as an element of an array reply (MGET), or nil. */
    private RedisMessage found(int protocol, ByteBuf value) {
        if (value == null) {
            gw.stats.misses.increment();
            return Replies.nil(protocol);
        }
        gw.stats.hits.increment();
        return value.isReadable() ? Replies.bulk(value) : releasedEmpty(value);
    }

    private static RedisMessage releasedEmpty(ByteBuf value) {
        value.release();
        return FullBulkStringRedisMessage.EMPTY_INSTANCE;
    }

    /**
     * GETs of several keys, one reply each (pipelined GETs of one read): large values the store has at hand sent
     * from its memory ({@link #lentReply}), the others read in one store call.
     */
    List<RedisMessage> getRun(List<String> keys, GatewayStore.ValueBuffers buffers, int protocol) {
        RedisMessage[] lent = new RedisMessage[keys.size()];
        List<String> rest = new ArrayList<>(keys.size());
        try {
            for (int i = 0; i < keys.size(); i++) {
                lent[i] = lentReply(keys.get(i));
                if (lent[i] == null) {
                    rest.add(keys.get(i));
                }
            }
            List<RedisMessage> read = rest.isEmpty() ? List.of() : readRun(rest, buffers, protocol);
            List<RedisMessage> out = new ArrayList<>(keys.size());
            int at = 0;
            for (RedisMessage m : lent) {
                out.add(m != null ? m : read.get(at++));
            }
            return out;
        } catch (RuntimeException | Error e) {
            for (RedisMessage m : lent) {
                io.netty.util.ReferenceCountUtil.release(m);
            }
            throw e;
        }
    }

    /** GETs of several keys in one store call, one reply each. */
    private List<RedisMessage> readRun(List<String> keys, GatewayStore.ValueBuffers buffers, int protocol) {
        List<KeyResult<ByteBuf>> results;
        try {
            results = gw.store.getAll(keys, buffers);
        } catch (TiffinException e) {
            List<RedisMessage> errors = new ArrayList<>(keys.size());
            for (String key : keys) {
                errors.add(Replies.error(RespError.store(e, "GET of '" + key + "'")));
            }
            return errors;
        }
        List<RedisMessage> out = new ArrayList<>(keys.size());
        for (KeyResult<ByteBuf> r : results) {
            if (r.isOk() || r.code() == ErrorCode.OBJECT_NOT_FOUND) {
                out.add(reply(protocol, r.value()));
            } else {
                out.add(Replies.error(RespError.store(new TiffinException(r.code(), r.code().hint()),
                        "GET of '" + r.key() + "'")));
            }
        }
        return out;
    }

    /**
     * A GET's reply sent from the store's memory ({@link LentValue}) when the store can lend the value
     * ({@link GatewayStore#lendAfterLookUp}) and it is larger than {@link ReadyGets#COPY_MAX}, or null. Only keys whose size
     * hint is that large are asked about: a small value is read the usual way, with the rest of its run. The
     * caller counts the reply in the memory budget and writes it with the lease guard ({@link CommandRunner}).
     */
    private RedisMessage lentReply(String key) {
        if (gw.store.sizeHint(key) <= ReadyGets.COPY_MAX) {
            return null;
        }
        GatewayStore.Lent lent;
        try {
            lent = gw.store.lendAfterLookUp(key);
        } catch (TiffinException e) {
            return null; // the usual read reports it
        }
        if (lent == null) {
            return null;
        }
        if (lent.size() <= ReadyGets.COPY_MAX || lent.validForNanos() < ReadyGets.MIN_LEND_NANOS) {
            lent.close();
            return null;
        }
        gw.stats.hits.increment();
        gw.stats.lentReplies.increment();
        return EncodedReply.bulk(new LentValue(lent, gw.stats.lentOpen));
    }

    RedisMessage set(CommandSpec.Call call) {
        RespCommand c = call.command();
        String key = c.key(1);
        long now = gw.ticker.millis();
        SetOptions options = SetOptions.parse(c, now);
        // EXAT/PXAT in the past: Redis's conditions and reply apply, and the key is gone at once. The master's
        // shortest time is 1 ms and readers' caches may serve that long, so a value stored is removed before the reply
        long ttl = options.expiry() == null ? 0 : Math.max(1, options.expireAtMillis() - now);
        boolean expired = options.expiry() != null && options.expireAtMillis() <= now;
        if (options.get()) {
            return setGet(call, key, options, ttl, expired);
        }
        if (!options.plain() || options.keepTtl()) {
            PutOptions.Condition condition = options.nx() ? PutOptions.Condition.IF_ABSENT
                    : options.xx() ? PutOptions.Condition.IF_PRESENT : PutOptions.Condition.ALWAYS;
            boolean stored;
            try {
                stored = gw.store.put(key, c.arg(2), new GatewayStore.PutTerms(condition, ttl, options.keepTtl()));
            } catch (TiffinException e) {
                throw putFailure(e, key);
            }
            if (stored && expired) {
                removeExpired(key);
            }
            return stored ? Replies.OK : Replies.nil(call.protocol());
        }
        KeyResult<Void> result;
        try {
            result = gw.puts.putAll(List.of(key), List.of(c.arg(2))).getFirst();
        } catch (TiffinException e) {
            throw putFailure(e, key);
        }
        if (!result.isOk()) {
            throw putFailure(new TiffinException(result.code(), result.code().hint()), key);
        }
        return Replies.OK;
    }

    /** A SET whose deadline had passed stored its value: it goes at once, as in Redis. */
    private void removeExpired(String key) {
        try {
            gw.store.remove(List.of(key));
        } catch (TiffinException e) {
            throw RespError.store(e, "SET of '" + key + "' with a deadline already past (removing it)");
        }
    }

    /**
     * SET ... GET: reads the value and its version, then stores the new value only over that version (checked by
     * the master at PutStart and again when the new value replaces it at PutEnd; no other SET of the key can start
     * in between), so the reply is exactly the value replaced. When another client changes the key between the
     * read and the put, both are tried again, up to {@value #SET_GET_ATTEMPTS} times, then the command fails
     * (nothing stored). NX with a value present, or XX with none, answers the value read and stores nothing.
     */
    private RedisMessage setGet(CommandSpec.Call call, String key, SetOptions options, long ttl, boolean expired) {
        ByteBuf value = call.command().arg(2);
        for (int attempt = 0; attempt < SET_GET_ATTEMPTS; attempt++) {
            GatewayStore.Versioned old;
            try {
                old = gw.store.getVersioned(key, call.buffers());
            } catch (TiffinException e) {
                throw RespError.store(e, "SET of '" + key + "' with GET");
            }
            boolean present = old.value() != null;
            if (present ? options.nx() : options.xx()) {
                return reply(call.protocol(), old.value()); // the condition fails: nothing stored
            }
            GatewayStore.PutTerms terms = present
                    ? new GatewayStore.PutTerms(PutOptions.Condition.IF_VERSION, ttl, options.keepTtl(), old.version())
                    : new GatewayStore.PutTerms(PutOptions.Condition.IF_ABSENT, ttl, options.keepTtl());
            boolean stored;
            try {
                stored = gw.store.put(key, value, terms);
            } catch (TiffinException e) {
                io.netty.util.ReferenceCountUtil.release(old.value());
                throw putFailure(e, key);
            }
            if (stored) {
                if (expired) {
                    try {
                        removeExpired(key);
                    } catch (RuntimeException e) {
                        io.netty.util.ReferenceCountUtil.release(old.value());
                        throw e;
                    }
                }
                return reply(call.protocol(), old.value());
            }
            io.netty.util.ReferenceCountUtil.release(old.value()); // changed since the read: read again
        }
        throw RespError.err("CONFLICT SET of '" + key + "' with GET: the key changed between reading it and storing"
                + " the new value " + SET_GET_ATTEMPTS + " times (other clients keep writing it); nothing stored, retry");
    }

    /** SETs of distinct keys in one store call, one reply each (pipelined plain SETs of one read). */
    List<RedisMessage> setRun(List<String> keys, List<ByteBuf> values) {
        List<KeyResult<Void>> results;
        try {
            results = gw.puts.putAll(keys, values);
        } catch (TiffinException e) {
            List<RedisMessage> errors = new ArrayList<>(keys.size());
            for (String key : keys) {
                errors.add(Replies.error(putFailure(e, key)));
            }
            return errors;
        }
        List<RedisMessage> out = new ArrayList<>(keys.size());
        for (KeyResult<Void> r : results) {
            out.add(r.isOk() ? Replies.OK : Replies.error(putFailure(new TiffinException(r.code(), r.code().hint()),
                    r.key())));
        }
        return out;
    }

    static RespError putFailure(TiffinException e, String key) {
        return RespError.store(e, "SET of '" + key + "'");
    }

    RedisMessage mget(CommandSpec.Call call) {
        List<String> keys = call.command().keys(1);
        List<KeyResult<ByteBuf>> results;
        try {
            results = gw.store.getAll(keys, call.buffers());
        } catch (TiffinException e) {
            throw RespError.store(e, "MGET");
        }
        List<RedisMessage> out = new ArrayList<>(keys.size());
        RespError failure = null;
        for (KeyResult<ByteBuf> r : results) {
            if (r.isOk() || r.code() == ErrorCode.OBJECT_NOT_FOUND) {
                out.add(found(call.protocol(), r.value()));
            } else if (failure == null) {
                failure = RespError.store(new TiffinException(r.code(), r.code().hint()), "MGET of '" + r.key() + "'");
            }
        }
        if (failure != null) {
            out.forEach(io.netty.util.ReferenceCountUtil::release);
            throw failure;
        }
        return Replies.array(out);
    }

    RedisMessage mset(CommandSpec.Call call) {
        RespCommand c = call.command();
        if (c.argc() % 2 != 1) {
            throw RespError.wrongArity("mset");
        }
        Map<String, ByteBuf> last = new LinkedHashMap<>();
        for (int i = 1; i < c.argc(); i += 2) {
            String key = c.key(i);
            last.remove(key);
            last.put(key, c.arg(i + 1)); // a key given twice ends with its last value, as in Redis
        }
        List<String> keys = new ArrayList<>(last.keySet());
        List<KeyResult<Void>> results;
        try {
            results = gw.puts.putAll(keys, new ArrayList<>(last.values()));
        } catch (TiffinException e) {
            throw RespError.store(e, "MSET");
        }
        for (KeyResult<Void> r : results) {
            if (!r.isOk()) {
                throw putFailure(new TiffinException(r.code(), r.code().hint()), r.key());
            }
        }
        return Replies.OK;
    }

    RedisMessage strlen(CommandSpec.Call call) {
        String key = call.command().key(1);
        try {
            OptionalLong size = gw.store.size(key);
            return Replies.integer(size.orElse(0));
        } catch (TiffinException e) {
            throw RespError.store(e, "STRLEN of '" + key + "'");
        }
    }

    /**
     * GETRANGE: the value's length first (a listing, without reading the value), then only the range is read
     * ({@link GatewayStore#getRange}). A GETRANGE racing a SET of its key may answer a range of the new value
     * placed by the old one's length.
     */
    RedisMessage getrange(CommandSpec.Call call) {
        RespCommand c = call.command();
        long start = Numbers.parseLong(c.text(2));
        long end = Numbers.parseLong(c.text(3));
        String key = c.key(1);
        try {
            OptionalLong size = gw.store.size(key);
            if (size.isEmpty()) {
                return FullBulkStringRedisMessage.EMPTY_INSTANCE;
            }
            long len = size.getAsLong();
            if (start < 0 && end < 0 && start > end) {
                return FullBulkStringRedisMessage.EMPTY_INSTANCE;
            }
            if (start < 0) {
                start = len + start;
            }
            if (end < 0) {
                end = len + end;
            }
            start = Math.max(0, start);
            end = Math.min(Math.max(0, end), len - 1);
            if (start > end || len == 0) {
                return FullBulkStringRedisMessage.EMPTY_INSTANCE;
            }
            if (end - start + 1 > gw.settings.maxBulkSize()) {
                throw RespError.err("the range of '" + key + "' is " + (end - start + 1) + " bytes, more than"
                        + " gateway.max-bulk-size (" + gw.settings.maxBulkSize() + "); ask for a shorter range");
            }
            ByteBuf range = gw.store.getRange(key, start, (int) (end - start + 1), call.buffers());
            return range == null ? FullBulkStringRedisMessage.EMPTY_INSTANCE : Replies.bulk(range);
        } catch (TiffinException e) {
            throw RespError.store(e, "GETRANGE of '" + key + "'");
        }
    }
}
