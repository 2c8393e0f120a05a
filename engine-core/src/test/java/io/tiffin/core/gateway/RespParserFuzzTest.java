package io.tiffin.core.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.tiffin.core.config.TiffinConfig;
import java.util.ArrayList;
import java.util.List;

/**
 * Coverage-guided fuzzing of the gateway's request decoder ({@link RespParser}, {@link InlineSplitter}): any bytes,
 * cut anywhere, fed as the connection feeds them (socket buffers, and a long value's own buffer through
 * {@link RespParser#receiveWindow}), give the same commands and the same protocol error as the bytes fed whole,
 * never an exception, with every byte counted in the memory budget given back and every buffer released. Run
 * twice per input: with small limits (so the limit errors are reached) and with larger ones. In CI the inputs
 * under src/test/resources run as regression tests; {@code ./mvnw -Pfuzz} fuzzes (docs/SECURITY.md).
 */
class RespParserFuzzTest {
    /** A parse: the commands (their arguments' bytes), and the error that ended it (null: none). */
    private record Parse(List<List<byte[]>> commands, String error) {
        List<List<String>> printable() {
            return commands.stream().map(c -> c.stream().map(a -> new String(a, java.nio.charset.StandardCharsets
                    .ISO_8859_1)).toList()).toList();
        }
    }

    @FuzzTest(maxDuration = "5m")
    void anyBytesGiveTheSameCommandsOrProtocolErrorWhereverTheyAreCut(byte[] input) {
        // tiny limits reach every limit error; the larger ones long values with buffers of their own
        check(input, settings("1KiB", "8", "48"));
        check(input, settings("64KiB", "1024", "1024"));
    }

    private static GatewaySettings settings(String maxBulk, String maxArray, String maxInline) {
        return GatewaySettings.from(TiffinConfig.builder().set("gateway.max-bulk-size", maxBulk)
                .set("gateway.max-array-length", maxArray).set("gateway.max-inline-length", maxInline).build());
    }

    private static void check(byte[] input, GatewaySettings settings) {
        Parse whole = parse(input, settings, new int[] {input.length});
        // cut points drawn from the input itself, so the fuzzer steers them too
        int pieces = input.length == 0 ? 1 : 1 + (input[input.length - 1] & 0x0f);
        int[] sizes = new int[pieces];
        int left = input.length;
        for (int i = 0; i < pieces; i++) {
            int seed = input.length == 0 ? 0 : input[(i * 7) % input.length] & 0xff;
            sizes[i] = i == pieces - 1 ? left : Math.min(left, 1 + seed % Math.max(1, left));
            left -= sizes[i];
        }
        Parse cut = parse(input, settings, sizes);
        assertThat(cut.printable()).as("commands of the input cut into %s", java.util.Arrays.toString(sizes))
                .isEqualTo(whole.printable());
        assertThat(cut.error()).isEqualTo(whole.error());
        Parse byteByByte = input.length > 4096 ? whole : parse(input, settings, ones(input.length));
        assertThat(byteByByte.printable()).isEqualTo(whole.printable());
        assertThat(byteByByte.error()).isEqualTo(whole.error());
    }

    private static int[] ones(int n) {
        int[] sizes = new int[n];
        java.util.Arrays.fill(sizes, 1);
        return sizes;
    }

    /** Feeds {@code input} in pieces of {@code sizes}, as a connection does; checks what must always hold. */
    private static Parse parse(byte[] input, GatewaySettings settings, int[] sizes) {
        UnpooledByteBufAllocator alloc = new UnpooledByteBufAllocator(false);
        MemoryBudget budget = new MemoryBudget(1L << 30);
        RespParser parser = new RespParser(alloc, budget, () -> false, settings);
        List<List<byte[]>> commands = new ArrayList<>();
        String error = null;
        int at = 0;
        try {
            for (int size : sizes) {
                int end = at + size;
                while (at < end && error == null) {
                    ByteBuf in = parser.receiveWindow();
                    int n;
                    if (in != null) {
                        n = Math.min(in.writableBytes(), end - at);
                        in.writeBytes(input, at, n);
                    } else {
                        n = end - at;
                        in = alloc.heapBuffer(n).writeBytes(input, at, n);
                    }
                    at += n;
                    RespParser.Outcome outcome = parser.feed(in, c -> {
                        try {
                            assertThat(c.argc()).as("a command has a name").isPositive();
                            List<byte[]> args = new ArrayList<>(c.argc());
                            for (int i = 0; i < c.argc(); i++) {
                                args.add(c.bytes(i));
                            }
                            commands.add(args);
                        } finally {
                            c.release();
                        }
                    });
                    assertThat(outcome).isIn(RespParser.Outcome.NEED_MORE, RespParser.Outcome.ERROR);
                    if (outcome == RespParser.Outcome.ERROR) {
                        error = parser.error();
                        assertThat(error).isNotBlank();
                    }
                }
                if (error != null) {
                    break;
                }
            }
        } finally {
            parser.close();
        }
        assertThat(budget.used()).as("bytes still counted in the memory budget").isZero();
        assertThat(alloc.metric().usedHeapMemory()).as("heap buffers not released").isZero();
        assertThat(alloc.metric().usedDirectMemory()).as("direct buffers not released").isZero();
        return new Parse(commands, error);
    }
}
