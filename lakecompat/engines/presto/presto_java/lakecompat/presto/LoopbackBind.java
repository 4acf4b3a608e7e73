package lakecompat.presto;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelFuture;

/**
 * Where Presto's internal thrift server (drift) binds: drift's netty transport calls
 * {@code ServerBootstrap.bind(port)}, which listens on every interface, and has no setting for
 * the address. {@link DriftPatcher} makes that one call come here instead, which binds to the
 * address in the system property {@code lakecompat.bind.host} (127.0.0.1 when it is unset).
 */
public final class LoopbackBind {
    public static final String HOST_PROPERTY = "lakecompat.bind.host";

    private LoopbackBind() {}

    public static ChannelFuture bind(ServerBootstrap bootstrap, int port) {
        return bootstrap.bind(System.getProperty(HOST_PROPERTY, "127.0.0.1"), port);
    }
}
