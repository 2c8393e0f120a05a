package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.netty.channel.ConnectTimeoutException;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportClientPool;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.ForgetRequest;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.ServerSocket;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * When a FORGET may count as done without its node's answer: only when nothing listens on the node's port (the
 * records died with its process). A connect that timed out or a host out of reach may hide a live node that still
 * holds the records; freeing the space then would leave a record naming bytes another object overwrites.
 */
class NodeForgetsTest {
    @Test
    void aRefusedConnectionMeansNoProcessHoldsTheRecords() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        try (TransportClientPool pool = new TransportClientPool("forgets-test", TransportSettings.defaults()
                .withHandshakeTimeout(Duration.ofSeconds(1)).withRpcTimeout(Duration.ofSeconds(1)).withIoThreads(1),
                "forgets-test")) {
            Throwable e = catchThrowable(() -> pool.get("127.0.0.1:" + port).callSync(Opcode.FORGET,
                    ForgetRequest.newBuilder().setTerm(1).setSegment("s").build(), Empty.parser()));
            assertThat(e).isInstanceOf(TiffinException.class);
            assertThat(NodeForgets.refused(e)).as("%s", e).isTrue();
        }
    }

    @Test
    void aConnectThatTimedOutOrAnUnreachableHostIsNoRefusal() {
        assertThat(NodeForgets.refused(new TiffinException(ErrorCode.RPC_FAIL, "cannot connect",
                new ConnectTimeoutException("connection timed out: /10.0.0.9:7000")))).isFalse();
        assertThat(NodeForgets.refused(new TiffinException(ErrorCode.RPC_FAIL, "cannot connect",
                new NoRouteToHostException("No route to host")))).isFalse();
        assertThat(NodeForgets.refused(new TiffinException(ErrorCode.RPC_TIMEOUT, "no answer in 1 s"))).isFalse();
        assertThat(NodeForgets.refused(new TiffinException(ErrorCode.RPC_FAIL, "cannot connect",
                new ConnectException("Connection refused")))).isTrue();
    }
}
