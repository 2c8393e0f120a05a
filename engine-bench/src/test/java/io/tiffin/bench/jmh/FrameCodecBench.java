package io.tiffin.bench.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.tiffin.api.ErrorCode;
import io.tiffin.core.transport.Frame;
import io.tiffin.core.transport.FrameCodec;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.KeyRequest;
import io.tiffin.core.transport.proto.ObjectLocationMsg;
import io.tiffin.core.transport.proto.Replica;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * JMH: {@link FrameCodec} through an {@link EmbeddedChannel}: encoding a GetReplicaList request (protobuf
 * serialisation + header), and decoding a GetReplicaList response back into a {@link Frame} and parsing
 * its control message. Run: see docs/BENCHMARKS.md ("JMH").
 *
 * <p>Not thread-safe: one channel per benchmark thread ({@link Scope#Thread}).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
@State(Scope.Thread)
public class FrameCodecBench {
    private EmbeddedChannel channel;
    private KeyRequest request;
    private ByteBuf encodedResponse;
    private long requestId;

    @Setup(Level.Trial)
    public void setUp() {
        channel = new EmbeddedChannel(new FrameCodec(TransportSettings.DEFAULT_MAX_FRAME_SIZE));
        request = KeyRequest.newBuilder().setClientId("client-3f2a9c1e-7b44-4c1d-9a57-2f0e8d6b1c90")
                .setKey("tenant_042/session_12345/layer_17/block_0042").build();
        ObjectLocationMsg location = ObjectLocationMsg.newBuilder().setKey(request.getKey()).setSize(4096)
                .setVersion(77).setLeaseTtlMs(10_000)
                .addReplicas(Replica.newBuilder().setReplicaId(991).setSegment("node-1-seg0").setNodeId("node-1")
                        .setEndpoint("127.0.0.1:40001").setOffset(1L << 30).setSize(4096).setStatus(2))
                .build();
        EmbeddedChannel encoder = new EmbeddedChannel(new FrameCodec(TransportSettings.DEFAULT_MAX_FRAME_SIZE));
        encoder.writeOutbound(Frame.response(Opcode.GET_REPLICA_LIST, 1, ErrorCode.OK, location, null));
        ByteBuf header = encoder.readOutbound();
        encodedResponse = Unpooled.directBuffer(header.readableBytes()).writeBytes(header);
        header.release();
        encoder.finishAndReleaseAll();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        channel.finishAndReleaseAll();
        encodedResponse.release();
    }

    @Benchmark
    public int encodeRequest() {
        channel.writeOutbound(Frame.request(Opcode.GET_REPLICA_LIST, ++requestId, request, null));
        ByteBuf out = channel.readOutbound();
        int n = out.readableBytes();
        out.release();
        return n;
    }

    @Benchmark
    public int decodeResponse() {
        channel.writeInbound(encodedResponse.retainedDuplicate());
        Frame frame = channel.readInbound();
        try {
            return frame.parseControl(ObjectLocationMsg.parser()).getReplicasCount();
        } finally {
            frame.release();
        }
    }
}
