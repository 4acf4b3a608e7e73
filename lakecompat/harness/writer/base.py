"""The writer interface: what a table format implements so that the runner, the oracle and the
reports need not know which format they write.

A writer turns a scenario into a table, once per table type, and says what happened: the
table as readers need to know it (`TableRef`), the step that failed and whether the format
refused it, the statements it ran, and the evidence of its live files (`harness.writer.layout`
describes them from the `DataFile`s a format lists). Hudi is the first format
(`harness.writer.hudi`); a second one is a package beside it and one line in `FORMATS`
(`harness/writer/__init__.py`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from lakecompat.engines.infra.artifacts import MavenArtifact
from lakecompat.engines.table import TableRef
from lakecompat.harness.scenario.model import Scenario
from lakecompat.harness.scenario.schema import Schema


@dataclass
class WriteResult:
    """A written table, or the step that failed and why (`rejected`: a refused schema change)."""

    table: TableRef
    failed_at: str | None = None
    message: str | None = None
    rejected: bool = False
    sql: list[str] | None = None
    step_seconds: list[float] = field(default_factory=list)
    #: The newest completed instant (requested, completed) after the seed rows and each step.
    instants: list[tuple[str, str] | None] = field(default_factory=list)
    #: The table's live files after the steps (`harness.writer.layout.describe`); None when the
    #: writer stopped early.
    files: dict[str, Any] | None = None
    #: True when the table was read from the table cache (`harness.writer.cache`), not written.
    cached: bool = False
    #: True when the writer's engine crashed or a step timed out: not a result of the scenario,
    #: so it is never cached.
    crashed: bool = False

    @property
    def ok(self) -> bool:
        return self.failed_at is None


@dataclass(frozen=True)
class DataFile:
    """One live file: a base file, or a log file's data block (or a block of deletes) of
    Hudi; a data file or a delete file of Iceberg."""

    path: str
    kind: str  # "base" or "log" (Hudi), "data" or "delete" (Iceberg)
    #: Hudi's file group; Iceberg's data file (a delete file: the data file it applies to).
    file_group: str
    #: The commit that wrote it, comparable as text with the writer's `instants`: Hudi's
    #: instant (requested time), Iceberg's data sequence number.
    instant: str
    #: `name type` of each data column in file order, meta columns left out; empty for deletes.
    columns: tuple[str, ...]


T = TypeVar("T")


class TableWriter(ABC):
    """Writes each scenario × table type into a table of its own below `tables_dir`."""

    #: The table format, as `TableRef.format` names it (`hudi`).
    format: ClassVar[str]
    #: Whether a written table reads the same from another folder (Hudi names its files
    #: relative to the table; Iceberg's metadata names them by absolute path, so the table
    #: cache keeps an Iceberg table where it was written and runs read it there).
    relocatable: ClassVar[bool] = True
    #: Whether the writer writes in the run's own Spark session (`RunContext.spark`), which a
    #: Spark reader may share; else in a Spark process of its own.
    writes_in_run_session: ClassVar[bool] = False

    def __init__(self, tables_dir: Path, step_timeout: float = 0) -> None:
        self.tables_dir = tables_dir
        #: Seconds a step may take before the writer's engine is killed (0: no limit).
        self.step_timeout = step_timeout

    @property
    @abstractmethod
    def versions(self) -> dict[str, str]:
        """The writer's releases, recorded in every cell (`{"spark": ..., "hudi": ...}`)."""

    @property
    def settings(self) -> dict[str, Any]:
        """The settings the writer writes with (part of the table cache's key)."""
        return {}

    def table_settings(self, scenario: Scenario) -> dict[str, Any]:
        """The settings the writer writes this scenario's tables with beyond `settings` (part
        of the table cache's key too)."""
        return {}

    @abstractmethod
    def write(self, scenario: Scenario, table_type: str) -> WriteResult:
        """Create the table from the seed rows, then run every step; stop at the first failure
        (a refused schema change is `rejected`, a result)."""

    def write_into(self, tables_dir: Path, scenario: Scenario, table_type: str) -> WriteResult:
        """`write`, with the table below `tables_dir` instead of the writer's own folder (where
        the table cache keeps a table that cannot move)."""
        own, self.tables_dir = self.tables_dir, tables_dir
        try:
            return self.write(scenario, table_type)
        finally:
            self.tables_dir = own

    @abstractmethod
    def write_parquet(
        self, name: str, schema: Schema, rows: list[dict[str, Any]], key: str
    ) -> TableRef:
        """A plain Parquet table (no table format), for the engines' control check."""

    @abstractmethod
    def script(self, scenario: Scenario, table_type: str) -> str:
        """A standalone program that writes the same table without lakecompat (`repro`)."""

    @classmethod
    def script_jar(cls, versions: dict[str, str]) -> MavenArtifact:
        """The jar `script` is submitted with, for a writer of these `versions` (a cell's
        `writer`): the format's Spark bundle or runtime."""
        raise NotImplementedError(f"{cls.__name__} has no writer script")

    @classmethod
    def script_needs(cls, versions: dict[str, str]) -> tuple[MavenArtifact, ...]:
        """The jars `script_jar` needs beside it, which `--packages` would bring along (none
        for a format whose Spark jar is a bundle)."""
        return ()

    @classmethod
    def script_pyspark(cls, versions: dict[str, str]) -> str:
        """The PySpark release that runs `script` for a writer of these `versions`, where it
        is not lakecompat's own ("": lakecompat's; Delta 4's is Spark 4's)."""
        return ""

    @classmethod
    def release_words(cls, versions: dict[str, str]) -> str:
        """The format's release of a writer of these `versions`, in a report's words
        (`Hudi 1.2.0`)."""
        raise NotImplementedError(f"{cls.__name__} names no release")

    def in_spark(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(runtime, *args)` in the Spark the writer writes with (`repro` reads the tables
        it compares there)."""
        raise NotImplementedError(f"{type(self).__name__} writes without Spark")

    @classmethod
    def read_back(cls, session: Any, path: Path) -> tuple[list[Any], list[Any]]:
        """The table at `path` as `session` (a Spark session of the writer's, `in_spark`)
        reads it to compare two writes: its data fields (Spark's, bookkeeping columns left
        out) and its rows, each column matched to its files' columns the way the format
        means it to be."""
        raise NotImplementedError(f"{cls.__name__} reads no table back")

    @classmethod
    def not_applicable(cls, scenario: Scenario) -> str | None:
        """Why the scenario has no table in this format (a step only another format has), or
        None."""
        return None

    def holds(self, scenario: Scenario, table_type: str) -> bool:
        """Whether the table is had without writing it (a table cache holds it)."""
        return False

    def prepare(self, scenarios: list[Scenario]) -> None:  # noqa: B027 - most need nothing
        """Start what these scenarios will need (other releases' writers), to warm it up."""

    def close(self) -> None:  # noqa: B027 - most hold nothing
        """Stop whatever the writer started."""
