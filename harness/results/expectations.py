"""Known outcomes as data: which cells are expected not to pass, and why.

Files `expectations/*.yaml` hold a list `known:` of entries. Each entry matches cells by table
format (`hudi` unless it says otherwise, so that no Hudi entry judges another format), engine,
engine version range, the writer's Hudi release and table version, the reader's Hudi jars,
scenario glob, table type, query type, variant glob and query shape
(`all`, `SELECT *`, unless it says otherwise), and says the
outcome those cells are known to have, with a reason and, where there is one, an upstream link.
The first matching entry wins; a cell no entry matches is expected to PASS.

A run compares what it measured with what is known: an unexpected failure is a *regression*,
a known failure that now passes is *fixed upstream*.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from engines.infra.hudi_jars import written_table_version
from engines.table import FORMAT_QUERY_TYPES, QUERY_TYPES
from harness.results.outcomes import Cell, Outcome
from harness.scenario.input_files import (
    InputError,
    field_path,
    first_error,
    read_mapping,
    unknown_field,
)

_RANGE = re.compile(r"^(>=|<=|>|<|==)\s*([0-9][0-9A-Za-z.\-]*)$")


class ExpectationError(InputError):
    """An expectations file is invalid; the message names the file and the field."""


class Known(BaseModel):
    """One known outcome."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    engine: Annotated[str, Field(pattern=r"^([a-z][a-z0-9_-]*|\*)$")]
    #: The table format of the cells (`engines.table.FORMAT_QUERY_TYPES`): an entry without
    #: one speaks for Hudi tables only, so that a Hudi entry never judges an Iceberg cell.
    format: Annotated[str, Field(pattern=r"^([a-z][a-z0-9_-]*|\*)$")] = "hudi"
    versions: str = Field(default="", description="e.g. '>=479,<500'; empty: every version")
    hudi: str = Field(default="", description="Hudi versions the writer used, e.g. '>=1.1'")
    table_version: str = Field(
        default="",
        description="Hudi table versions the writer wrote (the one a run chose, else its "
        "release's own), e.g. '>=8'",
    )
    reader_hudi: str = Field(
        default="", description="Hudi versions of the reader's own Hudi jars, e.g. '<1.0'"
    )
    iceberg: str = Field(
        default="", description="Iceberg versions the writer used (Iceberg tables), e.g. '>=1.12'"
    )
    format_version: str = Field(
        default="", description="Iceberg format versions the writer wrote, e.g. '==3'"
    )
    scenario: str = Field(min_length=1)
    table_type: Literal["cow", "mor", "*"] = "*"
    #: A query type of `engines.table.QUERY_TYPES`, or `*`.
    query_type: str = "*"
    variant: str = "*"
    #: The query shape (`harness.scenario.shapes`): an entry without one speaks for `SELECT *`
    #: only, so that a filter's new failure is never masked by what `SELECT *` is known to do.
    shape: Literal["all", "project", "filter", "range", "partition", "count", "*"] = "all"
    outcome: Outcome
    reason: str = Field(min_length=1)
    link: Annotated[str, Field(pattern=r"^https://\S+$")] | None = None
    _source: tuple[Path, int] | None = PrivateAttr(default=None)

    @field_validator(
        "versions", "hudi", "table_version", "reader_hudi", "iceberg", "format_version"
    )
    @classmethod
    def _check_range(cls, value: str) -> str:
        for part in filter(None, (p.strip() for p in value.split(","))):
            if not _RANGE.match(part):
                raise ValueError(f"{part!r} is not a version bound like '>=479' or '<1.2'")
        return value

    @field_validator("query_type")
    @classmethod
    def _check_query_type(cls, value: str) -> str:
        if value != "*" and value not in QUERY_TYPES:
            raise ValueError(
                f"unknown query type {value!r}; known: {', '.join(QUERY_TYPES)} (or '*')"
            )
        return value

    @field_validator("format")
    @classmethod
    def _check_format(cls, value: str) -> str:
        if value != "*" and value not in FORMAT_QUERY_TYPES:
            known = ", ".join(FORMAT_QUERY_TYPES)
            raise ValueError(f"unknown table format {value!r}; known: {known} (or '*')")
        return value

    @model_validator(mode="after")
    def _versions_need_an_engine(self) -> Known:
        if self.engine == "*" and self.versions:
            raise ValueError("'versions' needs one engine; with engine '*' use 'hudi' instead")
        return self

    def matches(self, cell: Cell) -> bool:
        return (
            self.format in ("*", cell.format)
            and self.engine in ("*", cell.engine)
            and fnmatch.fnmatchcase(cell.scenario, self.scenario)
            and self.table_type in ("*", cell.table_type)
            and self.query_type in ("*", cell.query_type)
            and fnmatch.fnmatchcase(cell.variant, self.variant)
            and self.shape in ("*", cell.shape)
            and in_range(cell.engine_version, self.versions)
            and in_range(cell.writer.get("hudi", ""), self.hudi)
            and in_range(written_table_version(cell.writer), self.table_version)
            and in_range(cell.reader_hudi, self.reader_hudi)
            and in_range(cell.writer.get("iceberg", ""), self.iceberg)
            and in_range(cell.writer.get("format_version", ""), self.format_version)
        )

    def to_yaml_dict(self) -> dict[str, str]:
        """The entry as written in a file: defaults left out."""
        return self.model_dump(mode="json", exclude_defaults=True)


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    known: list[Known] = Field(default_factory=list, max_length=10_000)


