package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.ExpireCondition;
import io.tiffin.core.client.PinnedValue;
import io.tiffin.core.client.TiffinClient;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a Java application may hand the client: values and destinations over any heap array (not only byte[]), and
 * nulls or out-of-range arguments, which are INVALID_PARAMS naming the argument, never an exception from inside.
 */
class ClientArgumentsTest {
    private static TestCluster cluster;
    private static TiffinClient client;

    @BeforeAll
    static void start() {
        cluster = new TestCluster(Map.of(), 1, 64L << 20);
        client = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress()).build());
        cluster.clients.add(client);
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    /**
     * A value over an int[] or long[] put, batch put and read back: the checksum of such a segment threw
     * UnsupportedOperationException after PutStart, and the key stayed unusable for every client until the put
     * timeout (with the valid keys of its batch).
     */
    @Test
    void valuesAndDestinationsOverAnyPrimitiveArray() {
        int[] ints = {1, 2, 3, 0x7fffffff};
        client.putFrom("ints", MemorySegment.ofArray(ints), PutOptions.DEFAULT);
        long[] back = new long[2];
        assertThat(client.getInto("ints", MemorySegment.ofArray(back))).isEqualTo(16);
        assertThat(MemorySegment.ofArray(back).toArray(ValueLayout.JAVA_INT)).containsExactly(ints);
        List<KeyResult<Void>> put = client.batchPutFrom(List.of("b-ints", "b-bytes"),
                List.of(MemorySegment.ofArray(new long[] {42L}), MemorySegment.ofArray(new byte[] {7})),
                PutOptions.DEFAULT);
        assertThat(put).allMatch(KeyResult::isOk);
        long[] one = new long[1];
        byte[] b = new byte[1];
        assertThat(client.batchGetInto(List.of("b-ints", "b-bytes"), List.of(MemorySegment.ofArray(one),
                MemorySegment.ofArray(b)))).allMatch(KeyResult::isOk);
        assertThat(one[0]).isEqualTo(42L);
        assertThat(b[0]).isEqualTo((byte) 7);
    }

    private static void invalid(ThrowingCallable call, String what) {
        assertThatThrownBy(call).isInstanceOfSatisfying(TiffinException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS)).hasMessageContaining(what);
    }

    @Test
    void nullsAndOutOfRangeArgumentsAreInvalidParams() {
        invalid(() -> client.put("k", null), "is null");
        invalid(() -> client.put("k", new byte[1], null), "the put options");
        invalid(() -> client.batchPut(null, PutOptions.DEFAULT), "the map of values is null");
        Map<String, byte[]> withNull = new HashMap<>();
        withNull.put("n", null);
        invalid(() -> client.batchPut(withNull, PutOptions.DEFAULT), "is null");
        invalid(() -> client.batchPut(Map.of("m", new byte[1]), null), "the put options");
        invalid(() -> client.batchPutFrom(List.of("x"), null, PutOptions.DEFAULT), "the list of values is null");
        invalid(() -> client.batchGetInto(List.of("x"), null), "is null");
        invalid(() -> client.locateByRegex(null), "the regex is null");
        invalid(() -> client.listKeys(null, 10), "the prefix");
        invalid(() -> client.listKeys("", 0), "limit = 0");
        invalid(() -> client.expire("k", 1000, (ExpireCondition) null), "the expire condition is null");
    }

    @Test
    void aPinnedValueCopiedIntoTooSmallADestinationIsABufferOverflow() {
        client.put("pinned", new byte[100]);
        try (PinnedValue v = client.getPinned("pinned")) {
            assertThatThrownBy(() -> v.copyTo(MemorySegment.ofArray(new byte[10])))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.BUFFER_OVERFLOW))
                    .hasMessageContaining("the object is 100 bytes but the destination holds 10");
            byte[] whole = new byte[100];
            v.copyTo(MemorySegment.ofArray(whole));
        }
    }

    /**
     * A put whose thread is interrupted while it writes revokes its PutStart all the same, so the key is free at once
     * for any client (the revoke failed on the interrupted thread, and the key stayed REPLICA_IS_NOT_READY for every
     * client until master.put-timeout, 60 s).
     */
    @Test
    void anInterruptedPutLeavesItsKeyFree() throws Exception {
        TiffinClient writer = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress()).build());
        cluster.clients.add(writer);
        byte[] big = new byte[48 << 20];
        for (int round = 0; round < 3; round++) {
            String key = "interrupted-" + round;
            Thread t = Thread.ofPlatform().start(() -> {
                try {
                    writer.put(key, big, PutOptions.DEFAULT);
                } catch (TiffinException expected) {
                    // interrupted: TRANSFER_FAIL or RPC_FAIL
                }
            });
            Thread.sleep(3 + round * 3);
            t.interrupt();
            t.join(30_000);
            long start = System.nanoTime();
            client.put(key, new byte[] {1}, PutOptions.DEFAULT.withUpsert(true));
            assertThat((System.nanoTime() - start) / 1_000_000).as("the key was free at once").isLessThan(5_000);
            assertThat(client.get(key)).containsExactly(1);
        }
    }
}
