package io.tiffin.core.gateway;

import io.netty.handler.codec.redis.RedisMessage;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The replies of COMMAND, COMMAND INFO and COMMAND DOCS, in Redis 7's shapes: per command its ten-element
 * info (name, arity, flags, first key, last key, step, ACL categories, tips, key specifications,
 * subcommands) and its documentation map (summary, since, group, subcommands). Key specifications and tips
 * are left empty; clients use the positions.
 *
 * <p>Thread-safe (stateless).
 */
final class CommandDocs {
    private CommandDocs() {
    }

    static RedisMessage infos(int protocol, Collection<CommandSpec> specs) {
        List<RedisMessage> out = new ArrayList<>(specs.size());
        for (CommandSpec s : specs) {
            out.add(info(protocol, s));
        }
        return Replies.array(out);
    }

    static RedisMessage info(int protocol, CommandSpec s) {
        List<RedisMessage> subs = new ArrayList<>();
        for (CommandSpec sub : s.subcommands().values()) {
            subs.add(info(protocol, sub));
        }
        return Replies.array(List.of(Replies.bulk(s.name()), Replies.integer(s.arity()),
                Replies.set(protocol, simples(s.flags())), Replies.integer(s.firstKey()), Replies.integer(s.lastKey()),
                Replies.integer(s.step()), Replies.set(protocol, simples(s.categories())),
                Replies.set(protocol, List.of()), Replies.set(protocol, List.of()), Replies.set(protocol, subs)));
    }

    static RedisMessage docs(int protocol, Collection<CommandSpec> specs) {
        List<RedisMessage> out = new ArrayList<>(specs.size() * 2);
        for (CommandSpec s : specs) {
            out.add(Replies.bulk(s.name()));
            out.add(doc(protocol, s));
        }
        return Replies.map(protocol, out);
    }

    private static RedisMessage doc(int protocol, CommandSpec s) {
        List<RedisMessage> m = new ArrayList<>();
        m.add(Replies.bulk("summary"));
        m.add(Replies.bulk(s.summary()));
        m.add(Replies.bulk("since"));
        m.add(Replies.bulk(s.since()));
        m.add(Replies.bulk("group"));
        m.add(Replies.bulk(s.group()));
        if (!s.subcommands().isEmpty()) {
            m.add(Replies.bulk("subcommands"));
            m.add(docs(protocol, s.subcommands().values()));
        }
        return Replies.map(protocol, m);
    }

    private static List<RedisMessage> simples(List<String> words) {
        List<RedisMessage> out = new ArrayList<>(words.size());
        for (String w : words) {
            out.add(Replies.simple(w));
        }
        return out;
    }
}