def in_range(version: str, bounds: str) -> bool:
    """Whether a dotted version satisfies every comma-separated bound (a version without
    numbers, such as "" or "?", satisfies none)."""
    if bounds.strip() and not _numbers(version):
        return False
    for part in filter(None, (p.strip() for p in bounds.split(","))):
        match = _RANGE.match(part)
        if match is None:
            return False
        op, limit = match.groups()
        left, right = _numbers(version), _numbers(limit)
        holds = {
            ">=": left >= right,
            "<=": left <= right,
            ">": left > right,
            "<": left < right,
            "==": left == right,
        }[op]
        if not holds:
            return False
    return True


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version))


def load_expectations(folder: Path) -> list[Known]:
    """Every entry of every `*.yaml` below `folder`, in file then list order."""
    if not folder.is_dir():
        raise ExpectationError(folder, "", "no such folder of expectation files")
    entries: list[Known] = []
    for path in sorted(folder.rglob("*.yaml")):
        data = read_mapping(path, ExpectationError, "a list `known:`")
        try:
            found = _File.model_validate(data).known
        except ValidationError as exc:
            first = first_error(exc)
            loc = first["loc"]
            if first["type"] == "extra_forbidden":
                message = unknown_field(_File, loc)
                raise ExpectationError(path, field_path(loc[:-1]), message) from None
            raise ExpectationError(path, field_path(loc), first["msg"]) from None
        for number, entry in enumerate(found):
            entry._source = (path, number)
        entries.extend(found)
    return entries


def check_references(entries: list[Known], scenario_ids: list[str], engines: list[str]) -> None:
    """Every entry names a known engine and a scenario glob that matches a scenario file, and
    no entry repeats an earlier one (it could never match: the first match wins)."""
    seen: dict[tuple[str, ...], str] = {}
    for entry in entries:
        path, number = entry._source or (Path("?"), 0)
        if entry.engine != "*" and entry.engine not in engines:
            raise ExpectationError(
                path,
                f"known[{number}].engine",
                f"unknown engine {entry.engine!r}; known: {', '.join(engines)} (or '*')",
            )
        if not any(fnmatch.fnmatchcase(s, entry.scenario) for s in scenario_ids):
            raise ExpectationError(
                path, f"known[{number}].scenario", f"{entry.scenario!r} matches no scenario file"
            )
        where = (entry.format, entry.engine, entry.versions, entry.hudi, entry.table_version)
        where += (entry.reader_hudi, entry.iceberg, entry.format_version)
        where += (entry.scenario,)
        where += (entry.table_type,)
        where += (entry.query_type, entry.variant, entry.shape)
        if where in seen:
            raise ExpectationError(
                path,
                f"known[{number}]",
                f"matches the same cells as {seen[where]}, which wins; remove one",
            )
        seen[where] = f"{path.name} known[{number}]"


