"""Known outcomes checked against runs: entries no cell needs, entries wider than one cause.

`lakecompat known RUN ... --check expectations/` judges the cells of each run (one run per
version point) with the reviewed entries and reports:

- **stale** entries: their versions include a run's (the run has cells of their format and
  engine inside their bounds, and of their scenarios and shapes), yet no cell of any run that
  they judge has their outcome: the failure they describe is gone (their cells pass, or fail
  otherwise), or an earlier entry speaks for all their cells;
- **too wide** entries: the `WRONG` and `ERROR` cells they judge of one scenario (of a
  `WRONG` cell: and query shape) fail in more than one way (`failure_class`), so one reason
  speaks for several causes and a new failure could hide under it. `UNSUPPORTED` and
  `REJECTED` entries say what an engine or the writer does not do, whatever the attempt met,
  so they are not held to one failure;
- entries no run could check: their versions are none of the runs' (another version point,
  an engine the runs did not start), or the runs read none of their scenarios or query
  shapes (a run of some scenarios checks the entries about those).
"""

from __future__ import annotations

import fnmatch
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from lakecompat.harness.results.causes import own_reason
from lakecompat.harness.results.expectations import Judge, Known
from lakecompat.harness.results.outcomes import Cell, Outcome

#: Exception class names (Java's with their packages, Python's) and Trino's error codes.
_CLASS = re.compile(
    r"\b(?:[a-z_][\w$]*\.)*[A-Z][\w$]*(?:Exception|Error)\b"
    r"|\b[A-Z][a-z]+(?:[A-Z][a-z]*)+(?=: )|\b[A-Z][A-Z_]{3,}\b(?=:)"
)
#: How the JVM words a NoSuchMethodError: the missing method's signature, quoted.
_MISSING_METHOD = re.compile(r"'[\w.$<>\[\]]+ [\w.$]+\.[\w$<>]+\([^)]*\)'")
#: What belongs to one table in a reason: column names, literals, counts, examples.
_OWN = re.compile(r"`[^`]*`|'[^']*'|\([^)]*\)|\b\d+(?:\.\d+)?\b")
#: The project's own wrapper of every failed query.
_WRAPPER = "QueryError"
#: Wrappers whose first line may carry no cause of their own (Spark's "Encountered error
#: while reading file ..."): the cause is then the innermost `Caused by:` of the evidence.
_BARE_WRAPPERS = ("org.apache.spark.SparkException",)
_CAUSED_BY = re.compile(r"^Caused by: ([\w.$]+)", re.MULTILINE)
#: An engine's error code (Trino's and Presto's `HUDI_CURSOR_ERROR`, `GENERIC_INTERNAL_ERROR`):
#: the path a query took more than its cause, which the Java exception under it names.
_ERROR_CODE = re.compile(r"^[A-Z][A-Z_]{3,}$")
#: The first Java exception of a failure trace (the line that starts it).
_TRACE_TOP = re.compile(r"^([\w.$]+(?:Exception|Error))\b", re.MULTILINE)
#: The exceptions that only carry an error code: the code then says more than they do.
_CODE_CARRIERS = ("com.facebook.presto.spi.PrestoException", "io.trino.spi.TrinoException")
#: The outcomes an entry is checked to give one cause for.
_FINDINGS = (Outcome.WRONG, Outcome.ERROR)


def failure_class(cell: Cell) -> str:
    """How a failing cell fails, comparable across tables and scenarios: for an `ERROR`, the
    innermost exception (or error code) its reason names, the cause its wrappers carry (they
    differ with the path a query took: HiveServer2's fetch, a MapReduce task, the compiler);
    for a `WRONG`, its kinds of difference without the columns, values and counts."""
    reason = own_reason(cell.reason)
    if cell.outcome is Outcome.WRONG:
        parts = [" ".join(_OWN.sub("", p).split(":")[0].split()) for p in reason.split("; ")]
        # "...: got a, b; expected b, a": the columns of the part before.
        kinds = {p for p in parts if not p.startswith(("expected ", "got "))}
        return "WRONG: " + "; ".join(sorted(kinds))
    first = reason.splitlines()[0] if reason else ""
    names = [n for n in _CLASS.findall(first) if n != _WRAPPER]
    if not names and _MISSING_METHOD.search(first):
        names = ["java.lang.NoSuchMethodError"]  # Hive 4 gives the message without the class
    said = names[-1] if names else " ".join(_OWN.sub("", first).split())
    evidence = cell.evidence.error or ""
    causes = _CAUSED_BY.findall(evidence)
    if said in _BARE_WRAPPERS and causes:
        said = causes[-1]
    elif _ERROR_CODE.match(said):
        # One cause reaches Presto through its Hudi page source, its Hive record cursor or its
        # own code, each with a code of its own: the exception at the root of the trace.
        trace = evidence.split("\n", 1)[1] if "\n" in evidence else ""
        tops = _TRACE_TOP.findall(trace)
        root = causes[-1] if causes else (tops[0] if tops else "")
        if root and root not in _CODE_CARRIERS:
            said = root
    return f"{cell.outcome.value}: {said}"


@dataclass
class Review:
    """What a check of known outcomes against runs found."""

    entries: int = 0
    stale: list[Known] = field(default_factory=list)
    #: Entry -> its cells' failure classes, each with how many cells and one cell's id.
    too_wide: list[tuple[Known, dict[str, tuple[int, str]]]] = field(default_factory=list)
    unchecked: list[Known] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.stale and not self.too_wide


