package io.tiffin.core.gateway;

import io.netty.handler.codec.redis.RedisMessage;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.TiffinException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * The key commands: DEL, UNLINK, EXISTS, TYPE, TTL, PTTL, EXPIRE, PEXPIRE, PERSIST, KEYS, SCAN.
 *
 * <p>Every value is a string, so TYPE answers {@code string} or {@code none}. TTL, PTTL, EXPIRE, PEXPIRE and
 * PERSIST read and set the master's expiry deadline of the value (EXPIRE's NX, XX, GT and LT compare with the
 * time to live read just before: two calls, not one atomic step). DEL removes at once, even a value being read.
 *
 * <p>Thread-safe (stateless besides the shared context).
 */
final class KeyCommands {
    private final GatewayContext gw;

    KeyCommands(GatewayContext gw) {
        this.gw = gw;
    }

    /** DEL and UNLINK: how many of the keys held a value (a key given twice counts once, as in Redis). */
    RedisMessage del(CommandSpec.Call call) {
        List<String> keys = new ArrayList<>(new LinkedHashSet<>(call.command().keys(1)));
        List<KeyResult<Void>> results;
        try {
            results = gw.store.remove(keys);
        } catch (TiffinException e) {
            throw RespError.store(e, call.command().name());
        }
        long removed = 0;
        for (KeyResult<Void> r : results) {
            if (r.isOk()) {
                removed++;
            } else if (r.code() != ErrorCode.OBJECT_NOT_FOUND) {
                throw RespError.store(new TiffinException(r.code(), r.code().hint()), call.command().name() + " of '"
                        + r.key() + "' (after " + removed + " keys were removed)");
            }
        }
        return Replies.integer(removed);
    }

    /** How many of the keys hold a value, counting a key given twice twice, as Redis does. */
    RedisMessage exists(CommandSpec.Call call) {
        List<String> keys = call.command().keys(1);
        List<KeyResult<Boolean>> results;
        try {
            results = gw.store.exists(keys);
        } catch (TiffinException e) {
            throw RespError.store(e, "EXISTS");
        }
        long n = 0;
        for (KeyResult<Boolean> r : results) {
            if (!r.isOk()) {
                throw RespError.store(new TiffinException(r.code(), r.code().hint()), "EXISTS of '" + r.key() + "'");
            }
            if (r.value()) {
                n++;
            }
        }
        return Replies.integer(n);
    }

    RedisMessage type(CommandSpec.Call call) {
        return Replies.simple(present(call, "TYPE") ? "string" : "none");
    }

    /** TTL (seconds, rounded as Redis does) and PTTL: -2 for a missing key, -1 for one without a deadline. */
    RedisMessage ttl(CommandSpec.Call call) {
        String key = call.command().key(1);
        long ms;
        try {
            ms = gw.store.ttlMillis(key);
        } catch (TiffinException e) {
            throw RespError.store(e, call.command().name() + " of '" + key + "'");
        }
        return Replies.integer(ms < 0 || call.command().name().equals("PTTL") ? ms : (ms + 500) / 1000);
    }

    RedisMessage persist(CommandSpec.Call call) {
        String key = call.command().key(1);
        try {
            return gw.store.persist(key) ? Replies.ONE : Replies.ZERO;
        } catch (TiffinException e) {
            throw RespError.store(e, "PERSIST of '" + key + "'");
        }
    }

