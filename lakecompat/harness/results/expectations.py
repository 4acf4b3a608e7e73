"""Known outcomes as data: which cells are expected not to pass, and why.

Files `expectations/*.yaml` hold a list `known:` of entries, one per cause. Each entry matches
cells by table format (`hudi` unless it says otherwise, so that no Hudi entry judges another
format), engine, engine version range (per engine where it names several), a table format's
releases in one map per format (`hudi: {release: '>=1.1', table_version: '>=8', reader:
'<1.0'}`: the writer's release, the version it wrote, the release of the format's jars the
reader carried), scenario glob, table type, query type, variant glob and query shape (`all`,
`SELECT *`, unless it says otherwise);
each match field takes one value or a list of values. An entry says the outcome those cells
are known to have, with a reason and, where there is one, an upstream link.
The first matching entry wins; a cell no entry matches is expected to PASS.

A run compares what it measured with what is known: an unexpected failure is a *regression*,
a known failure that now passes is *fixed upstream*.
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from lakecompat.engines import engine_class
from lakecompat.engines.formats import FORMATS, ORIGINAL, format_named
from lakecompat.engines.table import FORMAT_QUERY_TYPES, QUERY_TYPES
from lakecompat.harness.results.outcomes import CELL_FIELDS, Cell, Outcome
from lakecompat.harness.scenario.input_files import (
    InputError,
    field_path,
    first_error,
    read_mapping,
    unknown_field,
)
from lakecompat.harness.scenario.shapes import SHAPES

_RANGE = re.compile(r"^(>=|<=|>|<|==)\s*([0-9][0-9A-Za-z.\-]*)$")
#: A bound on a named value (Delta's column mapping mode, `==name`): equal, as text.
_NAMED = re.compile(r"^(==)\s*([A-Za-z][A-Za-z0-9_\-]*)$")
_ENGINE = re.compile(r"^([a-z][a-z0-9_-]*|\*)$")
TABLE_TYPES = ("cow", "mor")
#: The fields that say which cells an entry matches, each one value (or glob) or a list.
MATCH_FIELDS = ("engine", "format", "scenario", "table_type", "query_type", "variant", "shape")
#: What a format's map of releases in an entry may bound, by format, and the field of a file
#: from before the maps that stands for each (still read): `release` (the writer's release:
#: the format's name), the version the writer wrote (the format's `version_option`) and, for
#: a format whose jars a reader may carry, the release of those jars (`reader`: the cell's
#: `reader_<format>`).
FORMAT_SCOPES: dict[str, dict[str, str]] = {
    f.name: {
        "release": f.name,
        f.version_option: f.version_option,
        **({"reader": f"reader_{f.name}"} if f"reader_{f.name}" in CELL_FIELDS else {}),
    }
    for f in FORMATS.values()
}
#: The version bounds of an entry's cells besides `versions` (per engine), as the flat fields
#: of files from before the maps name them: `hudi`, `table_version`, `reader_hudi`, ...
SCOPE_FIELDS = tuple(flat for keys in FORMAT_SCOPES.values() for flat in keys.values())
_FLAT = {flat: (fmt, key) for fmt, keys in FORMAT_SCOPES.items() for key, flat in keys.items()}

#: A match field as a file gives it: one value or glob, or a list of them (any may match).
Values = str | tuple[str, ...]


class ExpectationError(InputError):
    """An expectations file is invalid; the message names the file and the field."""


class Known(BaseModel):
    """One known outcome: the cells of one cause, the outcome they have and why.

    Each match field holds one value or a list of values (a cell matches when one of them
    does); a cell matches the entry when every field does.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: An engine name, `*`, or a list of engine names.
    engine: Values
    #: The table format of the cells (`engines.table.FORMAT_QUERY_TYPES`): an entry without
    #: one speaks for Hudi tables only, so that a Hudi entry never judges an Iceberg cell.
    format: Values = ORIGINAL
    #: Engine versions: bounds like '>=479,<500' for the one engine named, or a mapping
    #: engine -> bounds for a list of engines (an engine left out: every version).
    versions: str | dict[str, str] = Field(default="", description="empty: every version")
    #: Each table format's version bounds, by format and what they bound (`FORMAT_SCOPES`):
    #: `{"hudi": {"release": ">=1.1", "table_version": ">=8"}}`. A file gives them as one map
    #: per format (`hudi: {release: '>=1.1'}`), or as the flat fields of `SCOPE_FIELDS`.
    releases: dict[str, dict[str, str]] = Field(default_factory=dict)
    #: Scenario ids or globs.
    scenario: Values
    table_type: Values = "*"
    #: Query types of `engines.table.QUERY_TYPES`, or `*`.
    query_type: Values = "*"
    #: Reader variants or globs.
    variant: Values = "*"
    #: Query shapes (`harness.scenario.shapes`): an entry without one speaks for `SELECT *`
    #: only, so that a filter's new failure is never masked by what `SELECT *` is known to do.
    shape: Values = "all"
    outcome: Outcome
    reason: str = Field(min_length=1)
    link: Annotated[str, Field(pattern=r"^https://\S+$")] | None = None
    #: The file, the entry's position in its `known:` list and, for an entry with `cases`,
    #: the case's position in them.
    _source: tuple[Path, int, int | None] | None = PrivateAttr(default=None)

    def __hash__(self) -> int:  # a `versions` mapping is not hashable: hash the file's form
        return hash(json.dumps(self.to_yaml_dict(), sort_keys=True))

    @field_validator(*MATCH_FIELDS, mode="before")
    @classmethod
    def _one_or_a_list(cls, value: Any) -> Any:
        if not isinstance(value, list | tuple):
            return value
        if not value:
            raise ValueError("an empty list matches nothing: give one value or several")
        if not all(isinstance(v, str) for v in value):
            raise ValueError("a list of values expected, each a text")
        twice = sorted({v for v in value if value.count(v) > 1})
        if twice:
            raise ValueError(f"lists {twice[0]!r} twice")
        if len(value) > 1 and "*" in value:
            raise ValueError("'*' matches every value already: give it alone, not in a list")
        return tuple(value)

    @field_validator("engine")
    @classmethod
    def _check_engine(cls, value: Values) -> Values:
        for name in _each(value):
            if not _ENGINE.match(name):
                raise ValueError(f"{name!r} should match pattern '{_ENGINE.pattern}'")
        return value

    @field_validator("format")
    @classmethod
    def _check_format(cls, value: Values) -> Values:
        for name in _each(value):
            if name != "*" and name not in FORMAT_QUERY_TYPES:
                known = ", ".join(FORMAT_QUERY_TYPES)
                raise ValueError(f"unknown table format {name!r}; known: {known} (or '*')")
        return value

    @field_validator("scenario", "variant")
    @classmethod
    def _check_glob(cls, value: Values) -> Values:
        if any(not name for name in _each(value)):
            raise ValueError("an empty name matches nothing")
        return value

    @field_validator("table_type")
    @classmethod
    def _check_table_type(cls, value: Values) -> Values:
        return _one_of(value, (*TABLE_TYPES, "*"))

    @field_validator("query_type")
    @classmethod
    def _check_query_type(cls, value: Values) -> Values:
        for name in _each(value):
            if name != "*" and name not in QUERY_TYPES:
                raise ValueError(
                    f"unknown query type {name!r}; known: {', '.join(QUERY_TYPES)} (or '*')"
                )
        return value

    @field_validator("shape")
    @classmethod
    def _check_shape(cls, value: Values) -> Values:
        return _one_of(value, (*SHAPES, "*"))

    @model_validator(mode="before")
    @classmethod
    def _format_maps(cls, data: Any) -> Any:
        """A format's map (`hudi: {release: '>=1.1'}`) and the flat fields (`hudi: '>=1.1'`,
        `table_version: '>=8'`) as `releases`."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        releases = {fmt: dict(keys) for fmt, keys in dict(data.pop("releases", {})).items()}
        for name in (*FORMAT_SCOPES, *SCOPE_FIELDS):
            if name not in data:
                continue
            value = data.pop(name)
            if isinstance(value, dict) and name in FORMAT_SCOPES:
                allowed = FORMAT_SCOPES[name]
                for key, bounds in value.items():
                    if key not in allowed:
                        raise ScopeError(
                            f"{name}.{key}",
                            f"not a version a {name} map bounds; it bounds {', '.join(allowed)}",
                        )
                    _set_bound(releases, name, key, bounds, f"{name}.{key}")
            elif name in _FLAT:
                fmt, key = _FLAT[name]
                _set_bound(releases, fmt, key, value, name)
        data["releases"] = releases
        return data

    @field_validator("releases")
    @classmethod
    def _check_ranges(cls, value: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        for fmt, keys in value.items():
            for key, bounds in keys.items():
                try:
                    _bounds(bounds)
                except ValueError as exc:
                    raise ValueError(f"{fmt}.{key}: {exc}") from None
        return {fmt: keys for fmt, keys in value.items() if keys}

    @field_validator("versions")
    @classmethod
    def _check_versions(cls, value: str | dict[str, str], info: ValidationInfo) -> Any:
        engines = _each(info.data.get("engine", ()))
        if isinstance(value, str):
            if value and "*" in engines:
                raise ValueError("'versions' needs one engine; with engine '*' use 'hudi' instead")
            if value and len(engines) > 1:
                raise ValueError(
                    "a range speaks for one engine: with several engines, give a mapping "
                    "engine: range (e.g. {trino: '>=479'})"
                )
            return _bounds(value)
        if not value:  # no engine bounded: every version
            return ""
        for name, bounds in value.items():
            if name not in engines:
                raise ValueError(f"names engine {name!r}, which the entry's 'engine' does not list")
            _bounds(bounds)
        return value

    def values(self, field: str) -> tuple[str, ...]:
        """A match field's values, one or several."""
        return _each(getattr(self, field))

    def bound(self, field: str) -> str:
        """The bounds of a scope field (`SCOPE_FIELDS`: `hudi`, `table_version`, ...); "" for
        every version."""
        fmt, key = _FLAT[field]
        return self.releases.get(fmt, {}).get(key, "")

    def engine_versions(self, engine: str) -> str:
        """The bounds on the versions of `engine` ("" for every version)."""
        if isinstance(self.versions, dict):
            return self.versions.get(engine, "")
        return self.versions

    def matches(self, cell: Cell) -> bool:
        return self.names_key(cell) and self.in_scope(cell)

    def names_key(self, cell: Cell) -> bool:
        """Whether the entry's match fields name the cell's key (its versions aside)."""
        return (
            _listed(self.format, cell.format)
            and _listed(self.engine, cell.engine)
            and _globbed(self.scenario, cell.scenario)
            and _listed(self.table_type, cell.table_type)
            and _listed(self.query_type, cell.query_type)
            and _globbed(self.variant, cell.variant)
            and _listed(self.shape, cell.shape)
        )

    def in_scope(self, cell: Cell) -> bool:
        """Whether the cell's versions are within the entry's bounds."""
        if not in_range(cell.engine_version, self.engine_versions(cell.engine)):
            return False
        return all(
            in_range(scope_value(cell, fmt, key), bounds)
            for fmt, keys in self.releases.items()
            for key, bounds in keys.items()
        )

    def place(self) -> tuple[Path, str]:
        """The file the entry stands in and where in it: `known[12]`, `known[3].cases[1]`."""
        if not self._source:
            return Path("?"), "known[0]"
        path, number, case = self._source
        return path, f"known[{number}]" + ("" if case is None else f".cases[{case}]")

    def source(self, folder: Path) -> str | None:
        """Where the entry stands, below `folder`: `known.yaml#known[12]` (None: not read
        from a file)."""
        if not self._source:
            return None
        path, at = self.place()
        return f"{path.relative_to(folder).as_posix()}#{at}"

    def to_yaml_dict(self) -> dict[str, Any]:
        """The entry as written in a file: defaults left out, lists as lists, each format's
        version bounds in one map before `scenario` (`hudi: {release: '>=1.1'}`)."""
        dumped = self.model_dump(mode="json", exclude_defaults=True)
        releases = dumped.pop("releases", {})
        found: dict[str, Any] = {}
        for key, value in dumped.items():
            if key == "scenario":  # the maps come before it, where the flat fields stood
                found |= _format_maps(releases)
            found[key] = value
        return found


