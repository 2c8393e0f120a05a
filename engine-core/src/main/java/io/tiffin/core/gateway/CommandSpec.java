package io.tiffin.core.gateway;

import io.netty.handler.codec.redis.RedisMessage;
import java.util.List;
import java.util.Map;

/**
 * One command the gateway serves: how it is called (arity, key positions, flags, as COMMAND INFO reports
 * them), what COMMAND DOCS says about it, and what runs it.
 *
 * <p>Thread-safe (immutable).
 *
 * @param name the name in lower case, {@code container|sub} for a subcommand
 * @param arity Redis's arity: n = exactly n arguments (the name included), -n = at least n
 * @param flags COMMAND INFO flags, e.g. {@code readonly}, {@code fast}
 * @param firstKey position of the first key argument (0 = none)
 * @param lastKey position of the last key argument (-1 = the last argument)
 * @param step between key arguments
 * @param categories ACL categories, e.g. {@code @read}
 * @param group COMMAND DOCS group, e.g. {@code string}
 * @param summary one line for COMMAND DOCS
 * @param since the Redis version that added the command
 * @param noAuth whether it runs before AUTH when a password is required
 * @param handler what runs it
 * @param subcommands by upper-case name (CLIENT, COMMAND, CONFIG); empty for plain commands
 */
record CommandSpec(String name, int arity, List<String> flags, int firstKey, int lastKey, int step,
                   List<String> categories, String group, String summary, String since, boolean noAuth,
                   Handler handler, Map<String, CommandSpec> subcommands) {

    /**
     * Runs one command and returns its reply; throws {@link RespError} for an error reply and
     * {@link io.tiffin.api.TiffinException} for a failure of the store.
     *
     * <p>Implementations must be thread-safe: connections run commands on their own threads.
     */
    @FunctionalInterface
    interface Handler {
        RedisMessage run(Call call);
    }

    /**
     * One run of a command.
     *
     * <p>Not thread-safe: used by the connection's thread while the command runs.
     *
     * @param session the connection's state
     * @param command the command, still owned by the caller
     * @param buffers where values read from the store go (counted in the gateway's memory until their reply
     *     is written)
     */
    record Call(Session session, RespCommand command, GatewayStore.ValueBuffers buffers) {
        int protocol() {
            return session.protocol();
        }
    }

    /** Whether {@code argc} arguments (the name included) fit the arity. */
    boolean arityAccepts(int argc) {
        return arity >= 0 ? argc == arity : argc >= -arity;
    }
}
