import java.io.IOException;
import java.io.OutputStream;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassHierarchyResolver;
import java.lang.classfile.ClassModel;
import java.lang.classfile.ClassTransform;
import java.lang.classfile.CodeTransform;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;

/**
 * Rewrites the class files older than Java 6 (major version below 50) in the jars of a directory as version 50
 * class files with stack maps, so that the JDK's ahead-of-time cache can hold them: it leaves out "old" classes,
 * which must be verified by the old type-inferring verifier, and a one-shot command then loads and verifies
 * them from the jar on every start. picocli (built for Java 5) is the one that counts: about 170 of its classes are
 * loaded by every {@code tiffin get|put|ls|stat|rm} (docs/BENCHMARKS.md, "CLI start-up"). The bytecode is not
 * changed: each method body is rewritten as it was, with the stack map frames the class-file API computes. Signed
 * jars are left alone.
 *
 * <p>Usage (the distribution's build, {@code finish-dist.sh}; JDK 24 or later for {@code java.lang.classfile}):
 * {@code java UpgradeOldClassFiles.java LIB_DIR}. Prints one line per jar it rewrote.
 */
public final class UpgradeOldClassFiles {
    /** Java 6: the first version whose classes carry stack maps and that ahead-of-time caches take. */
    private static final int TARGET_MAJOR = 50;

    private UpgradeOldClassFiles() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1 || !Files.isDirectory(Path.of(args[0]))) {
            System.err.println("usage: java UpgradeOldClassFiles.java LIB_DIR (a directory of jars)");
            System.exit(2);
        }
        List<Path> jars = new ArrayList<>();
        try (var files = Files.list(Path.of(args[0]))) {
            files.filter(p -> p.toString().endsWith(".jar")).sorted().forEach(jars::add);
        }
        for (Path jar : jars) {
            int n = upgrade(jar);
            if (n > 0) {
                System.out.println(jar.getFileName() + ": " + n + " class files rewritten as version " + TARGET_MAJOR
                        + " with stack maps");
            }
        }
    }

    /** Rewrites {@code jar} in place if it holds old class files and is not signed; returns how many it rewrote. */
    static int upgrade(Path jar) throws IOException {
        List<JarEntry> entries;
        try (JarFile in = new JarFile(jar.toFile())) {
            entries = Collections.list(in.entries());
            boolean signed = entries.stream().anyMatch(e -> e.getName().startsWith("META-INF/")
                    && (e.getName().endsWith(".SF") || e.getName().endsWith(".RSA") || e.getName().endsWith(".DSA")
                    || e.getName().endsWith(".EC")));
            if (signed || entries.stream().noneMatch(e -> isOld(in, e))) {
                return 0;
            }
        }
        Path tmp = Files.createTempFile(jar.getParent(), jar.getFileName().toString(), ".tmp");
        int rewritten = 0;
        try (JarFile in = new JarFile(jar.toFile()); URLClassLoader loader = new URLClassLoader(new URL[] {
                jar.toUri().toURL()}, null); OutputStream os = Files.newOutputStream(tmp);
                JarOutputStream out = new JarOutputStream(os)) {
            // stack maps need the common superclass of two types: the JDK's classes, else this jar's own
            ClassFile cf = ClassFile.of(ClassFile.StackMapsOption.GENERATE_STACK_MAPS,
                    ClassFile.ClassHierarchyResolverOption.of(ClassHierarchyResolver.defaultResolver()
                            .orElse(ClassHierarchyResolver.ofResourceParsing(loader)).cached()));
            for (JarEntry e : entries) {
                byte[] bytes = in.getInputStream(e).readAllBytes();
                if (isClass(e)) {
                    ClassModel model = cf.parse(bytes);
                    if (model.majorVersion() < TARGET_MAJOR) {
                        bytes = cf.transformClass(model, ClassTransform.transformingMethodBodies(CodeTransform.ACCEPT_ALL)
                                .andThen(ClassTransform.endHandler(b -> b.withVersion(TARGET_MAJOR, 0))));
                        rewritten++;
                    }
                }
                JarEntry copy = new JarEntry(e.getName());
                copy.setTime(e.getTime());
                out.putNextEntry(copy);
                out.write(bytes);
                out.closeEntry();
            }
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(tmp);
            throw e;
        }
        // the temporary file is made owner-only (0600); the jar keeps its own mode, or users other than the one
        // who unpacked the tarball cannot load it
        if (Files.getFileStore(jar).supportsFileAttributeView("posix")) {
            Files.setPosixFilePermissions(tmp, Files.getPosixFilePermissions(jar));
        }
        Files.move(tmp, jar, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        return rewritten;
    }

    private static boolean isClass(JarEntry e) {
        return e.getName().endsWith(".class") && !e.getName().endsWith("module-info.class")
                && !e.getName().startsWith("META-INF/versions/");
    }

    private static boolean isOld(JarFile jar, JarEntry e) {
        if (!isClass(e)) {
            return false;
        }
        try (var in = jar.getInputStream(e)) {
            byte[] head = in.readNBytes(8);
            return head.length == 8 && (((head[6] & 0xff) << 8) | (head[7] & 0xff)) < TARGET_MAJOR;
        } catch (IOException x) {
            throw new java.io.UncheckedIOException(x);
        }
    }
}