def review(known: list[Known], runs: list[list[Cell]]) -> Review:
    """Check `known` against the cells of `runs` (one per version point)."""
    judged: dict[int, list[Cell]] = defaultdict(list)
    checked: set[int] = set()
    for cells in runs:
        judge = Judge(known)
        # One cell per format, engine and versions: all an entry's bounds look at.
        by_engine: dict[tuple[str, str], dict[str, Cell]] = defaultdict(dict)
        covered: dict[tuple[str, str], _Covered] = defaultdict(_Covered)
        for cell in cells:
            entry = judge(cell).known
            if entry is not None:
                judged[id(entry)].append(cell)
            versions = f"{cell.engine_version} {cell.reader_hudi} {sorted(cell.writer.items())}"
            by_engine[(cell.format, cell.engine)].setdefault(versions, cell)
            covered[(cell.format, cell.engine)].add(cell)
        for entry in known:
            if id(entry) not in checked and _checked_by(entry, by_engine, covered):
                checked.add(id(entry))
    found = Review(entries=len(known))
    for entry in known:
        if id(entry) not in checked:
            found.unchecked.append(entry)
        elif not any(cell.outcome is entry.outcome for cell in judged.get(id(entry), [])):
            found.stale.append(entry)
        elif entry.outcome in _FINDINGS:
            mixed = _mixed(judged[id(entry)])
            if mixed:
                found.too_wide.append((entry, mixed))
    return found


def _mixed(cells: list[Cell]) -> dict[str, tuple[int, str]]:
    """The failure classes of the scenarios among `cells` that fail in more than one way
    (each with how many cells and one cell's name); empty when each fails in one way. Within
    a scenario only: how a cause shows depends on the change (a column missing after a drop,
    an extra one after an add), so one cause may well differ in kind across scenarios; and a
    wrong answer within one query shape."""
    by_scenario: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    example: dict[str, str] = {}
    for cell in cells:
        if cell.outcome in _FINDINGS:
            kind = failure_class(cell)
            # A wrong answer is said in the words of its shape (a filter's missing rows, a
            # projection's wrong values): compared within one shape. An error's exceptions
            # are the same words whatever the shape.
            shape = cell.shape if cell.outcome is Outcome.WRONG else ""
            by_scenario[(cell.scenario, shape)][kind] += 1
            example.setdefault(kind, _name(cell))
    mixed: Counter[str] = Counter()
    for classes in by_scenario.values():
        if len(classes) > 1:
            mixed.update(classes)
    return {kind: (count, example[kind]) for kind, count in mixed.most_common()}


@dataclass
class _Covered:
    """The scenarios and query shapes a run read with one engine (a run of some scenarios,
    or of some shapes, checks no entry about the others)."""

    scenarios: set[str] = field(default_factory=set)
    shapes: set[str] = field(default_factory=set)

    def add(self, cell: Cell) -> None:
        self.scenarios.add(cell.scenario)
        self.shapes.add(cell.shape)

    def names(self, entry: Known) -> bool:
        """Whether the run has a cell of one of the entry's scenarios and of one of its
        shapes (not necessarily the same cell)."""
        shapes = entry.values("shape")
        return any(shape == "*" or shape in self.shapes for shape in shapes) and any(
            fnmatch.fnmatchcase(scenario, glob)
            for glob in entry.values("scenario")
            for scenario in self.scenarios
        )


def _checked_by(
    entry: Known,
    by_engine: dict[tuple[str, str], dict[str, Cell]],
    covered: dict[tuple[str, str], _Covered],
) -> bool:
    """Whether the run (a cell of each table format, engine and versions) has a cell of the
    entry's format and engine inside its bounds, and read one of its scenarios and shapes."""
    formats, engines = entry.values("format"), entry.values("engine")
    return any(
        covered[key].names(entry) and any(entry.in_scope(cell) for cell in cells.values())
        for key, cells in by_engine.items()
        if (key[0] in formats or "*" in formats) and (key[1] in engines or "*" in engines)
    )


def render(found: Review, folder: Path) -> str:
    """The review as text: counts first, then each stale and too-wide entry by its file and
    position (`known.yaml#known[12]`)."""
    lines = [
        f"{found.entries} entries: {len(found.stale)} stale, {len(found.too_wide)} too wide, "
        f"{len(found.unchecked)} not checked (their versions, engines, scenarios or shapes are "
        "in none of the runs given)"
    ]
    if found.stale:
        lines += ["", "Stale (the runs read their cells, and none has their outcome):"]
        lines += [f"- {_where(entry, folder)}: {_said(entry)}" for entry in found.stale]
    if found.too_wide:
        lines += ["", "Too wide (their cells fail in different ways):"]
        for entry, classes in found.too_wide:
            lines.append(f"- {_where(entry, folder)}: {_said(entry)}")
            for kind, (count, example) in classes.items():
                lines.append(f"    {count} cell(s): {kind[:160]}  (e.g. {example})")
    return "\n".join(lines) + "\n"


def _name(cell: Cell) -> str:
    """A cell as the reports name it: `hive.mor.snapshot.add_column/after[default]`, and
    its query shape after a slash when it is not `SELECT *`."""
    shape = "" if cell.shape == "all" else f"/{cell.shape}"
    kind = cell.table_kind.replace(" ", ".")
    return f"{cell.engine}.{kind}.{cell.query_type}.{cell.scenario}[{cell.variant}]{shape}"


def _where(entry: Known, folder: Path) -> str:
    return entry.source(folder) or "(entry)"


def _said(entry: Known) -> str:
    text = f"{entry.outcome.value}, {entry.reason}"
    return text if len(text) <= 110 else text[:107] + "..."
