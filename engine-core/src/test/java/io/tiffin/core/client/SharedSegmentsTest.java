package io.tiffin.core.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.core.local.SharedMemoryFiles;
import io.tiffin.core.transport.proto.SegmentInfoReply;
import io.tiffin.core.util.ManualTicker;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * When a client maps a node's shared-memory segment and when it refuses to (and uses the socket): other
 * host, another file at the path, a range outside the file, a node that cannot answer; and that a
 * mapping whose file is gone is unmapped.
 */
class SharedSegmentsTest {
    @TempDir
    Path dir;
    private Path file;
    private long[] id;

    @BeforeEach
    void createFile() throws IOException {
        Assumptions.assumeFalse(SharedMemoryFiles.hostId().isEmpty() || SharedMemoryFiles.pidNamespace().isEmpty(),
                "needs /proc/sys/kernel/random/boot_id and /proc/self/ns/pid (Linux)");
        file = dir.resolve("tiffin-1-seg.seg");
        byte[] bytes = new byte[8192];
        bytes[100] = 42;
        Files.write(file, bytes);
        id = SharedMemoryFiles.identity(file);
    }

    private SegmentInfoReply.Builder info() {
        return SegmentInfoReply.newBuilder().setSegment("seg").setSize(8192).setSharedMemoryPath(file.toString())
                .setHostId(SharedMemoryFiles.hostId()).setDevice(id[0]).setInode(id[1])
                .setPid(ProcessHandle.current().pid()).setPidNamespace(SharedMemoryFiles.pidNamespace());
    }

    @Test
    void mapsTheAdvertisedFileOnceAndReadsAndWritesIt() throws IOException {
        AtomicInteger asked = new AtomicInteger();
        try (SharedSegments shared = new SharedSegments((endpoint, segment) -> {
            asked.incrementAndGet();
            return info().build();
        })) {
            MemorySegment s = shared.slice("node:1", "seg", 100, 10, false);
            assertThat(s).isNotNull();
            assertThat(s.get(ValueLayout.JAVA_BYTE, 0)).isEqualTo((byte) 42);
            s.set(ValueLayout.JAVA_BYTE, 1, (byte) 7);
            assertThat(shared.slice("node:1", "seg", 0, 8192, false)).isNotNull();
            assertThat(shared.slice("node:1", "seg", 8000, 193, false)).as("range beyond the file").isNull();
            assertThat(asked).hasValue(1);
            assertThat(shared.mappedCount()).isEqualTo(1);
        }
        assertThat(Files.readAllBytes(file)[101]).isEqualTo((byte) 7);
    }

