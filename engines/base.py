"""The engine contract: what every reader implements, and the shared run context."""

from __future__ import annotations

import contextlib
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa

from engines.attached import DEFAULT_DATABASE, AttachedMetastore, Attachments

if TYPE_CHECKING:
    from engines.hive_metastore import HiveMetastore
    from engines.spark_runtime import SparkRuntime

QUERY_TYPES = ("snapshot", "read_optimized", "incremental", "time_travel")
#: The query types Hudi defines per table type (copy-on-write has no separate read-optimized
#: view); every engine gets a cell for each, UNSUPPORTED where it lacks one.
TABLE_QUERY_TYPES = {
    "cow": ("snapshot", "incremental", "time_travel"),
    "mor": QUERY_TYPES,
}


@dataclass(frozen=True)
class TableRef:
    """A table the writer produced, as a reader needs to know it."""

    name: str
    path: Path
    table_type: str
    key: str
    format: str = "hudi"
    #: (name, Spark SQL type) of every column in the table's latest schema, meta columns included.
    columns: tuple[tuple[str, str], ...] = ()
    #: The commit of the reference state (before the first schema change) as (requested time,
    #: completion time): incremental queries start after it, time travel reads as of it.
    reference_instant: tuple[str, str] | None = None
    #: Partition columns, and the partition folders below `path` (`region=eu`, ...).
    partition_by: tuple[str, ...] = ()
    partitions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Variant:
    """A reader configuration that changes behaviour; each variant is its own matrix cell."""

    name: str
    settings: dict[str, str] = field(default_factory=dict)


@dataclass
class RunContext:
    """What the engines of one run share: the run folder, Spark, and the Hive Metastore."""

    run_dir: Path
    spark: SparkRuntime
    #: Services the run attaches to instead of starting them (`--trino`, `--metastore`, ...).
    attachments: Attachments = field(default_factory=Attachments)
    #: The Metastore database the run's tables are registered in: `default` in services the
    #: run started, a database carrying the run id where it shares a catalog.
    database: str = DEFAULT_DATABASE
    #: The folder the writer's tables go to; None: `tables/` in the run folder.
    tables: Path | None = None
    _metastore: HiveMetastore | AttachedMetastore | None = None
    #: Tables as they are currently registered in the Metastore, by table name.
    registered: dict[str, TableRef] = field(default_factory=dict)
    #: How often the Metastore was (re)started; engines started before a restart reconnect.
    metastore_generation: int = 0
    #: Engines start in parallel: the first to need the Metastore starts it, the others wait.
    _metastore_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: What removes the run's database from attached services (run at the end, see
    #: `remove_database`), added by the engines that created it.
    removals: list[Callable[[], None]] = field(default_factory=list)

    @property
    def tables_dir(self) -> Path:
        return self.tables or self.run_dir / "tables"

    @property
    def log_dir(self) -> Path:
        path = self.run_dir / "logs"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def metastore(self) -> HiveMetastore | AttachedMetastore:
        """The run's Hive Metastore, started on first use and shared by every engine (or the
        attached one, checked on first use)."""
        with self._metastore_lock:
            if self._metastore is None:
                from engines.hive_metastore import HiveMetastore

                uri = self.attachments.metastore
                metastore = (
                    AttachedMetastore(uri, self.run_dir) if uri else HiveMetastore(self.run_dir)
                )
                metastore.start()
                if self.database != DEFAULT_DATABASE:
                    self.removals.append(lambda: _drop_database(metastore.uri, self.database))
                self._metastore = metastore
            return self._metastore

    def metastore_running(self) -> bool:
        """False when the Metastore was started and its process has died."""
        return self._metastore is None or self._metastore.running

    def restart_metastore(self) -> None:
        """Start the Metastore again (same port, same database) after it died; an attached
        one is not lakecompat's to start."""
        if self._metastore is None or isinstance(self._metastore, AttachedMetastore):
            return
        self._metastore.stop()
        self._metastore.start()
        self.metastore_generation += 1
        self.registered.clear()

    def register_in_metastore(self, table: TableRef) -> None:
        """Register `table` in the Metastore over thrift, unless it is registered as it is."""
        if self.registered.get(table.name) == table:
            return
        from engines.metastore_tables import register_over_thrift

        register_over_thrift(self.metastore().uri, table, self.database)
        self.registered[table.name] = table

    def remove_database(self) -> None:
        """Drop the run's database wherever the run created it (attached services keep only
        what they had); the table files are the run's to delete."""
        for removal in self.removals:
            with contextlib.suppress(Exception):  # a service gone by now keeps the database
                removal()
        self.removals.clear()

    def close(self) -> None:
        """Stop the shared services (engines stop their own first)."""
        if self._metastore is not None:
            self._metastore.stop()
            self._metastore = None
        self.spark.stop()


