package lakecompat.presto;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * Run once when Presto is provisioned: {@code DriftPatcher DRIFT_JAR CLASSES_DIR} copies drift's
 * netty server transport out of {@code DRIFT_JAR} into {@code CLASSES_DIR} with its one call
 * of {@code ServerBootstrap.bind(int)} replaced by {@link LoopbackBind#bind}. Nothing else in
 * the class changes. The copy comes ahead of drift's jar on the server's classpath.
 */
public final class DriftPatcher {
    static final String TRANSPORT =
            "com/facebook/drift/transport/netty/server/DriftNettyServerTransport.class";
    private static final String BOOTSTRAP = "io/netty/bootstrap/ServerBootstrap";
    private static final String BIND_BY_PORT = "(I)Lio/netty/channel/ChannelFuture;";

    private DriftPatcher() {}

    public static void main(String[] args) throws Exception {
        byte[] original;
        try (ZipFile jar = new ZipFile(args[0])) {
            ZipEntry entry = jar.getEntry(TRANSPORT);
            if (entry == null) {
                throw new IllegalStateException(args[0] + " has no " + TRANSPORT);
            }
            try (InputStream in = jar.getInputStream(entry)) {
                original = in.readAllBytes();
            }
        }
        ClassReader reader = new ClassReader(original);
        ClassWriter writer = new ClassWriter(reader, 0);
        int[] replaced = {0};
        reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
            @Override
            public MethodVisitor visitMethod(
                    int access, String name, String descriptor, String signature, String[] exceptions) {
                MethodVisitor next = super.visitMethod(access, name, descriptor, signature, exceptions);
                return new MethodVisitor(Opcodes.ASM9, next) {
                    @Override
                    public void visitMethodInsn(
                            int opcode, String owner, String method, String desc, boolean isInterface) {
                        if (opcode == Opcodes.INVOKEVIRTUAL && owner.equals(BOOTSTRAP)
                                && method.equals("bind") && desc.equals(BIND_BY_PORT)) {
                            replaced[0]++;
                            super.visitMethodInsn(Opcodes.INVOKESTATIC, "lakecompat/presto/LoopbackBind",
                                    "bind", "(L" + BOOTSTRAP + ";I)Lio/netty/channel/ChannelFuture;", false);
                            return;
                        }
                        super.visitMethodInsn(opcode, owner, method, desc, isInterface);
                    }
                };
            }
        }, 0);
        if (replaced[0] != 1) {
            throw new IllegalStateException(
                    "expected one ServerBootstrap.bind(int) call in " + TRANSPORT + ", found " + replaced[0]);
        }
        Path target = Paths.get(args[1], TRANSPORT);
        Files.createDirectories(target.getParent());
        Files.write(target, writer.toByteArray());
    }
}
