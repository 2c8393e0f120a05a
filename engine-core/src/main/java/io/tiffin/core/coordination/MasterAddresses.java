package io.tiffin.core.coordination;

import java.util.ArrayList;
import java.util.List;

/**
 * The masters a node or client may talk to: {@code master.address} as {@code host:port[,host:port...]}. With one
 * address there is no failover; with several, the caller asks each which leads ({@code SERVICE_READY}) and follows
 * the leader of the highest term.
 *
 * <p>Thread-safe (immutable).
 */
public final class MasterAddresses {
    private final List<String> all;

    private MasterAddresses(List<String> all) {
        this.all = List.copyOf(all);
    }

    /**
     * Parses a comma-separated list of {@code host:port} (blanks around commas ignored).
     *
     * @throws IllegalArgumentException for an empty list
     */
    public static MasterAddresses parse(String text) {
        List<String> out = new ArrayList<>();
        for (String part : text.split(",")) {
            String s = part.strip();
            if (!s.isEmpty() && !out.contains(s)) {
                out.add(s);
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("master.address = \"" + text + "\" (expected: host:port[,host:port...])");
        }
        return new MasterAddresses(out);
    }

    public List<String> all() {
        return all;
    }

    public String first() {
        return all.getFirst();
    }

    public int size() {
        return all.size();
    }

    @Override
    public String toString() {
        return String.join(",", all);
    }
}
