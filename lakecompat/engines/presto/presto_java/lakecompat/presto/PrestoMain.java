package lakecompat.presto;

/**
 * Starts Presto's server without opening any JMX socket.
 *
 * <p>Presto's JMX module starts the JDK's management agent when none runs: an RMI registry,
 * an RMI server and the agent's local connector, the last listening on every interface
 * whatever its port. It takes an agent as running when the system property
 * {@code com.sun.management.jmxremote.port} is set. The JVM itself starts an agent only for
 * properties given on its command line, so set here, after the JVM has started, the property
 * starts nothing, and the JMX module opens nothing either. The server's configuration names
 * the same port ({@code jmx.rmiregistry.port}, {@code jmx.rmiserver.port}), as the module
 * checks that they agree.
 */
public final class PrestoMain {
    /** The port the JMX module is told the agent uses; no socket is ever opened on it. */
    public static final String UNUSED_JMX_PORT = "1";

    private PrestoMain() {}

    public static void main(String[] args) throws Exception {
        System.setProperty("com.sun.management.jmxremote.port", UNUSED_JMX_PORT);
        System.setProperty("com.sun.management.jmxremote.rmi.port", UNUSED_JMX_PORT);
        com.facebook.presto.server.PrestoServer.main(args);
    }
}