    @Test
    void readsTheMountEpochWordTheNodePublishesInTheFile() throws IOException {
        // The segment's first 4096 bytes, then the page holding the epoch (as LocalSegment lays it out).
        Files.write(file, new byte[8192]);
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file,
                java.nio.file.StandardOpenOption.WRITE)) {
            ch.write(java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.nativeOrder()).putLong(0, 5), 4096);
        }
        try (SharedSegments shared = new SharedSegments((endpoint, segment) -> info().setSize(4096).setFileSize(8192)
                .setMountEpochOffset(4096).build())) {
            assertThat(shared.mountEpoch("seg")).as("not mapped yet").isEqualTo(-1);
            assertThat(shared.slice("node:1", "seg", 0, 4096, false)).isNotNull();
            assertThat(shared.slice("node:1", "seg", 4090, 8, false)).as("the epoch page is not segment memory").isNull();
            assertThat(shared.mountEpoch("seg")).isEqualTo(5);
            try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file,
                    java.nio.file.StandardOpenOption.WRITE)) {
                ch.write(java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.nativeOrder()).putLong(0, 6), 4096);
            }
            assertThat(shared.mountEpoch("seg")).as("the node's re-mount is seen through the mapping").isEqualTo(6);
        }
        try (SharedSegments shared = new SharedSegments((endpoint, segment) -> info().build())) {
            assertThat(shared.slice("node:1", "seg", 0, 10, false)).isNotNull();
            assertThat(shared.mountEpoch("seg")).as("a node that publishes no epoch").isEqualTo(-1);
        }
        for (long badOffset : new long[] {100, 8190, 4100}) {
            try (SharedSegments shared = new SharedSegments((endpoint, segment) -> info().setSize(4096).setFileSize(8192)
                    .setMountEpochOffset(badOffset).build())) {
                assertThat(shared.slice("node:1", "seg", 0, 10, false)).as("epoch offset " + badOffset).isNull();
            }
        }
    }

    @Test
    void refusesAnotherHostAnotherFileOrNoSharedMemoryAndRemembersIt() {
        AtomicInteger asked = new AtomicInteger();
        SegmentInfoReply[] answers = {
            info().setHostId("another-boot-id").build(),
            info().setInode(id[1] + 1).build(),
            info().setSize(4096).build(),
            info().clearSharedMemoryPath().build(),
            info().setSharedMemoryPath(dir.resolve("missing.seg").toString()).build(),
            info().setPidNamespace("pid:[1]").build(),
            info().setPid(deadPid()).build(),
        };
        for (SegmentInfoReply answer : answers) {
            asked.set(0);
            try (SharedSegments shared = new SharedSegments((endpoint, segment) -> {
                asked.incrementAndGet();
                return answer;
            })) {
                assertThat(shared.slice("node:1", "seg", 0, 10, false)).as(answer.toString()).isNull();
                assertThat(shared.slice("node:1", "seg", 0, 10, false)).isNull();
                assertThat(asked).as("the refusal is remembered").hasValue(1);
                assertThat(shared.mappedCount()).isZero();
            }
        }
    }

    private static long deadPid() {
        try {
            Process p = new ProcessBuilder("true").start();
            p.waitFor();
            return p.pid();
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void writesStopWhenTheNodeProcessDiesReadsGoOnUntilTheSweep() throws Exception {
        Process node = new ProcessBuilder("sleep", "60").start();
        ManualTicker ticker = new ManualTicker();
        try (SharedSegments shared = new SharedSegments((endpoint, segment) -> info().setPid(node.pid()).build(),
                SharedSegments.RETRY_NANOS, ticker)) {
            assertThat(shared.slice("node:1", "seg", 0, 10, true)).isNotNull();
            node.destroyForcibly().waitFor();
            assertThat(shared.slice("node:1", "seg", 0, 10, true))
                    .as("a node seen alive counts as alive for the liveness window").isNotNull();
            ticker.advanceMillis(TimeUnit.NANOSECONDS.toMillis(SharedSegments.LIVENESS_NANOS) + 1);
            assertThat(shared.slice("node:1", "seg", 0, 10, true))
                    .as("no write into a dead node's memory: the socket fails it instead").isNull();
            assertThat(shared.slice("node:1", "seg", 0, 10, false)).as("its bytes are still readable").isNotNull();
            assertThat(shared.sweep()).isEqualTo(1);
            assertThat(shared.mappedCount()).isZero();
        } finally {
            node.destroyForcibly();
        }
    }

    @Test
    void aNodeThatCannotAnswerIsAskedAgainAfterThePause() {
        AtomicInteger asked = new AtomicInteger();
        ManualTicker ticker = new ManualTicker();
        try (SharedSegments shared = new SharedSegments((endpoint, segment) -> {
            if (asked.incrementAndGet() == 1) {
                throw new IllegalStateException("connection refused");
            }
            return info().build();
        }, TimeUnit.MILLISECONDS.toNanos(200), ticker)) {
            assertThat(shared.slice("node:1", "seg", 0, 10, false)).isNull();
            ticker.advanceMillis(199);
            assertThat(shared.slice("node:1", "seg", 0, 10, false)).as("within the pause: not asked").isNull();
            assertThat(asked).hasValue(1);
            assertThat(shared.pausedCount()).isEqualTo(1);
            shared.sweep();
            assertThat(shared.pausedCount()).as("a pause under way is kept").isEqualTo(1);
            ticker.advanceMillis(1);
            shared.sweep();
            assertThat(shared.pausedCount()).as("an expired pause is forgotten").isZero();
            assertThat(shared.slice("node:1", "seg", 0, 10, false)).isNotNull();
            assertThat(asked).hasValue(2);
        }
    }

    @Test
    void aMappingWhoseFileIsGoneIsUnmapped() throws IOException {
        try (SharedSegments shared = new SharedSegments((endpoint, segment) -> info().build())) {
            MemorySegment s = shared.slice("node:1", "seg", 0, 10, false);
            assertThat(shared.sweep()).isZero();
            Files.delete(file);
            assertThat(shared.sweep()).isEqualTo(1);
            assertThat(shared.mappedCount()).isZero();
            assertThatThrownBy(() -> s.get(ValueLayout.JAVA_BYTE, 0)).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void afterCloseNothingIsMapped() {
        SharedSegments shared = new SharedSegments((endpoint, segment) -> info().build());
        MemorySegment s = shared.slice("node:1", "seg", 0, 10, false);
        shared.close();
        assertThatThrownBy(() -> s.get(ValueLayout.JAVA_BYTE, 0)).isInstanceOf(IllegalStateException.class);
        assertThat(shared.slice("node:1", "seg", 0, 10, false)).isNull();
    }
}
