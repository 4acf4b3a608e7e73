package org.apache.hadoop.hive.metastore.utils;

import java.io.IOException;
import java.util.List;
import lakecompat.hive3.LoopbackSockets;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.security.token.TokenIdentifier;
import org.apache.thrift.transport.TServerSocket;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.TTransportException;

/**
 * lakecompat's stand-in for the Hive 3.1.3 Metastore's class of the same name (same methods),
 * ahead of the Hive jars on the Metastore's classpath: its server socket binds to 127.0.0.1 (see
 * {@link LoopbackSockets}). The user and token methods use Hadoop's UserGroupInformation;
 * Kerberos (ZooKeeper login) and SSL are refused, as lakecompat sets up neither.
 */
public class SecurityUtils {
  public SecurityUtils() {}

  /** The current user, or a proxy for {@code HADOOP_USER_NAME} when that is set. */
  public static UserGroupInformation getUGI() throws IOException {
    String proxied = System.getenv("HADOOP_USER_NAME");
    if (proxied != null && !proxied.isEmpty()) {
      return UserGroupInformation.createProxyUser(proxied, UserGroupInformation.getLoginUser());
    }
    return UserGroupInformation.getCurrentUser();
  }

  public static void setZookeeperClientKerberosJaasConfig(String principal, String keyTabFile) {
    throw new UnsupportedOperationException("Kerberos is not set up in lakecompat's Hive 3");
  }

  /** The current user's delegation token of {@code tokenSignature}, URL-encoded, or null. */
  public static String getTokenStrForm(String tokenSignature) throws IOException {
    Text alias = new Text(tokenSignature == null ? "" : tokenSignature);
    Token<? extends TokenIdentifier> token = getUGI().getCredentials().getToken(alias);
    return token == null ? null : token.encodeToUrlString();
  }

  /** Add the URL-encoded token {@code tokenStr} for {@code tokenService} to {@code ugi}. */
  public static void setTokenStr(UserGroupInformation ugi, String tokenStr, String tokenService)
      throws IOException {
    Token<TokenIdentifier> token = new Token<>();
    token.decodeFromUrlString(tokenStr);
    token.setService(new Text(tokenService));
    ugi.addToken(token);
  }

  /** The delegation token store's class as configured (the Metastore's default otherwise). */
  public static String getTokenStoreClassName(Configuration conf) {
    String configured = conf.get("metastore.cluster.delegation.token.store.class");
    if (configured == null) {
      configured = conf.get("hive.cluster.delegation.token.store.class");
    }
    return configured != null
        ? configured
        : "org.apache.hadoop.hive.metastore.security.MemoryTokenStore";
  }

  public static String getUser() throws IOException {
    return getUGI().getUserName();
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

  public static TTransport getSSLSocket(
      String host, int port, int loginTimeout, String trustStorePath, String trustStorePassword)
      throws TTransportException {
    throw LoopbackSockets.noSsl();
  }
}
