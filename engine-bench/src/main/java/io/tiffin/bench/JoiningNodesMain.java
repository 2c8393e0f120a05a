package io.tiffin.bench;

import io.netty.channel.EventLoopGroup;
import io.tiffin.core.transport.EventLoops;
import io.tiffin.core.transport.TransportSettings;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The process {@link JoiningNodes} starts: fake nodes that join a master and leave it on command, in a JVM of their
 * own, apart from the bench JVM whose Gets are timed (they stand for other machines). Arguments: {@code host port
 * pingIntervalMillis segmentCapacity}. It prints {@value #READY} once started, then reads one command a line from
 * standard input and answers each with one line on standard output that begins with {@value #REPLY}:
 * <ul>
 *   <li>{@code join PREFIX N}: N fake nodes ({@code PREFIX-node<i>}) connect and mount a segment each, and ping;
 *       answered {@code joined JIT_MS} (this JVM's compile time during the command), or {@code failed MESSAGE};</li>
 *   <li>{@code leave}: the nodes of the last join unmount their segments and disconnect; {@code left JIT_MS};</li>
 *   <li>{@code exit} (or the end of the input): leaves without unmounting and exits.</li>
 * </ul>
 * Anything else it writes (logging) goes to standard error.
 *
 * <p>Not thread-safe: one thread reads the commands.
 */
final class JoiningNodesMain {
    static final String READY = "tiffin-joining-nodes ready";
    static final String REPLY = "tiffin-joining-nodes: ";

    private JoiningNodesMain() {
    }

    public static void main(String[] args) throws Exception {
        PrintStream replies = System.out;
        System.setOut(System.err); // logging that writes to standard output must not mix with the replies
        if (args.length != 4) {
            replies.println(REPLY + "failed usage: host port pingIntervalMillis segmentCapacity");
            System.exit(2);
        }
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        Duration pingInterval = Duration.ofMillis(Long.parseLong(args[2]));
        long segmentCapacity = Long.parseLong(args[3]);
        EventLoopGroup group = EventLoops.newGroup("joining-nodes", 1, true);
        FakeNodes joined = null;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            replies.println(READY);
            replies.flush();
            String line;
            while ((line = in.readLine()) != null && !line.equals("exit")) {
                String[] words = line.trim().split(" ");
                long jit = JitClock.self();
                try {
                    switch (words[0]) {
                        case "join" -> {
                            if (joined != null) {
                                throw new IllegalStateException("the nodes of the last join have not left");
                            }
                            int n = Integer.parseInt(words[2]);
                            joined = new FakeNodes(host, port, words[1], n, n, segmentCapacity, pingInterval,
                                    TransportSettings.defaults(), group);
                            replies.println(REPLY + "joined " + (JitClock.self() - jit));
                        }
                        case "leave" -> {
                            if (joined == null) {
                                throw new IllegalStateException("no nodes joined");
                            }
                            FakeNodes leaving = joined;
                            joined = null;
                            leaving.close(true);
                            replies.println(REPLY + "left " + (JitClock.self() - jit));
                        }
                        default -> throw new IllegalArgumentException("unknown command: " + line);
                    }
                } catch (RuntimeException e) {
                    replies.println(REPLY + "failed " + String.valueOf(e.getMessage()).replace('\n', ' '));
                }
                replies.flush();
            }
        } finally {
            if (joined != null) {
                joined.close(false);
            }
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
    }
}
