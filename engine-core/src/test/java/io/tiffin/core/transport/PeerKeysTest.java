package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Which process holds a peer id: the first key's connections, until the last of them closes. */
class PeerKeysTest {
    private final String a = PeerKeys.digest(PeerKeys.random());
    private final String b = PeerKeys.digest(PeerKeys.random());

    @Test
    void anIdIsHeldByTheFirstKeysConnectionsUntilTheLastOneCloses() {
        PeerKeys ids = new PeerKeys();
        assertThat(ids.claim("client-1", a)).isEqualTo(PeerKeys.Claim.HOLDS);
        assertThat(ids.claim("client-1", a)).as("a second connection of the same process").isEqualTo(PeerKeys.Claim.HOLDS);
        assertThat(ids.claim("client-1", b)).isEqualTo(PeerKeys.Claim.TAKEN);
        assertThat(ids.claim("client-1", "")).as("an older peer without a key").isEqualTo(PeerKeys.Claim.TAKEN);
        ids.release("client-1", b); // not a holder: changes nothing
        ids.release("client-1", a);
        assertThat(ids.claim("client-1", b)).as("one connection of the holder is still open").isEqualTo(PeerKeys.Claim.TAKEN);
        ids.release("client-1", a);
        assertThat(ids.held()).isZero();
        assertThat(ids.claim("client-1", b)).as("free again").isEqualTo(PeerKeys.Claim.HOLDS);
    }

    @Test
    void peersWithoutAKeyOrAnIdHoldNothing() {
        PeerKeys ids = new PeerKeys();
        assertThat(ids.claim("old-client", "")).isEqualTo(PeerKeys.Claim.UNKEYED);
        assertThat(ids.claim("", a)).isEqualTo(PeerKeys.Claim.UNKEYED);
        assertThat(ids.held()).isZero();
        assertThat(PeerKeys.digest(com.google.protobuf.ByteString.EMPTY)).isEmpty();
        assertThat(PeerKeys.ofThisProcess()).isEqualTo(PeerKeys.ofThisProcess());
        assertThat(PeerKeys.ofThisProcess().size()).isEqualTo(32);
    }
}
