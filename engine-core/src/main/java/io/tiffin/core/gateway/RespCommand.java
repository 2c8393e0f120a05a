package io.tiffin.core.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.util.AsciiString;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One received command: its arguments (the first is the name) as buffers, and the memory they take,
 * counted in the gateway's {@link MemoryBudget} until {@link #release()}.
 *
 * <p>Not thread-safe: handed from the event loop that parsed it to the thread that runs it, and used
 * there only. {@link #release()} is idempotent and may be called from any thread.
 */
final class RespCommand {
    /** Counted per argument on top of its bytes: the objects that hold it. */
    static final int ARGUMENT_OVERHEAD = 64;

    private final List<ByteBuf> args;
    private final long weight;
    private final MemoryBudget budget;
    private final AtomicBoolean released = new AtomicBoolean();
    private String name;

    /**
     * @param args the arguments, owned by this command from now on
     * @param weight bytes reserved in {@code budget} for it, given back on release
     */
    RespCommand(List<ByteBuf> args, long weight, MemoryBudget budget) {
        this.args = args;
        this.weight = weight;
        this.budget = budget;
    }

    /** The command's name in upper case. */
    String name() {
        if (name == null) {
            name = args.getFirst().toString(StandardCharsets.ISO_8859_1).toUpperCase(Locale.ROOT);
        }
        return name;
    }

    /** Arguments, the name included. */
    int argc() {
        return args.size();
    }

    long weight() {
        return weight;
    }

    /** Argument {@code i} (0 = the name); still owned by this command. */
    ByteBuf arg(int i) {
        return args.get(i);
    }

    /** Argument {@code i} as text, one char per byte (for options, numbers and names, which are ASCII). */
    String text(int i) {
        return args.get(i).toString(StandardCharsets.ISO_8859_1);
    }

    /** Argument {@code i} as raw bytes (a copy, or the argument's own array when it is exactly that). */
    byte[] bytes(int i) {
        ByteBuf b = args.get(i);
        if (b.hasArray() && b.arrayOffset() == 0 && b.readerIndex() == 0 && b.array().length == b.readableBytes()) {
            return b.array(); // a short argument copied by the parser: read-only by convention
        }
        byte[] out = new byte[b.readableBytes()];
        b.getBytes(b.readerIndex(), out);
        return out;
    }

    /** Whether argument {@code i} equals {@code word}, ignoring ASCII case. */
    boolean is(int i, String word) {
        ByteBuf b = args.get(i);
        if (b.readableBytes() != word.length()) {
            return false;
        }
        for (int k = 0; k < word.length(); k++) {
            if (AsciiString.toLowerCase((char) (b.getByte(b.readerIndex() + k) & 0xff))
                    != AsciiString.toLowerCase(word.charAt(k))) {
                return false;
            }
        }
        return true;
    }

    /**
     * Argument {@code i} as a key: its bytes as UTF-8.
     *
     * @throws RespError when they are not valid UTF-8 (Tiffin's keys are Unicode strings)
     */
    String key(int i) {
        byte[] raw = bytes(i);
        if (isAscii(raw)) {
            return new String(raw, StandardCharsets.ISO_8859_1);
        }
        CharsetDecoder d = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        try {
            return d.decode(ByteBuffer.wrap(raw)).toString();
        } catch (CharacterCodingException e) {
            throw RespError.err("INVALID_KEY the key is not valid UTF-8; Tiffin keys are Unicode strings");
        }
    }

    /** Arguments {@code from} to the end as keys. */
    List<String> keys(int from) {
        List<String> out = new ArrayList<>(args.size() - from);
        for (int i = from; i < args.size(); i++) {
            out.add(key(i));
        }
        return out;
    }

    private static boolean isAscii(byte[] raw) {
        for (byte b : raw) {
            if (b < 0) {
                return false;
            }
        }
        return true;
    }

    /** Frees the arguments and gives their memory back; once, whoever calls it. */
    void release() {
        if (released.compareAndSet(false, true)) {
            for (ByteBuf b : args) {
                b.release();
            }
            budget.release(weight);
        }
    }

    @Override
    public String toString() {
        return "RespCommand[" + name() + ", " + args.size() + " args, " + weight + " bytes]";
    }
}