    /** EXPIRE and PEXPIRE: checked as Redis does; 0 for a missing key; refused for an existing one. */
    RedisMessage expire(CommandSpec.Call call) {
        RespCommand c = call.command();
        boolean seconds = c.name().equals("EXPIRE");
        long v = Numbers.parseLong(c.text(2));
        boolean nx = false;
        boolean xx = false;
        boolean gt = false;
        boolean lt = false;
        for (int j = 3; j < c.argc(); j++) {
            if (c.is(j, "NX")) {
                nx = true;
            } else if (c.is(j, "XX")) {
                xx = true;
            } else if (c.is(j, "GT")) {
                gt = true;
            } else if (c.is(j, "LT")) {
                lt = true;
            } else {
                throw RespError.err("Unsupported option " + c.text(j));
            }
        }
        if (nx && (xx || gt || lt)) {
            throw RespError.err("NX and XX, GT or LT options at the same time are not compatible");
        }
        if (gt && lt) {
            throw RespError.err("GT and LT options at the same time are not compatible");
        }
        String name = seconds ? "expire" : "pexpire";
        if (seconds && (v > Long.MAX_VALUE / 1000 || v < Long.MIN_VALUE / 1000)) {
            throw RespError.err("invalid expire time in '" + name + "' command");
        }
        long ms = seconds ? v * 1000 : v;
        long now = gw.ticker.millis();
        if (ms > Long.MAX_VALUE - now) {
            throw RespError.err("invalid expire time in '" + name + "' command");
        }
        String key = c.key(1);
        try {
            if (nx || xx || gt || lt) {
                // checked by the master with the set, as one step (XX GT is GT: GT needs a deadline)
                io.tiffin.core.client.ExpireCondition when = nx ? io.tiffin.core.client.ExpireCondition.IF_NONE
                        : gt ? io.tiffin.core.client.ExpireCondition.IF_LATER
                        : lt && xx ? io.tiffin.core.client.ExpireCondition.IF_SET_AND_SOONER
                        : lt ? io.tiffin.core.client.ExpireCondition.IF_SOONER
                        : io.tiffin.core.client.ExpireCondition.IF_SET;
                return gw.store.expire(key, Math.max(0, ms), when) ? Replies.ONE : Replies.ZERO;
            }
            // a time in the past removes the key, as in Redis
            return gw.store.expire(key, Math.max(0, ms)) ? Replies.ONE : Replies.ZERO;
        } catch (TiffinException e) {
            throw RespError.store(e, c.name() + " of '" + key + "'");
        }
    }

    private boolean present(CommandSpec.Call call, String command) {
        String key = call.command().key(1);
        try {
            return gw.store.size(key).isPresent();
        } catch (TiffinException e) {
            throw RespError.store(e, command + " of '" + key + "'");
        }
    }

    RedisMessage keys(CommandSpec.Call call) {
        Glob glob = Glob.of(call.command().key(1));
        try {
            return Replies.bulkArray(call.session().scanner().keys(glob));
        } catch (TiffinException e) {
            throw RespError.store(e, "KEYS");
        }
    }

    /** {@code SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]}. */
    RedisMessage scan(CommandSpec.Call call) {
        RespCommand c = call.command();
        long cursor = cursor(c.text(1));
        Glob glob = Glob.all();
        long count = 10;
        String type = null;
        for (int j = 2; j < c.argc(); j += 2) {
            if (j + 1 >= c.argc()) {
                throw RespError.syntax();
            }
            if (c.is(j, "COUNT")) {
                count = Numbers.parseLong(c.text(j + 1));
                if (count < 1) {
                    throw RespError.syntax();
                }
            } else if (c.is(j, "MATCH")) {
                glob = Glob.of(c.key(j + 1));
            } else if (c.is(j, "TYPE")) {
                type = c.text(j + 1);
            } else {
                throw RespError.syntax();
            }
        }
        KeyScanner.Page page;
        try {
            page = call.session().scanner().scan(cursor, glob, (int) Math.min(count, Integer.MAX_VALUE / 2));
        } catch (TiffinException e) {
            throw RespError.store(e, "SCAN");
        }
        List<String> keys = type == null || type.equalsIgnoreCase("string") ? page.keys() : List.of();
        return Replies.array(List.of(Replies.bulk(Long.toUnsignedString(page.next())), Replies.bulkArray(keys)));
    }

    /** A cursor as Redis reads it ({@code strtoul}: digits with an optional '-', wrapping; else invalid). */
    private static long cursor(String s) {
        boolean negative = s.startsWith("-");
        String digits = negative ? s.substring(1) : s;
        if (digits.isEmpty() || !digits.chars().allMatch(ch -> ch >= '0' && ch <= '9')) {
            throw RespError.err("invalid cursor");
        }
        long v;
        try {
            v = Long.parseUnsignedLong(digits);
        } catch (NumberFormatException e) {
            throw RespError.err("invalid cursor");
        }
        return negative ? -v : v;
    }
}
