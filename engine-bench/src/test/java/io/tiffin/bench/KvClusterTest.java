package io.tiffin.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The cluster of {@code bench kv}: real {@code tiffin node} processes (here {@code java -cp ... TiffinCli node},
 * from the distribution {@code bin/tiffin node}), stopped with SIGTERM, their output deleted once they stopped.
 */
class KvClusterTest {
    @Test
    void nodesRunAsTiffinNodeCommandsAndStopWithTheCluster() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        KvCluster cluster = KvCluster.start(2, "64MiB", 1, null, out, null);
        List<Long> pids;
        Path logs;
        try {
            pids = cluster.nodePids();
            logs = cluster.logDir();
            assertThat(pids).hasSize(2);
            for (long pid : pids) {
                assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).contains(true);
                List<String> args = List.of(Files.readString(Path.of("/proc", Long.toString(pid), "cmdline")).split("\0"));
                assertThat(args).contains("node", "--segment-size", "64MiB", "node.io-threads=1", "node.segment-prefault=true");
            }
            assertThat(bytes.toString(StandardCharsets.UTF_8)).containsPattern("Node process \\d+ serves on 127\\.0\\.0\\.1:\\d+");
            assertThat(logs).isDirectory();
            try (var client = io.tiffin.core.client.TiffinClient.connect(cluster.address())) {
                assertThat(client.stats().liveNodes()).isEqualTo(2);
                assertThat(client.stats().segments()).hasSize(2);
            }
        } finally {
            cluster.close();
        }
        for (long pid : pids) {
            Optional<ProcessHandle> h = ProcessHandle.of(pid);
            assertThat(h.isEmpty() || !h.get().isAlive()).as("node %d stopped", pid).isTrue();
        }
        assertThat(Files.exists(logs)).as("the nodes' output is deleted").isFalse();
    }

    @Test
    void aNodeThatCannotStartFailsTheStartWithItsOutput() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        Set<Path> before = benchDirs();
        assertThatThrownBy(() -> KvCluster.start(1, "12 parsecs", 0, null, out, null))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("node-0")
                .hasMessageContaining("node.segment-size");
        assertThat(benchDirs()).as("no output left behind: the exception carries it").isEqualTo(before);
    }

    private static Set<Path> benchDirs() throws IOException {
        try (Stream<Path> s = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            return s.filter(p -> p.getFileName().toString().startsWith("tiffin-bench-kv-")).collect(Collectors.toSet());
        }
    }

    @Test
    void aNodeThatDiesDuringTheRunLeavesItsOutputAndSaysWhere() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        KvCluster cluster = KvCluster.start(1, "64MiB", 0, null, out, null);
        Path logs = cluster.logDir();
        try {
            ProcessHandle node = ProcessHandle.of(cluster.nodePids().getFirst()).orElseThrow();
            node.destroyForcibly(); // kill -9
            node.onExit().get();
        } finally {
            cluster.close();
        }
        try {
            assertThat(bytes.toString(StandardCharsets.UTF_8))
                    .contains("A node process ended before the bench stopped it; its output is in " + logs);
            assertThat(logs.resolve("node-0.log")).isRegularFile();
        } finally {
            BenchSupport.deleteTree(logs);
        }
    }

    @Test
    void theEndpointIsReadFromTheNodesStartUpLine() {
        assertThat(KvCluster.endpointOf("Tiffin node n1 segment n1-seg (2.0 GiB) on 127.0.0.1:4242")).isEqualTo("127.0.0.1:4242");
        assertThat(KvCluster.endpointOf("Tiffin node n1 segment s (64.0 MiB) on 127.0.0.1:9, shared memory /dev/shm/x"))
                .isEqualTo("127.0.0.1:9");
    }
}
