package io.tiffin.core.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** SIGINT and SIGTERM stop server commands in order, with exit code 0 ({@link ServerCommand.StopSignals}). */
class ServerCommandSignalTest {
    private final List<String> exits = new CopyOnWriteArrayList<>();
    private final ServerCommand.StopSignals signals = new ServerCommand.StopSignals(false,
            code -> exits.add("exit " + code), (signal, code) -> exits.add("halt SIG" + signal + " " + code));

    @Test
    void theFirstSignalAsksEveryRunningCommandToStop() {
        AtomicInteger a = new AtomicInteger();
        AtomicInteger b = new AtomicInteger();
        signals.register(a::incrementAndGet);
        signals.register(b::incrementAndGet);

        signals.onSignal("TERM", 15);

        assertThat(a).hasValue(1);
        assertThat(b).hasValue(1);
        assertThat(exits).isEmpty();
    }

    @Test
    void aSecondSignalWhileStoppingExitsAtOnceWith128PlusItsNumber() {
        AtomicInteger stops = new AtomicInteger();
        signals.register(stops::incrementAndGet);

        signals.onSignal("INT", 2);
        signals.onSignal("INT", 2);

        assertThat(stops).hasValue(1);
        assertThat(exits).containsExactly("halt SIGINT 130");
    }

    @Test
    void withNoCommandRunningASignalExitsAsTheJvmWould() {
        AtomicInteger stops = new AtomicInteger();
        Runnable unregister = signals.register(stops::incrementAndGet);
        signals.onSignal("TERM", 15);
        unregister.run();

        signals.onSignal("TERM", 15);

        assertThat(stops).hasValue(1);
        assertThat(exits).containsExactly("exit 143");
    }

    @Test
    void aCommandRegisteredAfterAnOrderlyStopIsStoppedByTheNextSignal() {
        signals.register(() -> { }).run();
        AtomicInteger stops = new AtomicInteger();
        signals.register(stops::incrementAndGet);

        signals.onSignal("TERM", 15);

        assertThat(stops).hasValue(1);
        assertThat(exits).isEmpty();
    }

    /**
     * A real SIGTERM to this JVM while {@code tiffin master} runs in it: the command stops, prints
     * {@code Stopped.} and returns 0, and the JVM keeps running (without the handler, the JVM would
     * exit with 143 and fail the build).
     */
    @Test
    void sigtermStopsARunningMasterWhichReturnsZero() throws InterruptedException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        AtomicInteger exit = new AtomicInteger(-1);
        Thread thread = new Thread(() -> exit.set(TiffinCli.run(InputStream.nullInputStream(),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                Map.of(), "master", "--port", "0", "--admin-port", "0")));
        thread.start();
        // Until the command has installed its handlers (after it has started the master), or has ended.
        await("the master command to install its signal handlers").atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> ServerCommand.StopSignals.PROCESS.registered() > 0 || !thread.isAlive());
        assertThat(ServerCommand.StopSignals.PROCESS.registered()).as("stdout %s, stderr %s", out, err).isEqualTo(1);
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("Tiffin master listening on ");

        sun.misc.Signal.raise(new sun.misc.Signal("TERM"));
        thread.join(20_000);

        assertThat(thread.isAlive()).as("master still running; stderr: %s", err).isFalse();
        assertThat(exit).hasValue(0);
        assertThat(out.toString(StandardCharsets.UTF_8)).endsWith("Stopped.\n");
    }
}
