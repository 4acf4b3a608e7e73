"""A HiveServer2 session opened with its settings and database in the open request itself.

PyHive's `connect` opens a session and then runs `USE <database>` as a statement; lakecompat
then sent each setting as a `SET` statement. Each statement is a round trip that HiveServer2
compiles and runs as an operation of its own (`USE` also asks the Metastore for the database).
HiveServer2's open request takes the same things in its configuration map: `set:KEY` is applied
by the same code as `SET KEY=...` (`HiveSessionImpl.setVariable`, a copy of Hive's
`SetProcessor`, registering the key as overridden the same way), and `use:DATABASE` makes it
the session's current database. The session is the one the statements would have made.
"""

from __future__ import annotations

from pyhive import hive
from TCLIService import TCLIService, ttypes
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

#: PyHive's protocol version (columnar results, binary as bytes).
PROTOCOL = ttypes.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V6


class Session(hive.Connection):
    """A NOSASL session whose `settings` are SET and whose `database` is current from the
    start. `configuration` holds plain keys HiveServer2 sets without registering them (as
    PyHive's `configuration` does). Otherwise a PyHive connection: `cursor()`, `close()`."""

    def __init__(
        self,
        host: str,
        port: int,
        database: str,
        settings: dict[str, str],
        configuration: dict[str, str],
        username: str = "lakecompat",
    ) -> None:
        # PyHive's own __init__ would run `USE <database>`: this one does what it does for
        # NOSASL, without that statement.
        self._transport = TTransport.TBufferedTransport(TSocket.TSocket(host, port))
        self._client = TCLIService.Client(TBinaryProtocol.TBinaryProtocol(self._transport))
        request = ttypes.TOpenSessionReq(
            client_protocol=PROTOCOL,
            configuration={
                **configuration,
                **{f"set:{key}": value for key, value in settings.items()},
                f"use:{database}": database,
            },
            username=username,
        )
        self._transport.open()
        try:
            response = self._client.OpenSession(request)
            hive._check_status(response)
            if response.serverProtocolVersion != PROTOCOL:
                raise hive.OperationalError(
                    f"HiveServer2 answered with protocol {response.serverProtocolVersion}, "
                    f"not {PROTOCOL}"
                )
        except BaseException:
            self._transport.close()
            raise
        self._sessionHandle = response.sessionHandle