def _format_maps(releases: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """Each format's bounds as its map, in the registry's order and its keys' order."""
    return {
        fmt: {key: releases[fmt][key] for key in keys if key in releases[fmt]}
        for fmt, keys in FORMAT_SCOPES.items()
        if releases.get(fmt)
    }


class ScopeError(ValueError):
    """A format's version bound an entry gives wrong: `where` is the field as the file gives
    it (`hudi`, `hudi.table_version`)."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(message)
        self.where = where


def _set_bound(
    releases: dict[str, dict[str, str]], fmt: str, key: str, bounds: Any, where: str
) -> None:
    if not isinstance(bounds, str):
        raise ScopeError(where, "a version bound like '>=1.1' expected")
    if bounds and releases.get(fmt, {}).get(key, bounds) != bounds:
        raise ScopeError(where, "bounds a version another field of the entry bounds too")
    try:
        _bounds(bounds)
    except ValueError as exc:
        raise ScopeError(where, str(exc)) from None
    if bounds:
        releases.setdefault(fmt, {})[key] = bounds


def scope_value(cell: Cell, table_format: str, key: str) -> str:
    """The version of `cell` an entry's `table_format` map bounds with `key`: the writer's
    release of the format, the version it wrote, or the release of the format's jars the
    reader carried ("" where the cell has none)."""
    if key == "release":
        return cell.writer.get(table_format, "")
    if key == "reader":
        return str(getattr(cell, f"reader_{table_format}", ""))
    return format_named(table_format).written_version(cell.writer)


def _each(value: Values) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else value


def _listed(value: Values, name: str) -> bool:
    """Whether `name` is one of `value`'s names, or `value` is `*`."""
    return value in ("*", name) if isinstance(value, str) else name in value


def _globbed(value: Values, name: str) -> bool:
    """Whether `name` matches one of `value`'s globs."""
    return any(fnmatch.fnmatchcase(name, glob) for glob in _each(value))


def _one_of(value: Values, allowed: tuple[str, ...]) -> Values:
    for name in _each(value):
        if name not in allowed:
            spelled = [repr(a) for a in allowed]
            raise ValueError(f"Input should be {', '.join(spelled[:-1])} or {spelled[-1]}")
    return value


def _bounds(value: str) -> str:
    bound_parts(value)
    return value


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    known: list[dict[str, Any]] = Field(default_factory=list, max_length=10_000)


#: The fields a case of an entry may give (`cases`): which cells, never what is said of them.
CASE_FIELDS = tuple(dict.fromkeys((*MATCH_FIELDS, "versions", *FORMAT_SCOPES, *SCOPE_FIELDS)))


def expanded(item: dict[str, Any]) -> list[tuple[int | None, dict[str, Any]]]:
    """An entry as a file gives it, as the entries it stands for: itself, or one per case of
    its `cases` (each with the entry's other fields), numbered. ValueError (with the field's
    path) for cases that are not a list of mappings of match fields, or that give a field the
    entry gives too."""
    if "cases" not in item:
        return [(None, item)]
    cases = item["cases"]
    shared = {k: v for k, v in item.items() if k != "cases"}
    if not isinstance(cases, list) or not cases:
        raise _CaseError("cases", "a list of cases expected, each a mapping of match fields")
    found = []
    for number, case in enumerate(cases):
        if not isinstance(case, dict) or not case:
            raise _CaseError(f"cases[{number}]", "a mapping of match fields expected")
        for key in case:
            if key not in CASE_FIELDS:
                allowed = ", ".join(CASE_FIELDS)
                raise _CaseError(
                    f"cases[{number}].{key}", f"a case gives only which cells ({allowed})"
                )
            if key in shared:
                raise _CaseError(
                    f"cases[{number}].{key}",
                    "given by the entry too: give it once, there or in each case",
                )
        found.append((number, {**shared, **case}))
    return found


class _CaseError(ValueError):
    """A malformed `cases` list: the path of the field below the entry, and what is wrong."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(message)
        self.where = where


def in_range(version: str, bounds: str) -> bool:
    """Whether a dotted version satisfies every comma-separated bound (a version without
    numbers, such as "" or "?", satisfies none), or a named value (`name`) its bound
    (`==name`)."""
    parts = bound_parts(bounds)
    if any(_NAMED.match(f"{op}{limit}") for op, limit in parts):
        return all(version == limit for _, limit in parts)
    if bounds.strip() and not _numbers(version):
        return False
    for op, limit in parts:
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


def bound_parts(bounds: str) -> list[tuple[str, str]]:
    """The (operator, version) of each comma-separated bound (ValueError for one that is
    not a bound)."""
    parts = []
    for part in filter(None, (p.strip() for p in bounds.split(","))):
        match = _RANGE.match(part) or _NAMED.match(part)
        if match is None:
            raise ValueError(
                f"{part!r} is not a version bound like '>=479' or '<1.2' (or a name, '==name')"
            )
        parts.append((match.group(1), match.group(2)))
    return parts


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
            items = _File.model_validate(data).known
        except ValidationError as exc:
            first = first_error(exc)
            loc = first["loc"]
            if first["type"] == "extra_forbidden":
                raise ExpectationError(path, "", unknown_field(_File, loc)) from None
            raise ExpectationError(path, field_path(loc), first["msg"]) from None
        for number, item in enumerate(items):
            entries.extend(_entries_of(path, number, item))
    return entries


def _entries_of(path: Path, number: int, item: dict[str, Any]) -> list[Known]:
    """The entries one item of a file's `known:` list stands for (one per case), validated;
    an error names the field, in the case that gives it."""
    at = f"known[{number}]"
    try:
        cases = expanded(item)
    except _CaseError as exc:
        raise ExpectationError(path, f"{at}.{exc.where}", str(exc)) from None
    found = []
    for case, fields in cases:
        try:
            entry = Known.model_validate(fields)
        except ValidationError as exc:
            first = first_error(exc)
            loc = first["loc"]
            cause = (first.get("ctx") or {}).get("error")
            if isinstance(cause, ScopeError):  # a format's bound: its field, as the file gives it
                loc, first["msg"] = (*loc, *cause.where.split(".")), str(cause)
            given = item.get("cases", [{}])[case] if case is not None else {}
            place = f"{at}.cases[{case}]" if loc and loc[0] in given else at
            if first["type"] == "extra_forbidden":
                raise ExpectationError(path, place, unknown_field(Known, loc)) from None
            raise ExpectationError(path, field_path((place, *loc)), first["msg"]) from None
        entry._source = (path, number, case)
        found.append(entry)
    return found


def check_references(entries: list[Known], scenario_ids: list[str], engines: list[str]) -> None:
    """Every entry names known engines, scenario globs that each match a scenario file and
    variant globs that each match a variant of an engine it names, and no entry repeats an
    earlier one (it could never match: the first match wins)."""
    seen: dict[str, str] = {}
    variants = reader_variants(engines)
    for entry in entries:
        path, at = entry.place()
        for name in entry.values("engine"):
            if name != "*" and name not in engines:
                raise ExpectationError(
                    path,
                    f"{at}.engine",
                    f"unknown engine {name!r}; known: {', '.join(engines)} (or '*')",
                )
        for glob in entry.values("scenario"):
            if not any(fnmatch.fnmatchcase(s, glob) for s in scenario_ids):
                raise ExpectationError(path, f"{at}.scenario", f"{glob!r} matches no scenario file")
        _check_variants(entry, variants, f"{at}.variant", path)
        where = json.dumps({k: v for k, v in entry.to_yaml_dict().items() if k not in _SAID})
        if where in seen:
            raise ExpectationError(
                path,
                at,
                f"matches the same cells as {seen[where]}, which wins; remove one",
            )
        seen[where] = f"{path.name} {at}"


#: What an entry says of its cells, as opposed to which cells it matches.
_SAID = ("outcome", "reason", "link")


def reader_variants(engines: list[str]) -> dict[tuple[str, str], tuple[str, ...]]:
    """The variants each engine reads each of its formats under, keyed (engine, format), with
    the format's filter controls, each turning one path off (`+pushdown_off`,
    `+data_skipping_off`)."""
    found: dict[tuple[str, str], tuple[str, ...]] = {}
    for name in engines:
        for reading in engine_class(name).readings:
            plain = reading.variants
            controls = [c.name for v in plain for c in reading.filter_controls(v)]
            names = list(dict.fromkeys([v.name for v in plain] + controls))
            found[(name, reading.format)] = tuple(names)
    return found


def _check_variants(
    entry: Known, variants: dict[tuple[str, str], tuple[str, ...]], field: str, path: Path
) -> None:
    """Each variant glob of `entry` matches a variant of an engine and format it names."""
    named = [
        names
        for (engine, table_format), names in variants.items()
        if _listed(entry.engine, engine) and _listed(entry.format, table_format)
    ]
    for glob in entry.values("variant"):
        if named and not any(fnmatch.fnmatchcase(v, glob) for names in named for v in names):
            raise ExpectationError(
                path, field, f"{glob!r} matches no variant of the engines and formats it names"
            )


def to_records(entries: list[Known], folder: Path) -> list[dict[str, Any]]:
    """Entries as plain data for the run folder, each with the file and index it came from."""
    records = []
    for entry in entries:
        record: dict[str, Any] = entry.to_yaml_dict()
        source = entry.source(folder)
        if source:
            record["source"] = source
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
                    if _listed(k.format, cell.format) and _listed(k.engine, cell.engine)
                ]
            found = [k for k in pool if _globbed(k.scenario, cell.scenario)]
            self._by_scenario[key] = found
        return found


def exit_status(judged: list[Judged], strict: bool = False) -> int:
    """0 every cell as expected, 1 regressions (or, when strict, fixed upstream too),
    2 an engine failed (a cell is ENGINE_FAILED)."""
    if any(j.cell.outcome is Outcome.ENGINE_FAILED for j in judged):
        return 2
    failing = {Verdict.REGRESSION, Verdict.FIXED_UPSTREAM} if strict else {Verdict.REGRESSION}
    return 1 if any(j.verdict in failing for j in judged) else 0
