package io.tiffin.core.gateway;

import io.netty.handler.codec.redis.RedisMessage;
import io.tiffin.api.TiffinException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The server commands: COMMAND (COUNT, DOCS, INFO, HELP), CONFIG GET (and HELP), INFO, DBSIZE, FLUSHDB,
 * FLUSHALL. CONFIG GET knows the few parameters clients ask about; the persistence ones answer as a Redis
 * without persistence does ({@code save ""}, {@code appendonly no}).
 *
 * <p>Thread-safe (stateless besides the shared context and the command table, set once).
 */
final class ServerCommands {
    private final GatewayContext gw;
    private final InfoReport info;
    private final Supplier<CommandTable> table;

    ServerCommands(GatewayContext gw, Supplier<CommandTable> table) {
        this.gw = gw;
        this.info = new InfoReport(gw);
        this.table = table;
    }

    RedisMessage command(CommandSpec.Call call) {
        return CommandDocs.infos(call.protocol(), table.get().all());
    }

    RedisMessage commandCount(CommandSpec.Call call) {
        return Replies.integer(table.get().all().size());
    }

    RedisMessage commandInfo(CommandSpec.Call call) {
        RespCommand c = call.command();
        if (c.argc() == 2) {
            return CommandDocs.infos(call.protocol(), table.get().all());
        }
        List<RedisMessage> out = new ArrayList<>();
        for (int i = 2; i < c.argc(); i++) {
            CommandSpec spec = table.get().find(c.text(i));
            out.add(spec == null ? Replies.nil(call.protocol()) : CommandDocs.info(call.protocol(), spec));
        }
        return Replies.array(out);
    }

    RedisMessage commandDocs(CommandSpec.Call call) {
        RespCommand c = call.command();
        List<CommandSpec> specs = new ArrayList<>();
        if (c.argc() == 2) {
            specs.addAll(table.get().all());
        }
        for (int i = 2; i < c.argc(); i++) {
            CommandSpec spec = table.get().find(c.text(i));
            if (spec != null) {
                specs.add(spec);
            }
        }
        return CommandDocs.docs(call.protocol(), specs);
    }

    RedisMessage commandHelp(CommandSpec.Call call) {
        return ConnectionCommands.help("COMMAND", List.of("(no subcommand)",
                "    Return details about all Redis commands.", "COUNT", "    Return the total number of commands.",
                "DOCS [<command-name> ...]", "    Return documentation details about multiple commands.",
                "INFO [<command-name> ...]", "    Return details about multiple commands."));
    }

    /** The parameters CONFIG GET knows, with their values. */
    private Map<String, String> parameters() {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("save", "");
        p.put("appendonly", "no");
        p.put("databases", "1");
        p.put("maxclients", Integer.toString(gw.settings.maxConnections()));
        p.put("timeout", Long.toString(gw.settings.idleTimeout().toSeconds()));
        p.put("port", Integer.toString(gw.port()));
        p.put("bind", gw.settings.host());
        p.put("proto-max-bulk-len", Integer.toString(gw.settings.maxBulkSize()));
        return p;
    }

    RedisMessage configGet(CommandSpec.Call call) {
        RespCommand c = call.command();
        Map<String, String> matched = new LinkedHashMap<>();
        Map<String, String> known = parameters();
        for (int i = 2; i < c.argc(); i++) {
            Glob glob = Glob.ignoringCase(c.text(i));
            known.forEach((k, v) -> {
                if (glob.matches(k)) {
                    matched.put(k, v);
                }
            });
        }
        List<RedisMessage> out = new ArrayList<>();
        matched.forEach((k, v) -> {
            out.add(Replies.bulk(k));
            out.add(Replies.bulk(v));
        });
        return Replies.map(call.protocol(), out);
    }

    RedisMessage configHelp(CommandSpec.Call call) {
        return ConnectionCommands.help("CONFIG", List.of("GET <pattern>",
                "    Return parameters matching the glob-like <pattern> and their values."));
    }

    RedisMessage info(CommandSpec.Call call) {
        RespCommand c = call.command();
        List<String> args = new ArrayList<>();
        for (int i = 1; i < c.argc(); i++) {
            args.add(c.text(i));
        }
        try {
            return Replies.text(call.protocol(), info.render(InfoReport.sections(args)));
        } catch (TiffinException e) {
            throw RespError.store(e, "INFO");
        }
    }

    RedisMessage dbsize(CommandSpec.Call call) {
        try {
            return Replies.integer(gw.store.stats().keys());
        } catch (TiffinException e) {
            throw RespError.store(e, "DBSIZE");
        }
    }

    /** FLUSHDB and FLUSHALL [ASYNC|SYNC]: removes every value (the one database is all there is). */
    RedisMessage flush(CommandSpec.Call call) {
        RespCommand c = call.command();
        if (c.argc() > 2 || (c.argc() == 2 && !c.is(1, "ASYNC") && !c.is(1, "SYNC"))) {
            throw RespError.syntax();
        }
        try {
            gw.store.removeAll();
        } catch (TiffinException e) {
            throw RespError.store(e, c.name());
        }
        return Replies.OK;
    }
}
