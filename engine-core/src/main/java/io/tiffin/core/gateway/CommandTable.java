package io.tiffin.core.gateway;

import io.netty.handler.codec.redis.RedisMessage;
import io.tiffin.api.TiffinException;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Every command the gateway serves and how one is run: looked up by name, its arity checked, refused
 * before AUTH when a password is required, run, and its failure turned into Redis's error reply, in
 * Redis's order of checks (an unknown command or wrong arity is reported before NOAUTH).
 *
 * <p>Thread-safe (immutable after construction).
 */
final class CommandTable {
    private static final Logger LOG = LogManager.getLogger(CommandTable.class);

    private final Map<String, CommandSpec> byName = new LinkedHashMap<>();
    private final StringCommands strings;
    private final GatewayContext gw;

    CommandTable(GatewayContext gw) {
        this.gw = gw;
        ConnectionCommands conn = new ConnectionCommands(gw);
        strings = new StringCommands(gw);
        KeyCommands keys = new KeyCommands(gw);
        ServerCommands server = new ServerCommands(gw, () -> this);

        List<String> connFlags = List.of("noscript", "loading", "stale", "fast", "no_auth", "allow_busy");
        List<String> connCats = List.of("@fast", "@connection");
        add(plain("ping", -1, List.of("fast"), connCats, "connection", "Ping the server", "1.0.0", conn::ping));
        add(plain("echo", 2, List.of("fast"), connCats, "connection", "Echo the given string", "1.0.0", conn::echo));
        add(noAuth("hello", -1, connFlags, connCats, "Handshake with Redis", "6.0.0", conn::hello));
        add(noAuth("auth", -2, connFlags, connCats, "Authenticate to the server", "1.0.0", conn::auth));
        add(plain("select", 2, List.of("loading", "stale", "fast"), connCats, "connection",
                "Change the selected database for the current connection", "1.0.0", conn::select));
        add(noAuth("quit", -1, connFlags, connCats, "Close the connection", "1.0.0", conn::quit));
        add(noAuth("reset", 1, connFlags, connCats, "Reset the connection", "6.2.0", conn::reset));
        add(container("client", "connection", "A container for client connection commands", "2.4.0", List.of(
                sub("client|setname", 3, "Set the current connection name", "2.6.9", conn::clientSetName),
                sub("client|getname", 2, "Get the current connection name", "2.6.9", conn::clientGetName),
                sub("client|setinfo", 4, "Set client or connection specific info", "7.2.0", conn::clientSetInfo),
                sub("client|id", 2, "Returns the client ID for the current connection", "5.0.0", conn::clientId),
                sub("client|help", 2, "Show helpful text about the different subcommands", "5.0.0",
                        conn::clientHelp))));

        add(keyed("get", 2, List.of("readonly", "fast"), 1, 1, 1, "@read", "@string", "@fast", "string",
                "Get the value of a key", "1.0.0", strings::get));
        add(keyed("set", -3, List.of("write", "denyoom"), 1, 1, 1, "@write", "@string", "@slow", "string",
                "Set the string value of a key", "1.0.0", strings::set));
        add(keyed("mget", -2, List.of("readonly", "fast"), 1, -1, 1, "@read", "@string", "@fast", "string",
                "Get the values of all the given keys", "1.0.0", strings::mget));
        add(keyed("mset", -3, List.of("write", "denyoom"), 1, -1, 2, "@write", "@string", "@slow", "string",
                "Set multiple keys to multiple values", "1.0.1", strings::mset));
        add(keyed("strlen", 2, List.of("readonly", "fast"), 1, 1, 1, "@read", "@string", "@fast", "string",
                "Get the length of the value stored in a key", "2.2.0", strings::strlen));
        add(keyed("getrange", 4, List.of("readonly"), 1, 1, 1, "@read", "@string", "@slow", "string",
                "Get a substring of the string stored at a key", "2.4.0", strings::getrange));

        add(keyed("del", -2, List.of("write"), 1, -1, 1, "@keyspace", "@write", "@slow", "generic",
                "Delete a key", "1.0.0", keys::del));
        add(keyed("unlink", -2, List.of("write", "fast"), 1, -1, 1, "@keyspace", "@write", "@fast", "generic",
                "Delete a key asynchronously", "4.0.0", keys::del));
        add(keyed("exists", -2, List.of("readonly", "fast"), 1, -1, 1, "@keyspace", "@read", "@fast", "generic",
                "Determine if a key exists", "1.0.0", keys::exists));
        add(keyed("type", 2, List.of("readonly", "fast"), 1, 1, 1, "@keyspace", "@read", "@fast", "generic",
                "Determine the type stored at key", "1.0.0", keys::type));
        add(keyed("ttl", 2, List.of("readonly", "fast"), 1, 1, 1, "@keyspace", "@read", "@fast", "generic",
                "Get the time to live for a key in seconds", "1.0.0", keys::ttl));
        add(keyed("pttl", 2, List.of("readonly", "fast"), 1, 1, 1, "@keyspace", "@read", "@fast", "generic",
                "Get the time to live for a key in milliseconds", "2.6.0", keys::ttl));
        add(keyed("expire", -3, List.of("write", "fast"), 1, 1, 1, "@keyspace", "@write", "@fast", "generic",
                "Set a key's time to live in seconds", "1.0.0", keys::expire));
        add(keyed("pexpire", -3, List.of("write", "fast"), 1, 1, 1, "@keyspace", "@write", "@fast", "generic",
                "Set a key's time to live in milliseconds", "2.6.0", keys::expire));
        add(keyed("persist", 2, List.of("write", "fast"), 1, 1, 1, "@keyspace", "@write", "@fast", "generic",
                "Remove the expiration from a key", "2.2.0", keys::persist));
        add(keyed("keys", 2, List.of("readonly"), 0, 0, 0, "@keyspace", "@read", "@slow", "generic",
                "Find all keys matching the given pattern", "1.0.0", keys::keys));
        add(keyed("scan", -2, List.of("readonly"), 0, 0, 0, "@keyspace", "@read", "@slow", "generic",
                "Incrementally iterate the keys space", "2.8.0", keys::scan));

        add(keyed("dbsize", 1, List.of("readonly", "fast"), 0, 0, 0, "@keyspace", "@read", "@fast", "server",
                "Return the number of keys in the selected database", "1.0.0", server::dbsize));
        add(keyed("flushdb", -1, List.of("write"), 0, 0, 0, "@keyspace", "@write", "@slow", "server",
                "Remove all keys from the current database", "1.0.0", server::flush));
        add(keyed("flushall", -1, List.of("write"), 0, 0, 0, "@keyspace", "@write", "@slow", "server",
                "Remove all keys from all databases", "1.0.0", server::flush));
        add(plain("info", -1, List.of("loading", "stale"), List.of("@slow", "@dangerous"), "server",
                "Get information and statistics about the server", "1.0.0", server::info));
        CommandSpec command = container("command", "server", "Get array of Redis command details", "2.8.13", List.of(
                sub("command|count", 2, "Get total number of Redis commands", "2.8.13", server::commandCount),
                sub("command|docs", -2, "Get array of specific Redis command documentation", "7.0.0",
                        server::commandDocs),
                sub("command|info", -2, "Get array of specific Redis command details", "2.8.13", server::commandInfo),
                sub("command|help", 2, "Show helpful text about the different subcommands", "5.0.0",
                        server::commandHelp)));
        CommandSpec.Handler subcommands = command.handler();
        add(new CommandSpec("command", -1, command.flags(), 0, 0, 0, command.categories(), command.group(),
                command.summary(), command.since(), false,
                call -> call.command().argc() == 1 ? server.command(call) : subcommands.run(call), command.subcommands()));
        add(container("config", "server", "A container for server configuration commands", "2.0.0", List.of(
                sub("config|get", -3, "Get the values of configuration parameters", "2.0.0", server::configGet),
                sub("config|help", 2, "Show helpful text about the different subcommands", "5.0.0",
                        server::configHelp))));
    }

