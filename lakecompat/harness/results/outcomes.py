"""Outcomes and the cell: one engine's verdict on one scenario, table type, query type and
query shape."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from typing import Any

from lakecompat.engines.formats import format_named

#: Added to the reason of a cell whose engine, table type and query type fail already on the
#: baseline (a table without any schema change).
BASELINE_NOTE = "fails without any schema change"
#: Added instead where the baseline fails too, but another way (its own cause follows).
BASELINE_OTHER = "without any schema change it fails otherwise"
#: How the reason of a filtered read that returned fewer rows than match, with no error, starts:
#: the most dangerous outcome the matrix can show (`harness.run.cells.shape_reasons`).
ROWS_LOST = "rows lost without an error"
#: How the reason of a read whose range holds no commit starts (`harness.run.cells.empty_range`).
NOTHING_TO_READ = "nothing to read"


def table_kind(table_format: str, table_type: str, separator: str = " ") -> str:
    """How a table is named to users: its table type (`mor`), after its format where the
    format is named in kinds (`iceberg mor`; `iceberg.mor` with `separator` "." in ids)."""
    return format_named(table_format).kind(table_type, separator)


class Outcome(StrEnum):
    """What happened in a cell (the README's table "Outcomes" says what each means)."""

    PASS = "PASS"
    WRONG = "WRONG"
    ERROR = "ERROR"
    REJECTED = "REJECTED"
    UNSUPPORTED = "UNSUPPORTED"
    ENGINE_FAILED = "ENGINE_FAILED"


@dataclass
class Evidence:
    """What a reader needs to check a verdict: the SQL, a diff sample, an error or log excerpt."""

    sql: str | None = None
    sample: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    log: str | None = None
    #: The table's live files: who wrote them, in which schema (`harness.file_layout`).
    files: dict[str, Any] | None = None


@dataclass
class Cell:
    """One matrix cell, keyed by scenario, table type, query type, engine, variant and writer."""

    scenario: str
    category: str
    title: str
    table_type: str
    query_type: str
    engine: str
    engine_version: str
    variant: str
    settings: dict[str, str]
    writer: dict[str, str]
    outcome: Outcome
    reason: str = ""
    evidence: Evidence = field(default_factory=Evidence)
    seconds: float = 0.0
    #: The Hudi release the reader read with, where it carries Hudi's own jars (Spark: the
    #: writer's bundle; HiveServer2: the jars on its classpath); "" for a reader with its own
    #: Hudi implementation (Trino's connector).
    reader_hudi: str = ""
    #: Where the table came from: "written" by this run, or read from the table "cache"
    #: (written by an earlier run with the same writer); "" in runs before the cache existed.
    table_from: str = ""
    #: What the query selected (`harness.scenario.shapes`): `all` (`SELECT *`, every cell
    #: before shapes existed), `project`, `filter`, `range`, `partition` or `count`.
    shape: str = "all"
    #: The table format the writer wrote (`harness.writer.FORMATS`): `hudi` in every results
    #: file written before lakecompat wrote other formats.
    format: str = "hudi"
    #: Where the engine read: `process`, or `container <image> (<runtime>)` for a run with
    #: `--containers`; "" in runs before containers existed.
    runs_in: str = ""

    @property
    def table_kind(self) -> str:
        """`mor`, or `iceberg mor` for a table of another format than Hudi."""
        return table_kind(self.format, self.table_type)

    @property
    def key(self) -> tuple[str, ...]:
        """The identity of a cell across runs (versions excluded, so upgrades can be diffed)."""
        return (
            self.engine,
            self.table_type,
            self.query_type,
            self.scenario,
            self.variant,
            self.shape,
            self.format,
        )

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["outcome"] = str(self.outcome)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Cell:
        names = cls.__dataclass_fields__
        fields = {k: v for k, v in data.items() if k in names}  # documents carry verdicts too
        fields["outcome"] = Outcome(fields["outcome"])
        fields["evidence"] = Evidence(**fields.get("evidence") or {})
        return cls(**fields)


#: The names of a cell's fields.
CELL_FIELDS = frozenset(f.name for f in fields(Cell))


def table_of(cell: Cell) -> tuple[str, str, str]:
    """The table a cell read: scenario, table format and table type."""
    return (cell.scenario, cell.format, cell.table_type)


@dataclass
class Totals:
    """What a set of cells counts, as a user reads it: the reads by outcome, and the tables
    the writer refused once each (a refused table gives a `REJECTED` cell to every reader,
    query type, variant and shape, which are no findings of their own)."""

    #: The cells that are not `REJECTED`, by outcome (every outcome but `REJECTED`).
    reads: dict[Outcome, int]
    #: The tables of the cells (scenario, format, table type), and those the writer refused.
    tables: int
    refused: int

    @classmethod
    def of(cls, cells: Iterable[Cell]) -> Totals:
        reads = {o: 0 for o in Outcome if o is not Outcome.REJECTED}
        tables: set[tuple[str, str, str]] = set()
        refused: set[tuple[str, str, str]] = set()
        for cell in cells:
            tables.add(table_of(cell))
            if cell.outcome is Outcome.REJECTED:
                refused.add(table_of(cell))
            else:
                reads[cell.outcome] += 1
        return cls(reads, len(tables), len(refused))

    @property
    def read(self) -> int:
        """How many cells read (every cell but the refused tables')."""
        return sum(self.reads.values())

    def outcomes_text(self) -> str:
        """`N pass, N wrong, N error, N unsupported, N engine failed` of the reads."""
        return ", ".join(f"{n} {o.value.lower().replace('_', ' ')}" for o, n in self.reads.items())

    def reads_text(self) -> str:
        """`N reads: N pass, N wrong, N error, N unsupported, N engine failed`."""
        return f"{self.read} read{'' if self.read == 1 else 's'}: {self.outcomes_text()}"

    def refused_text(self) -> str:
        """`N of M tables refused by the writer`."""
        tables = f"{self.tables} table" + ("" if self.tables == 1 else "s")
        return f"{self.refused} of {tables} refused by the writer"


def summary_line(cells: Iterable[Cell]) -> str:
    """`N reads: N pass, N wrong, N error, N unsupported, N engine failed · N of M tables
    refused by the writer`: the reads in the order of the Outcome enum, zero counts included,
    and each table the writer refused once (`Totals`)."""
    totals = Totals.of(cells)
    return f"{totals.reads_text()} · {totals.refused_text()}"