def to_records(entries: list[Known], folder: Path) -> list[dict[str, Any]]:
    """Entries as plain data for the run folder, each with the file and index it came from."""
    records = []
    for entry in entries:
        record: dict[str, Any] = entry.to_yaml_dict()
        if entry._source:
            path, number = entry._source
            record["source"] = f"{path.relative_to(folder).as_posix()}#known[{number}]"
        records.append(record)
    return records


def from_records(records: list[dict[str, Any]]) -> list[Known]:
    """Entries back from the run folder's records."""
    return [Known.model_validate({k: v for k, v in r.items() if k != "source"}) for r in records]


class Verdict(StrEnum):
    """How a measured outcome relates to the known one."""

    AS_EXPECTED = "as expected"
    REGRESSION = "regression"  # not PASS and not the known outcome
    FIXED_UPSTREAM = "fixed upstream"  # known not to pass, and now passes


@dataclass(frozen=True)
class Judged:
    """A cell with the known entry that matched it (if any) and the verdict."""

    cell: Cell
    known: Known | None
    verdict: Verdict

    @property
    def expected(self) -> Outcome:
        return self.known.outcome if self.known else Outcome.PASS

    def to_dict(self) -> dict[str, Any]:
        """The cell's fields with `expected`, `verdict` and `known` (its reason and link)."""
        data = self.cell.to_dict()
        data["expected"] = self.expected.value
        data["verdict"] = self.verdict.value
        data["known"] = (
            {"reason": self.known.reason, "link": self.known.link} if self.known else None
        )
        return data


def judge(cells: list[Cell], known: list[Known]) -> list[Judged]:
    """Compare every cell with its known outcome (PASS when no entry matches)."""
    judging = Judge(known)
    return [judging(cell) for cell in cells]


class Judge:
    """Compares one cell at a time with its known outcome (a run judges each cell as it is
    measured), the entries indexed once."""

    def __init__(self, known: list[Known]) -> None:
        self._candidates = _Candidates(known)

    def __call__(self, cell: Cell) -> Judged:
        entry = next((k for k in self._candidates.of(cell) if k.matches(cell)), None)
        expected = entry.outcome if entry else Outcome.PASS
        if cell.outcome is expected:
            verdict = Verdict.AS_EXPECTED
        elif cell.outcome is Outcome.PASS:
            verdict = Verdict.FIXED_UPSTREAM
        else:  # an unexpected failure, or a known failure that now fails differently
            verdict = Verdict.REGRESSION
        return Judged(cell, entry, verdict)


class _Candidates:
    """The entries that can match a cell of a format, engine and scenario, in file order.

    A full run judges some 17,000 cells against some 4,000 entries; trying every entry on
    every cell took about a minute, and most entries name another engine or scenario.
    """

    def __init__(self, known: list[Known]) -> None:
        self.known = known
        self._by_engine: dict[tuple[str, str], list[Known]] = {}
        self._by_scenario: dict[tuple[str, str, str], list[Known]] = {}

    def of(self, cell: Cell) -> list[Known]:
        key = (cell.format, cell.engine, cell.scenario)
        found = self._by_scenario.get(key)
        if found is None:
            pool = self._by_engine.get(key[:2])
            if pool is None:
                pool = self._by_engine[key[:2]] = [
                    k
                    for k in self.known
                    if k.format in ("*", cell.format) and k.engine in ("*", cell.engine)
                ]
            found = [k for k in pool if fnmatch.fnmatchcase(cell.scenario, k.scenario)]
            self._by_scenario[key] = found
        return found


def exit_status(judged: list[Judged], strict: bool = False) -> int:
    """0 every cell as expected, 1 regressions (or, when strict, fixed upstream too),
    2 an engine failed (a cell is ENGINE_FAILED)."""
    if any(j.cell.outcome is Outcome.ENGINE_FAILED for j in judged):
        return 2
    failing = {Verdict.REGRESSION, Verdict.FIXED_UPSTREAM} if strict else {Verdict.REGRESSION}
    return 1 if any(j.verdict in failing for j in judged) else 0
