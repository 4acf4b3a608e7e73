"""Engines a user already runs, attached to a run instead of started by it.

`Attachments` holds the addresses given on the command line (`--spark-master`, `--trino`,
`--hiveserver2`, `--metastore`, `--warehouse`), checks them before anything starts, and names
what a run creates on shared services: a database and a table folder that carry the run id,
so that two runs against the same engines never see each other's tables.

lakecompat never starts, stops, restarts or kills an attached service. A query that runs too
long is cancelled; a service that stops answering makes the engine's further cells
`ENGINE_FAILED`.
"""

from __future__ import annotations

import contextlib
import re
import secrets
import socket
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

#: The database of a run whose tables live only in services it started itself.
DEFAULT_DATABASE = "default"


class AttachError(ValueError):
    """An attachment option that cannot work; the message names the option."""


@dataclass(frozen=True)
class Attachments:
    """The services a run attaches to (None: lakecompat starts its own)."""

    #: A Spark standalone master, `spark://HOST:PORT`: the writer and Spark reader run there.
    spark_master: str | None = None
    #: A Trino coordinator, `http://HOST:PORT` (or https).
    trino: str | None = None
    #: A HiveServer2, `HOST:PORT` (binary transport, NOSASL).
    hiveserver2: str | None = None
    #: The attached HiveServer2's log file, where it is on this machine: a failed MapReduce
    #: job's cause is read from it, as from lakecompat's own HiveServer2's log.
    hiveserver2_log: Path | None = None
    #: A Hive Metastore, `thrift://HOST:PORT`.
    metastore: str | None = None
    #: A folder every engine can read: the run's tables go to `<warehouse>/<run name>/`.
    warehouse: Path | None = None

    @property
    def any(self) -> bool:
        """Whether anything is attached (then the run's names carry its id)."""
        return any(value is not None for value in asdict(self).values())

    @property
    def catalog_shared(self) -> bool:
        """Whether the run registers tables in a catalog someone else uses."""
        return bool(self.trino or self.hiveserver2 or self.metastore)

    def attaches(self, engine: str) -> bool:
        """Whether the run reads with an engine someone else runs instead of starting it (or,
        for Spark, on someone else's cluster)."""
        attached = {"trino": self.trino, "hive": self.hiveserver2, "spark": self.spark_master}
        return attached.get(engine) is not None

    def record(self) -> dict[str, str]:
        """What `run.json` keeps (a resumed run attaches to the same services)."""
        return {key: str(value) for key, value in asdict(self).items() if value is not None}

    @classmethod
    def from_record(cls, record: dict[str, str] | None) -> Attachments:
        record = dict(record or {})
        paths = {
            key: Path(record.pop(key)) if record.get(key) else None
            for key in ("warehouse", "hiveserver2_log")
        }
        return cls(**record, **paths)

    def check(self, engines: tuple[str, ...]) -> None:
        """Refuse attachments that cannot work, naming the option and what it needs."""
        if self.spark_master is not None:
            host_port("--spark-master", self.spark_master, scheme="spark")
        if self.trino is not None:
            trino_address(self.trino)
            if self.metastore is None:
                raise AttachError(
                    "--trino needs --metastore too: lakecompat registers its tables in the "
                    "Hive Metastore that Trino's `hudi` and `hive` catalogs read"
                )
        if self.hiveserver2 is not None:
            host_port("--hiveserver2", self.hiveserver2)
        if self.hiveserver2_log is not None and self.hiveserver2 is None:
            raise AttachError("--hiveserver2-log names the log of an attached --hiveserver2")
        if self.metastore is not None:
            host_port("--metastore", self.metastore, scheme="thrift")
        for option, engine, value in (
            ("--trino", "trino", self.trino),
            ("--hiveserver2", "hive", self.hiveserver2),
        ):
            if value is not None and engine not in engines:
                raise AttachError(f"{option} attaches {engine}, which this run does not read with")


