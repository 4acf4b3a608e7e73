package lakecompat.hive3;

import java.net.InetSocketAddress;
import org.apache.thrift.transport.TServerSocket;
import org.apache.thrift.transport.TTransportException;

/**
 * Server sockets on the address given by the system property {@code lakecompat.bind.host}.
 *
 * <p>Hive 3.1.3 opens the Metastore's and HiveServer2's thrift sockets on every interface: the
 * Metastore has no bind-host setting, and HiveServer2 reads {@code hive.server2.thrift.bind.host}
 * into a local variable but binds with a field that is never set. Both call one static helper
 * with a host of null; lakecompat's versions of those helpers call this class instead.
 */
public final class LoopbackSockets {
  /** The system property naming the address to bind to when Hive gives none. */
  public static final String BIND_HOST = "lakecompat.bind.host";

  private LoopbackSockets() {}

  /** The address to bind {@code port} to: {@code host}, else {@link #BIND_HOST}, else all. */
  public static InetSocketAddress address(String host, int port) {
    String chosen = host != null && !host.isEmpty() ? host : System.getProperty(BIND_HOST);
    if (chosen == null || chosen.isEmpty()) {
      return new InetSocketAddress(port);
    }
    return new InetSocketAddress(chosen, port);
  }

  /** A plain thrift server socket on {@link #address}. */
  public static TServerSocket serverSocket(String host, int port) throws TTransportException {
    InetSocketAddress address = address(host, port);
    System.err.println("lakecompat: thrift server socket on " + address);
    return new TServerSocket(address);
  }

  /** Thrown where Hive would open an SSL socket: lakecompat's Hive 3 runs without SSL. */
  public static TTransportException noSsl() {
    return new TTransportException(
        "SSL is not available in lakecompat's Hive 3 (its socket helpers are replaced to bind"
            + " to 127.0.0.1; see engines/metastore/hive3.py)");
  }
}
