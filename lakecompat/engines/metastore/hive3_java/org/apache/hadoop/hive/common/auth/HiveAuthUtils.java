package org.apache.hadoop.hive.common.auth;

import java.util.List;
import lakecompat.hive3.LoopbackSockets;
import org.apache.thrift.transport.TServerSocket;
import org.apache.thrift.transport.TSocket;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.TTransportException;

/**
 * lakecompat's stand-in for Hive 3.1.3's class of the same name (same methods), ahead of
 * hive-exec on HiveServer2's classpath: its server socket binds to 127.0.0.1 (see
 * {@link LoopbackSockets}). Plain client sockets are made as Hive makes them; SSL is refused.
 */
public class HiveAuthUtils {
  public HiveAuthUtils() {}

  public static TTransport getSocketTransport(String host, int port, int loginTimeout) {
    return new TSocket(host, port, loginTimeout);
  }

  public static TTransport getSSLSocket(String host, int port, int loginTimeout)
      throws TTransportException {
    throw LoopbackSockets.noSsl();
  }

  public static TTransport getSSLSocket(
      String host, int port, int loginTimeout, String trustStorePath, String trustStorePassword)
      throws TTransportException {
    throw LoopbackSockets.noSsl();
  }

  public static TServerSocket getServerSocket(String host, int port) throws TTransportException {
    return LoopbackSockets.serverSocket(host, port);
  }

  public static TServerSocket getServerSSLSocket(
      String host,
      int port,
      String keyStorePath,
      String keyStorePassword,
      List<String> excludedProtocols)
      throws TTransportException {
    throw LoopbackSockets.noSsl();
  }
}
