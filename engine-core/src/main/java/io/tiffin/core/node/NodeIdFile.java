package io.tiffin.core.node;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The id of a node with an SSD tier, kept in its storage directory ({@value #FILE}), so that the copies on that disk
 * stay the same node's across restarts. The master lists every SSD copy under its node's id: a restarted node that
 * came back under another id (a {@code node.id} left empty is generated anew at every start) had its copies of
 * objects the master still knew deleted as strangers, and copies of objects removed while it was down adopted as new
 * objects, since the deletions waiting for it were queued under the old id.
 *
 * <p>With {@code node.id} empty, the node takes the id the file names, or generates one and writes it; with {@code
 * node.id} set, the file must name the same id (a directory is never taken over by another node by mistake), or is
 * written with it. Like Kafka's {@code meta.properties} in each log directory.
 *
 * <p>Thread-safety: no state; called once per node start, before the storage backend opens the directory.
 */
final class NodeIdFile {
    private static final Logger LOG = LogManager.getLogger(NodeIdFile.class);

    /** The file's name, at the top of {@code node.storage-path}; storage backends must leave it alone. */
    static final String FILE = "node.id";
    /** Longer than any id a person writes, short enough to reject a file that is something else. */
    private static final int MAX_ID_BYTES = 256;

    private NodeIdFile() {
    }

    /**
     * The id of the node whose SSD tier lives in {@code storageDir}: the one its {@value #FILE} file names (which must
     * equal {@code configured} when that is set), or else {@code configured} or, when it is empty, a {@code generated}
     * one, written into the file (durably: a temporary file synced and renamed) before this returns.
     *
     * @throws TiffinException {@code INVALID_PARAMS} when the file names another node than {@code configured}, does
     *     not hold an id, or cannot be read or written
     */
    static String resolve(String configured, Path storageDir, Supplier<String> generated) {
        Path file = storageDir.resolve(FILE);
        String stored = read(file);
        if (stored != null) {
            if (!configured.isEmpty() && !configured.equals(stored)) {
                throw new TiffinException(ErrorCode.INVALID_PARAMS, "node.id = " + configured + ", but the SSD tier in "
                        + storageDir + " belongs to node " + stored + " (" + file + "): its copies are listed under that"
                        + " id. Set node.id = " + stored + " (or leave it empty), or point node.storage-path at another"
                        + " directory; to give this directory to a new node, delete " + file + " and its contents");
            }
            LOG.debug("Node id {} from {}", stored, file);
            return stored;
        }
        String id = configured.isEmpty() ? generated.get() : configured;
        write(file, id);
        LOG.info("Node id {} written to {}{}", id, file, configured.isEmpty()
                ? " (node.id is empty: this node keeps that id across restarts on this storage path)" : "");
        return id;
    }

    /** The id the file names, or null when there is no file. */
    private static String read(Path file) {
        byte[] bytes;
        try {
            if (Files.size(file) > MAX_ID_BYTES) {
                throw invalid(file, "is larger than " + MAX_ID_BYTES + " bytes");
            }
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "cannot read the node's id from " + file + ": " + e,
                    e);
        }
        String id = new String(bytes, StandardCharsets.UTF_8).strip();
        if (id.isEmpty() || !id.chars().allMatch(c -> c > 0x20 && c < 0x7F)) {
            throw invalid(file, id.isEmpty() ? "is empty" : "does not hold an id (printable ASCII without spaces)");
        }
        return id;
    }

    private static TiffinException invalid(Path file, String what) {
        return new TiffinException(ErrorCode.INVALID_PARAMS, file + " " + what + ": it should name the id of the node"
                + " whose SSD tier lives beside it. Write that id into it (node.id), or delete it to let this node"
                + " take the directory under its own id");
    }

    private static void write(Path file, String id) {
        Path dir = file.getParent();
        Path tmp = dir.resolve(FILE + ".tmp");
        try {
            Files.createDirectories(dir);
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ByteBuffer b = ByteBuffer.wrap((id + "\n").getBytes(StandardCharsets.UTF_8));
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                ch.force(true);
            }
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
            try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
                d.force(true); // the rename itself durable
            } catch (IOException e) {
                LOG.debug("Could not sync directory {}: {}", dir, e.toString());
            }
        } catch (IOException e) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "cannot write the node's id to " + file
                    + " (node.storage-path must be a directory this process can write): " + e, e);
        }
    }
}