def _drop_database(metastore_uri: str, database: str) -> None:
    from engines.metastore_tables import drop_database

    drop_database(metastore_uri, database)


class Engine(ABC):
    """A query engine that reads the writer's tables; subclasses override only what differs."""

    #: Registry name, also the engine column of every cell.
    name: ClassVar[str]
    #: Query types the engine can run, per table type (`cow`, `mor`).
    query_types: ClassVar[dict[str, tuple[str, ...]]]
    #: Query types the engine lacks but whose table it can still read, with the reason; such
    #: cells are UNSUPPORTED and the evidence shows what reading the table anyway returns.
    probe_only: ClassVar[dict[tuple[str, str], str]] = {}
    #: Whether answers list partition columns after the data columns (the Hive table layout).
    partition_columns_last: ClassVar[bool] = False
    #: Why the engine lacks a query type, where there is more to say than "it has none".
    unsupported: ClassVar[dict[str, str]] = {}
    #: Reader configurations to run every cell under.
    variants: ClassVar[tuple[Variant, ...]] = (Variant("default"),)
    #: Whether `--set` can give the engine settings (an engine without any refuses them).
    takes_settings: ClassVar[bool] = True
    #: Whether the engine runs in the writer's process (Spark): its reads then take turns with
    #: the writes; the other engines read one table while the writer writes the next.
    shares_writer: ClassVar[bool] = False

    def __init__(
        self, context: RunContext, reader_hudi: str | None = None, label: str | None = None
    ) -> None:
        self.context = context
        #: The Hudi release this reader reads with, where it carries Hudi's jars and they are
        #: not the writer's (version skew); None: the writer's release.
        self.reader_hudi = reader_hudi
        #: Names the engine's own files (logs, scratch folder); it differs from `name` when a
        #: run reads with two instances of one engine (two Hudi releases).
        self.label = label or self.name

    @property
    @abstractmethod
    def version(self) -> str:
        """The engine's version, recorded in every cell."""

    @property
    def hudi_version(self) -> str:
        """The Hudi release the engine reads with, where it carries Hudi's jars ("": none)."""
        return ""

    @abstractmethod
    def start(self) -> None:
        """Start (or connect to) the engine; raise with a helpful message if it cannot."""

    def stop(self) -> None:  # noqa: B027 - engines without a process of their own do nothing
        """Stop whatever start() started."""

    def register(self, table: TableRef) -> None:  # noqa: B027 - only catalog-based engines register
        """Make `table` visible to the engine (for example in a metastore)."""

    @abstractmethod
    def read_sql(self, table: TableRef, query_type: str) -> str:
        """The SQL that reads the whole table with this query type."""

    @abstractmethod
    def query(self, sql: str, variant: Variant) -> pa.Table:
        """Run `sql` under `variant` and return the answer as an Arrow table."""

    def log_excerpt(self) -> str:
        """The end of the engine's log, kept as evidence when the engine fails."""
        return ""

    def reproduction(self, table: TableRef, query_type: str, variant: Variant) -> dict[str, str]:
        """Files that let someone run this read without lakecompat (file name → text): the
        table's registration where the engine needs one, the settings, and the SQL."""
        settings = "".join(f"-- setting: {k} = {v}\n" for k, v in variant.settings.items())
        header = f"-- {self.name} {self.version}, variant {variant.name}\n"
        return {"reader.sql": f"{header}{settings}{self.read_sql(table, query_type)};\n"}

    def reproduction_query(self, files: dict[str, str]) -> tuple[str, Variant]:
        """The query and settings written in `reproduction`'s files, read back from the text,
        so that what a reproduction says can be run as it says it."""
        settings = {}
        statement = []
        for line in files["reader.sql"].splitlines():
            if line.startswith("-- setting: "):
                key, _, value = line.removeprefix("-- setting: ").partition(" = ")
                settings[key] = value
            elif not line.startswith("--"):
                statement.append(line)
        return "\n".join(statement).removesuffix(";"), Variant("reproduction", settings)

    @property
    def attached(self) -> bool:
        """Whether the engine is a service someone else runs: never restarted or killed."""
        return False

    def alive(self) -> bool:
        """Whether every process the engine needs still runs (False after a crash)."""
        return True

    def responsive(self) -> bool:
        """Whether the engine still answers (checked after a failed query); by default, alive."""
        return self.alive()

    def kill(self) -> None:
        """Kill the engine's own processes at once (a hung query); `restart` brings it back."""
        self.stop()

    def restart(self) -> None:
        """Start the engine again after a crash or a kill (and the Metastore, if it died)."""
        self.stop()
        if not self.context.metastore_running():
            self.context.restart_metastore()
        self.start()

    @classmethod
    def supports(cls, table_type: str, query_type: str) -> bool:
        return query_type in cls.query_types.get(table_type, ())

    @classmethod
    def unsupported_reason(cls, table_type: str, query_type: str) -> str:
        """The reason of an UNSUPPORTED cell."""
        default = f"{cls.name} has no {query_type} query for {table_type} tables"
        return cls.unsupported.get(query_type, default)


