"""What the engines of one run share: the run folder, Spark, the Hive Metastore and the tables
registered in it."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lakecompat.engines.attached import DEFAULT_DATABASE, AttachedMetastore, Attachments
from lakecompat.engines.infra.ports import service_port
from lakecompat.engines.metastore.service import HiveMetastore, hive_release
from lakecompat.engines.metastore.tables import drop_database, register_over_thrift
from lakecompat.engines.releases import Releases
from lakecompat.engines.table import TableRef

if TYPE_CHECKING:
    from lakecompat.engines.spark.runtime import SparkRuntime


#: Folders of the run folder that hold the shared services' state (the Metastore's database and
#: warehouse, Spark's scratch), and the part of them a completed run deletes.
SHARED_STATE_FOLDERS = ("hive-metastore", "warehouse", "spark")
SHARED_SCRATCH_FOLDERS = ("hive-metastore/metastore_db", "warehouse", "spark")


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
    #: The table formats the run writes: an engine that reads several starts what each needs.
    formats: tuple[str, ...] = ("hudi",)
    #: The run's releases (`engines.releases`): every engine's and format's it names.
    releases: Releases = field(default_factory=Releases)
    #: Whether the run reads filters with pushdown off too: an engine that needs a catalog or
    #: setup of its own for that (Trino) starts it only then.
    pushdown_off: bool = True
    _metastore: HiveMetastore | AttachedMetastore | None = None
    #: Tables as they are currently registered in the Metastore, by table name.
    registered: dict[str, TableRef] = field(default_factory=dict)
    #: How often the Metastore was (re)started; engines started before a restart reconnect.
    metastore_generation: int = 0
    #: Engines start in parallel: the first to need the Metastore starts it, the others wait.
    _metastore_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: Held while the Metastore is made (its address chosen), not while it starts.
    _address_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _metastore_started: bool = False
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
        metastore = self._metastore_made()
        with self._metastore_lock:
            if not self._metastore_started:
                metastore.start()
                if self.database != DEFAULT_DATABASE:
                    self.removals.append(lambda: drop_database(metastore.uri, self.database))
                self._metastore_started = True
            return metastore

    @contextlib.contextmanager
    def metastore_starting(self) -> Iterator[Future[HiveMetastore | AttachedMetastore]]:
        """For an engine that connects to the Metastore only when it queries (Trino, Presto),
        so that its JVM can start while the Metastore starts: the Metastore's start on a
        thread of its own (or another engine's), waited for on leaving the block."""
        with ThreadPoolExecutor(1, thread_name_prefix="metastore") as beside:
            started = beside.submit(self.metastore)
            yield started
            started.result()

    def metastore_address(self) -> str:
        """Where the Metastore listens (or will: its port is chosen before it starts), for an
        engine that connects to it only when it queries (Trino) and so can start beside it;
        `metastore()` starts it, or waits for its start."""
        return self._metastore_made().uri

    def _metastore_made(self) -> HiveMetastore | AttachedMetastore:
        """The Metastore of the run, not necessarily started."""
        with self._address_lock:
            if self._metastore is None:
                uri = self.attachments.metastore
                if uri:
                    self._metastore = AttachedMetastore(uri, self.run_dir)
                else:
                    release = hive_release(self.releases)
                    self._metastore = HiveMetastore(self.run_dir, release, service_port())
            return self._metastore

    def metastore_running(self) -> bool:
        """False when the Metastore was started and its process has died."""
        return not self._metastore_started or self._metastore is None or self._metastore.running

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
            self._metastore_started = False
        self.spark.stop()
