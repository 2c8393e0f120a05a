package io.tiffin.core.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Keys the client refuses before anything is sent. A key with an unpaired surrogate used to go out as
 * UTF-8 with '?' in its place, so {@code "s\uD800"} and {@code "s\uDBFF"} named one object and a get of one
 * returned the other's bytes.
 */
class KeyCheckTest {

    @Test
    void aKeyThatIsNotValidUnicodeIsRefused() {
        for (String bad : List.of("s\uD800", "s\uDBFF", "\uDC00x", "a\uD800b")) {
            assertThatThrownBy(() -> KeyChecks.checkKey(bad)).isInstanceOfSatisfying(TiffinException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.INVALID_KEY);
                assertThat(e.getMessage()).contains("unpaired surrogate");
            });
        }
        KeyChecks.checkKey("emoji \uD83D\uDE00 and accents \u00e9"); // a proper pair is fine
        KeyChecks.checkKey("?");
    }

    @Test
    void nullAndEmptyKeysAreRefusedWithInvalidKey() {
        assertThatThrownBy(() -> KeyChecks.checkKey(null)).hasMessageContaining("the key is null");
        assertThatThrownBy(() -> KeyChecks.checkKey("")).hasMessageContaining("the key is empty");
    }

    @Test
    void aBatchIsRefusedForANullOrMalformedKeyButEmptyKeysGoToTheMasterPerKey() {
        assertThatThrownBy(() -> KeyChecks.checkKeys(Arrays.asList("a", null)))
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_KEY))
                .hasMessageContaining("key 1 of the batch: the key is null");
        assertThatThrownBy(() -> KeyChecks.checkKeys(List.of("a", "b", "c\uD800")))
                .hasMessageContaining("key 2 of the batch");
        KeyChecks.checkKeys(List.of("a", "", "b"));
    }

    @Test
    void segmentsTheCallCannotUseAreRefusedAsTheCallersMistake() {
        java.lang.foreign.Arena closed = java.lang.foreign.Arena.ofShared();
        java.lang.foreign.MemorySegment gone = closed.allocate(16);
        closed.close();
        java.lang.foreign.MemorySegment readOnly = java.lang.foreign.MemorySegment.ofArray(new byte[16]).asReadOnly();
        assertThatThrownBy(() -> KeyChecks.checkSegment(gone, false, "the value of ", "k"))
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS))
                .hasMessage("the value of k belongs to an arena that is closed");
        assertThatThrownBy(() -> KeyChecks.checkSegment(readOnly, true, "the destination of ", "k"))
                .hasMessage("the destination of k is read-only");
        KeyChecks.checkSegment(readOnly, false, "a value may be read-only", "");
        assertThatThrownBy(() -> KeyChecks.checkSegment(null, true, "destination of key ", 3))
                .hasMessage("destination of key 3 is null");
    }
}