    /** The commands, in the order they were defined. */
    Collection<CommandSpec> all() {
        return Collections.unmodifiableCollection(byName.values());
    }

    /** The command called {@code name} (any case), or null. */
    CommandSpec find(String name) {
        return byName.get(name.toUpperCase(Locale.ROOT));
    }

    /** The string commands, for the batched runs of pipelined GETs and SETs. */
    StringCommands strings() {
        return strings;
    }

    /** Runs one command and returns its reply: the command's, or an error reply (never throws for a client's mistake). */
    RedisMessage execute(CommandSpec.Call call) {
        RespCommand c = call.command();
        gw.stats.commandsProcessed.increment();
        try {
            CommandSpec spec = byName.get(c.name());
            if (spec == null) {
                throw RespError.unknownCommand(c);
            }
            if (!spec.arityAccepts(c.argc())) {
                throw RespError.wrongArity(spec.name());
            }
            if (!spec.noAuth() && !call.session().authenticated()) {
                throw RespError.noAuth();
            }
            return spec.handler().run(call);
        } catch (RespError e) {
            gw.stats.errorReplies.increment();
            return Replies.error(e);
        } catch (TiffinException e) {
            gw.stats.errorReplies.increment();
            return Replies.error(RespError.store(e, c.name()));
        } catch (RuntimeException e) {
            gw.stats.errorReplies.increment();
            LOG.warn("RESP command {} failed unexpectedly", c.name(), e);
            return Replies.error(RespError.err("INTERNAL_ERROR " + c.name() + " failed: " + e
                    + "; check the gateway's log"));
        }
    }

