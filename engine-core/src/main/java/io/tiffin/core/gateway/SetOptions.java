package io.tiffin.core.gateway;

/**
 * The options of {@code SET key value [NX|XX] [GET] [EX s|PX ms|EXAT ts|PXAT ts|KEEPTTL]}, read and
 * checked exactly as Redis 7.0 does: the same combinations are a syntax error, the same times are an
 * invalid expire time, in the same order of checks. Whether the store can honour them is the caller's
 * business.
 *
 * <p>Thread-safe (immutable).
 *
 * @param nx only if the key does not exist
 * @param xx only if it exists
 * @param get reply with the old value
 * @param keepTtl keep the key's time to live
 * @param expiry the option giving a time to live (EX, PX, EXAT, PXAT), or null
 * @param expireAtMillis the deadline it gives, Unix milliseconds
 */
record SetOptions(boolean nx, boolean xx, boolean get, boolean keepTtl, String expiry, long expireAtMillis) {

    /** Options from argument 3 on; {@code nowMillis} resolves EX and PX. */
    static SetOptions parse(RespCommand c, long nowMillis) {
        boolean nx = false;
        boolean xx = false;
        boolean get = false;
        boolean keepTtl = false;
        String expiry = null;
        String expiryArg = null;
        for (int j = 3; j < c.argc(); j++) {
            boolean hasNext = j < c.argc() - 1;
            if (c.is(j, "NX") && !xx) {
                nx = true;
            } else if (c.is(j, "XX") && !nx) {
                xx = true;
            } else if (c.is(j, "GET")) {
                get = true;
            } else if (c.is(j, "KEEPTTL") && expiry == null) {
                keepTtl = true;
            } else if (isExpiry(c, j) && !keepTtl && (expiry == null || c.is(j, expiry)) && hasNext) {
                expiry = c.text(j).toUpperCase(java.util.Locale.ROOT);
                expiryArg = c.text(++j);
            } else {
                throw RespError.syntax();
            }
        }
        long at = expiry == null ? 0 : deadline(expiry, expiryArg, nowMillis);
        return new SetOptions(nx, xx, get, keepTtl, expiry, at);
    }

    private static boolean isExpiry(RespCommand c, int j) {
        return c.is(j, "EX") || c.is(j, "PX") || c.is(j, "EXAT") || c.is(j, "PXAT");
    }

    /** Redis's {@code getExpireMillisecondsOrReply}. */
    private static long deadline(String option, String arg, long nowMillis) {
        long v = Numbers.parseLong(arg);
        boolean seconds = option.equals("EX") || option.equals("EXAT");
        if (v <= 0 || (seconds && v > Long.MAX_VALUE / 1000)) {
            throw invalidExpire();
        }
        long ms = seconds ? v * 1000 : v;
        if (option.equals("EX") || option.equals("PX")) {
            ms += nowMillis;
        }
        if (ms <= 0) {
            throw invalidExpire();
        }
        return ms;
    }

    static RespError invalidExpire() {
        return RespError.err("invalid expire time in 'set' command");
    }

    /** Whether only plain SET semantics are asked for (KEEPTTL keeps nothing: no key has a time to live). */
    boolean plain() {
        return !nx && !xx && !get && expiry == null;
    }
}