def reference_instant(table: TableRef) -> tuple[str, str]:
    """(requested, completed) time of the table's reference commit.

    Incremental and time-travel queries cannot run without it. Hudi 1.x reads incremental
    ranges by completion time and time travel by requested (instant) time.
    """
    if table.reference_instant is None:
        raise QueryError(f"no completed commit found in {table.path / '.hoodie'}")
    return table.reference_instant


class QueryError(RuntimeError):
    """An engine refused or failed a statement; the message is the engine's own."""


def describe_error(exc: BaseException, limit: int = 400) -> str:
    """`ExceptionClass: first line of the message`, using the Java exception behind Py4J errors."""
    lines = _error_lines(exc)
    first = lines[0] if lines else type(exc).__name__
    return first if len(first) <= limit else first[: limit - 1] + "…"


def error_text(exc: BaseException, lines: int = 5, limit: int = 2000) -> str:
    """The first `lines` lines of an engine's error (the evidence; the reason is its first)."""
    kept = "\n".join(_error_lines(exc)[:lines]) or type(exc).__name__
    return kept if len(kept) <= limit else kept[: limit - 1] + "…"


def _error_lines(exc: BaseException) -> list[str]:
    java = getattr(exc, "java_exception", None)
    text = str(java) if java is not None else f"{type(exc).__name__}: {exc}"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if lines and lines[0].endswith(": None"):
        # A Java exception without a message: where Hudi threw it says more than "None".
        trace = str(getattr(exc, "stackTrace", "") or "").splitlines()
        lines += [line.strip() for line in trace if line.strip()]
        frame = next(
            (
                line[3:]
                for line in lines
                if line.startswith("at org.apache.hudi.") and ".ValidationUtils." not in line
            ),
            None,
        )
        if frame:
            lines[0] = f"{lines[0].removesuffix(': None')} (no message) at {frame}"
    return lines


def log_tail(path: Path, lines: int = 40) -> str:
    """The last `lines` lines of a log file, or "" when it does not exist (yet)."""
    if not path.is_file():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


class MetastoreReader(Engine):
    """An engine with a server process of its own that reads tables through the Metastore.

    It is alive while its process runs and the Metastore it was started with does; after the
    Metastore restarted, the engine restarts too (its sessions knew the old one).
    """

    _generation = 0

    @abstractmethod
    def _process(self) -> Any:
        """The engine's own service (with `running` and `kill()`), or None when stopped."""

    def _remember_metastore(self) -> None:
        """Call from start(): which Metastore generation this start talks to."""
        self._generation = self.context.metastore_generation

    def alive(self) -> bool:
        process = self._process()
        return (
            process is not None
            and process.running
            and self.context.metastore_running()
            and self._generation == self.context.metastore_generation
        )

    def kill(self) -> None:
        process = self._process()
        if process is not None:
            process.kill()
