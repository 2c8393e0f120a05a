package io.tiffin.core.gateway;

import io.netty.handler.codec.redis.RedisMessage;
import io.tiffin.core.transport.TiffinVersion;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;

/**
 * The connection commands: PING, ECHO, HELLO, AUTH, SELECT, QUIT, RESET and CLIENT SETNAME, GETNAME,
 * SETINFO, ID, HELP, with Redis 7's replies and errors. The password is Tiffin's credential
 * ({@code transport.auth-token}) for the user {@code default}; without one, any password of
 * {@code default} is accepted, as by Redis's passwordless default user.
 *
 * <p>Thread-safe (stateless; the session it changes belongs to the calling connection).
 */
final class ConnectionCommands {
    /** The Redis version whose protocol and replies the gateway follows (HELLO, INFO). */
    static final String REDIS_VERSION = "7.0.15";

    private final GatewayContext gw;
    ConnectionCommands(GatewayContext gw) {
        this.gw = gw;
    }

    RedisMessage ping(CommandSpec.Call call) {
        RespCommand c = call.command();
        if (c.argc() > 2) {
            throw RespError.wrongArity("ping");
        }
        return c.argc() == 1 ? Replies.PONG : Replies.bulk(c.arg(1).retainedDuplicate());
    }

    RedisMessage echo(CommandSpec.Call call) {
        return Replies.bulk(call.command().arg(1).retainedDuplicate());
    }

    RedisMessage select(CommandSpec.Call call) {
        long db = Numbers.parseLong(call.command().text(1));
        if (db != 0) {
            throw RespError.err("DB index is out of range");
        }
        return Replies.OK;
    }

    RedisMessage quit(CommandSpec.Call call) {
        call.session().closeAfterReply();
        return Replies.OK;
    }

    RedisMessage reset(CommandSpec.Call call) {
        call.session().reset();
        return Replies.simple("RESET");
    }

    RedisMessage auth(CommandSpec.Call call) {
        RespCommand c = call.command();
        if (c.argc() > 3) {
            throw RespError.syntax();
        }
        if (c.argc() == 2 && !gw.settings.requiresPassword()) {
            throw RespError.err("AUTH <password> called without any password configured for the default user."
                    + " Are you sure your configuration is correct?");
        }
        String user = c.argc() == 3 ? c.text(1) : "default";
        authenticate(call.session(), user, c.bytes(c.argc() - 1));
        return Replies.OK;
    }

    private void authenticate(Session session, String user, byte[] given) {
        List<String> passwords = gw.settings.passwords(); // the tokens of the moment: they may rotate
        boolean match = passwords.isEmpty();
        for (String p : passwords) { // every one compared, in constant time each
            match |= MessageDigest.isEqual(p.getBytes(StandardCharsets.UTF_8), given);
        }
        boolean ok = user.equals("default") && match;
        if (!ok) {
            throw RespError.wrongPass();
        }
        session.authenticated(true);
    }

    RedisMessage hello(CommandSpec.Call call) {
        RespCommand c = call.command();
        Session s = call.session();
        int next = 1;
        int version = 0;
        if (c.argc() >= 2) {
            long v = Numbers.parseLongOr(c.text(next++), "Protocol version is not an integer or out of range");
            if (v < 2 || v > 3) {
                throw new RespError("NOPROTO unsupported protocol version");
            }
            version = (int) v;
        }
        String user = null;
        byte[] pass = null;
        String name = null;
        for (int j = next; j < c.argc(); j++) {
            int more = c.argc() - 1 - j;
            if (c.is(j, "AUTH") && more >= 2) {
                user = c.text(j + 1);
                pass = c.bytes(j + 2);
                j += 2;
            } else if (c.is(j, "SETNAME") && more >= 1) {
                name = c.text(j + 1);
                j++;
            } else {
                throw RespError.err("Syntax error in HELLO option '" + c.text(j) + "'");
            }
        }
        if (user != null) {
            authenticate(s, user, pass);
        }
        if (!s.authenticated()) {
            throw new RespError("NOAUTH HELLO must be called with the client already authenticated, otherwise the"
                    + " HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP"
                    + " protocol version at the same time");
        }
        if (name != null) {
            s.name(checkName(name, "Client names"));
        }
        if (version != 0) {
            s.protocol(version);
        }
        List<RedisMessage> m = new ArrayList<>(14);
        m.add(Replies.bulk("server"));
        m.add(Replies.bulk("redis"));
        m.add(Replies.bulk("version"));
        m.add(Replies.bulk(REDIS_VERSION));
        m.add(Replies.bulk("proto"));
        m.add(Replies.integer(s.protocol()));
        m.add(Replies.bulk("id"));
        m.add(Replies.integer(s.id()));
        m.add(Replies.bulk("mode"));
        m.add(Replies.bulk("standalone"));
        m.add(Replies.bulk("role"));
        m.add(Replies.bulk("master"));
        m.add(Replies.bulk("modules"));
        m.add(Replies.array(List.of()));
        return Replies.map(s.protocol(), m);
    }

    // ------------------------------------------------------------------------------------ CLIENT

    RedisMessage clientSetName(CommandSpec.Call call) {
        call.session().name(checkName(call.command().text(2), "Client names"));
        return Replies.OK;
    }

    RedisMessage clientGetName(CommandSpec.Call call) {
        String name = call.session().name();
        return name == null ? Replies.nil(call.protocol()) : Replies.bulk(name);
    }

    RedisMessage clientSetInfo(CommandSpec.Call call) {
        RespCommand c = call.command();
        String value = c.text(3);
        if (c.is(2, "lib-name")) {
            call.session().libName(checkName(value, "lib-name"));
        } else if (c.is(2, "lib-ver")) {
            call.session().libVersion(checkName(value, "lib-ver"));
        } else {
            throw RespError.err("Unrecognized option '" + c.text(2) + "'");
        }
        return Replies.OK;
    }

    RedisMessage clientId(CommandSpec.Call call) {
        return Replies.integer(call.session().id());
    }

    RedisMessage clientHelp(CommandSpec.Call call) {
        return help("CLIENT", List.of("GETNAME", "    Return the name of the current connection.", "ID",
                "    Return the ID of the current connection.", "SETINFO <option> <value>",
                "    Set client meta attr. Options are: LIB-NAME, LIB-VER.", "SETNAME <name>",
                "    Assign the name <name> to the current connection."));
    }

    /** Redis's HELP reply: a title line, the lines, and the HELP line, as simple strings. */
    static RedisMessage help(String command, List<String> lines) {
        List<RedisMessage> out = new ArrayList<>();
        out.add(Replies.simple(command + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"));
        lines.forEach(l -> out.add(Replies.simple(l)));
        out.add(Replies.simple("HELP"));
        out.add(Replies.simple("    Print this help."));
        return Replies.array(out);
    }

    /** A client name or library attribute: printable ASCII without blanks, as Redis requires. */
    private static String checkName(String value, String what) {
        for (int i = 0; i < value.length(); i++) {
            char ch = value.charAt(i);
            if (ch < '!' || ch > '~') {
                throw RespError.err(what + " cannot contain spaces, newlines or special characters.");
            }
        }
        return value;
    }

    /** The Tiffin version, for INFO. */
    static String tiffinVersion() {
        return TiffinVersion.VERSION;
    }
}