def check_reachable(attachments: Attachments) -> None:
    """Refuse to start when an attached address accepts no connection (a typo, a service
    that is down): better said now than as a matrix of failed cells."""
    addresses = []
    if attachments.spark_master:
        addresses.append(("--spark-master", attachments.spark_master, "spark"))
    if attachments.metastore:
        addresses.append(("--metastore", attachments.metastore, "thrift"))
    if attachments.hiveserver2:
        addresses.append(("--hiveserver2", attachments.hiveserver2, None))
    for option, value, scheme in addresses:
        host, port = host_port(option, value, scheme=scheme)
        if not answers(host, port):
            raise AttachError(f"{option} {value}: nothing accepts connections there")
    if attachments.trino:
        _, host, port = trino_address(attachments.trino)
        if not answers(host, port):
            raise AttachError(f"--trino {attachments.trino}: nothing accepts connections there")


def warehouse_folder(value: str) -> Path:
    """`--warehouse` as a local folder: a path or a `file:` URI.

    lakecompat reads each table's timeline itself (commit instants, partitions), so the
    folder must be on this machine's file system as well as on the engines'.
    """
    if "://" in value or value.startswith("file:"):
        parts = urlsplit(value)
        if parts.scheme != "file":
            raise AttachError(
                f"--warehouse {value}: only a local folder or a file: URI is supported; "
                f"lakecompat reads the tables' timelines from local files and cannot read "
                f"{parts.scheme}: locations yet"
            )
        value = parts.path
    path = Path(value).expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise AttachError(f"--warehouse {path}: exists and is not a folder")
    return path


def host_port(option: str, value: str, scheme: str | None = None) -> tuple[str, int]:
    """(host, port) of `HOST:PORT` or `SCHEME://HOST:PORT`; a clear error otherwise."""
    spelled = f"{scheme}://HOST:PORT" if scheme else "HOST:PORT"
    text = value
    if scheme is not None:
        if not value.startswith(f"{scheme}://"):
            raise AttachError(f"{option} {value}: expected {spelled}")
        text = value.removeprefix(f"{scheme}://")
    match = re.fullmatch(r"\[?([A-Za-z0-9_.:-]+?)\]?:(\d{1,5})/?", text)
    if not match or not 0 < int(match.group(2)) < 65536:
        raise AttachError(f"{option} {value}: expected {spelled}")
    return match.group(1), int(match.group(2))


def trino_address(value: str) -> tuple[str, str, int]:
    """(http scheme, host, port) of `--trino`: `http://HOST:PORT`, `https://...` or HOST:PORT."""
    scheme = value.split("://", 1)[0] if "://" in value else "http"
    if scheme not in ("http", "https"):
        raise AttachError(f"--trino {value}: expected http://HOST:PORT or https://HOST:PORT")
    host, port = host_port("--trino", value.split("://", 1)[-1])
    return scheme, host, port


def answers(host: str, port: int, timeout: float = 5) -> bool:
    """Whether something accepts connections on host:port."""
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=timeout):
        return True
    return False


def run_name(run_id: str) -> str:
    """The name of what a run creates on shared services: its id and a random part, since
    two machines can start a run in the same second."""
    return f"{run_id}-{secrets.token_hex(3)}"


def database_name(name: str) -> str:
    """The Metastore database of a run (Hive folds names to lower case; no dashes)."""
    return "lakecompat_" + re.sub(r"[^a-z0-9_]", "_", name.lower())


class AttachedMetastore:
    """A Metastore someone else runs: checked on start, never started or stopped."""

    attached = True

    def __init__(self, uri: str, run_dir: Path) -> None:
        self.uri = uri
        self.host, self.port = host_port("--metastore", uri, scheme="thrift")
        #: Where a HiveServer2 lakecompat starts keeps its managed tables (it creates none).
        self.warehouse = run_dir / "warehouse"

    def start(self) -> None:
        """Check that the Metastore answers thrift calls."""
        try:
            with metastore_client(self.uri) as client:
                client.get_all_databases()
        except Exception as exc:  # noqa: BLE001 - re-raised, naming the option
            raise AttachError(
                f"--metastore {self.uri}: no Hive Metastore answers there ({exc})"
            ) from None

    def stop(self) -> None:
        """Nothing: the Metastore is not lakecompat's."""

    @property
    def running(self) -> bool:
        return answers(self.host, self.port)


def metastore_client(uri: str) -> Any:
    """A thrift client of the Metastore at `thrift://HOST:PORT`, as a context manager."""
    from hmsclient import hmsclient

    host, port = host_port("--metastore", uri, scheme="thrift")
    return hmsclient.HMSClient(host=host, port=port)