    private void add(CommandSpec spec) {
        byName.put(spec.name().toUpperCase(Locale.ROOT), spec);
    }

    private static CommandSpec plain(String name, int arity, List<String> flags, List<String> cats, String group,
                                     String summary, String since, CommandSpec.Handler handler) {
        return new CommandSpec(name, arity, flags, 0, 0, 0, cats, group, summary, since, false, handler, Map.of());
    }

    private static CommandSpec noAuth(String name, int arity, List<String> flags, List<String> cats, String summary,
                                      String since, CommandSpec.Handler handler) {
        return new CommandSpec(name, arity, flags, 0, 0, 0, cats, "connection", summary, since, true, handler,
                Map.of());
    }

    private static CommandSpec keyed(String name, int arity, List<String> flags, int first, int last, int step,
                                     String cat1, String cat2, String cat3, String group, String summary, String since,
                                     CommandSpec.Handler handler) {
        return new CommandSpec(name, arity, flags, first, last, step, List.of(cat1, cat2, cat3), group, summary, since,
                false, handler, Map.of());
    }

    private static CommandSpec sub(String name, int arity, String summary, String since, CommandSpec.Handler handler) {
        return new CommandSpec(name, arity, List.of("loading", "stale"), 0, 0, 0, List.of("@slow"), "connection",
                summary, since, false, handler, Map.of());
    }

    /** A command whose first argument names a subcommand (CLIENT, COMMAND, CONFIG). */
    private static CommandSpec container(String name, String group, String summary, String since,
                                         List<CommandSpec> subs) {
        Map<String, CommandSpec> byName = new LinkedHashMap<>();
        for (CommandSpec s : subs) {
            byName.put(s.name().substring(name.length() + 1).toUpperCase(Locale.ROOT), s);
        }
        String upper = name.toUpperCase(Locale.ROOT);
        CommandSpec.Handler dispatch = call -> {
            RespCommand c = call.command();
            CommandSpec sub = byName.get(c.text(1).toUpperCase(Locale.ROOT));
            if (sub == null) {
                throw RespError.unknownSubcommand(c.arg(1), upper);
            }
            if (!sub.arityAccepts(c.argc())) {
                throw RespError.wrongArity(sub.name());
            }
            return sub.handler().run(call);
        };
        return new CommandSpec(name, -2, List.of(), 0, 0, 0, List.of("@slow"), group, summary, since, false,
                dispatch, Collections.unmodifiableMap(byName));
    }
}
