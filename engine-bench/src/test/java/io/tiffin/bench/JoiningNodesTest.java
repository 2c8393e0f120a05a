package io.tiffin.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The joining nodes' process of {@code bench scale}: its priority, and clear errors when its nodes cannot join or
 * are told to leave before joining (the happy path runs in {@link BenchScaleCommandTest}).
 */
class JoiningNodesTest {
    @TempDir
    Path dir;

    @Test
    void runsAtTheAskedNicenessAndReportsAJoinThatFailsAndALeaveWithoutJoin() throws Exception {
        int deadPort;
        try (ServerSocket s = new ServerSocket(0)) {
            deadPort = s.getLocalPort(); // nothing listens there once closed
        }
        Path log = dir.resolve("joining.log");
        try (JoiningNodes nodes = JoiningNodes.start("127.0.0.1", deadPort, Duration.ofSeconds(1), 1L << 30, 7, log)) {
            String stat = Files.readString(Path.of("/proc", Long.toString(nodes.pid()), "stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            assertThat(fields[16]).as("niceness, field 19 of /proc/PID/stat").isEqualTo("7");
            assertThatThrownBy(() -> nodes.join("test", 2)).isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("the joining nodes answered 'join test 2' with: failed ");
            assertThatThrownBy(nodes::leave).isInstanceOf(IllegalStateException.class)
                    .hasMessage("the joining nodes answered 'leave' with: failed no nodes joined");
            nodes.close();
            assertThat(ProcessHandle.of(nodes.pid()).map(ProcessHandle::isAlive).orElse(false)).isFalse();
        }
    }
}
