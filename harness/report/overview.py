"""The overview every report opens with: per table format, operations × engines and the
type-change grids, each cell one engine's default configuration summed up over the table and
query types.

It answers the two questions the source documents answer with one small table each: "which
engines read a renamed column correctly?" (a row per operation, a column per engine) and "is
int → long safe on Trino?" (a grid per engine, rows the type before, columns the type after).
What the writer refused is said once, in the writer's column, not in every reader's cell.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from engines.shape import PUSHDOWN_OFF
from engines.table import QUERY_TYPES
from harness.report.grouping import CATEGORY_ORDER, TYPE_COLUMNS, TYPE_ROWS
from harness.results.expectations import Judged, Verdict
from harness.results.outcomes import BASELINE_NOTE, ROWS_LOST, Outcome

#: What no engine reads: the writer refused the change, or the engine has no such query.
NOT_READ = (Outcome.REJECTED, Outcome.UNSUPPORTED)
#: The worst outcome colours a summary (later is worse).
SEVERITY = (Outcome.PASS, Outcome.WRONG, Outcome.ERROR, Outcome.ENGINE_FAILED)
TABLE_TYPE_SHORT = {"cow": "COW", "mor": "MOR"}
QUERY_TYPE_WORDS = {
    "snapshot": "snapshot",
    "read_optimized": "read-optimized",
    "incremental": "incremental",
    "time_travel": "time travel",
    "time_travel_timestamp": "time travel by timestamp",
    "changelog": "changelog",
}
DEFAULT_FORMAT = "hudi"


@dataclass
class Summary:
    """One overview cell: what an engine's default configuration gives, in a few words."""

    #: "PASS", "WRONG on MOR snapshot", "ERROR on COW; WRONG on MOR", "refused by the writer".
    text: str
    #: The worst outcome of the default configuration; None when nothing was read.
    outcome: Outcome | None
    #: Some table and query types pass while others do not.
    partial: bool = False
    #: Reader variants under which every failing read passes ("" when none does).
    fixed_by: list[str] = field(default_factory=list)
    #: The reason of each failing read, with where it applies.
    reasons: list[str] = field(default_factory=list)
    #: Indexes (into the run's judged cells) of every cell behind the summary, all variants.
    cells: list[int] = field(default_factory=list)
    #: A cell behind it is a regression, or a known failure that now passes.
    regression: bool = False
    fixed_upstream: bool = False
    #: What the engine's filtered, projected and counting queries on the changed column give
    #: (`harness.scenario.shapes`), beside the `SELECT *` reads `text` speaks for; None: the
    #: scenario has no such queries.
    shaped: Summary | None = None

    @property
    def short(self) -> str:
        """The text a grid cell has room for: the outcome, and where it holds if not all."""
        if self.outcome is None:
            return "refused" if self.text.startswith("refused") else self.text
        if self.outcome is Outcome.PASS:
            # "PASS on project · UNSUPPORTED on filter" is too long for a grid cell.
            return "PASS*" if " · " in self.text else self.text
        word = self.outcome.value
        return f"{word}*" if self.partial else word


@dataclass
class OperationRow:
    """One scenario of the overview: the writer's cell and every engine's."""

    scenario: str
    title: str
    category: str
    writer: Summary
    engines: dict[str, Summary]


@dataclass
class Overview:
    """The overview of one table format."""

    format: str
    engines: list[str]
    #: The variant with each engine's own defaults, whose cells the summaries speak for.
    defaults: dict[str, str]
    rows: list[OperationRow]
    #: Per engine, the type-change grid: (type before, type after) → summary.
    grids: dict[str, dict[tuple[str, str], Summary]]
    #: The writer's grid: which type changes it accepts.
    writer_grid: dict[tuple[str, str], Summary]


def default_variants(
    info: dict[str, Any], judged: list[Judged], table_format: str = DEFAULT_FORMAT
) -> dict[str, str]:
    """Each engine's default variant on `table_format`: as `run.json` records it, else its
    first variant."""
    by_format = info.get("default_variants_by_format") or {}
    recorded = by_format.get(table_format)
    if recorded is None:  # runs before other formats recorded Hudi's only
        recorded = info.get("default_variants") or {} if table_format == DEFAULT_FORMAT else {}
    defaults: dict[str, str] = {}
    for row in judged:
        if row.cell.format == table_format:
            engine = row.cell.engine
            defaults.setdefault(engine, recorded.get(engine) or row.cell.variant)
    return defaults


def overviews(info: dict[str, Any], judged: list[Judged]) -> list[Overview]:
    """The overview of every table format in the run, in the order the formats first appear."""
    by_format: dict[str, list[int]] = defaultdict(list)
    for index, row in enumerate(judged):
        by_format[row.cell.format].append(index)
    order = list(info.get("engine_order") or [])
    return [
        _overview(name, judged, indexes, default_variants(info, judged, name), order)
        for name, indexes in by_format.items()
    ]


def is_type_change(scenario: str) -> tuple[str, str] | None:
    """(type before, type after) of a `type_change/<a>_to_<b>` scenario in the grid's layout."""
    category, _, name = scenario.partition("/")
    source, _, target = name.partition("_to_")
    if category == "type_change" and source in TYPE_ROWS and target in TYPE_COLUMNS:
        return source, target
    return None


def _overview(
    name: str, judged: list[Judged], indexes: list[int], defaults: dict[str, str], order: list[str]
) -> Overview:
    by_scenario: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for index in indexes:
        cell = judged[index].cell
        by_scenario[cell.scenario][cell.engine].append(index)
    seen = {judged[i].cell.engine for i in indexes}
    engines = [e for e in order if e in seen] + sorted(seen - set(order))
    rows: list[OperationRow] = []
    grids: dict[str, dict[tuple[str, str], Summary]] = {engine: {} for engine in engines}
    writer_grid: dict[tuple[str, str], Summary] = {}
    for scenario, by_engine in by_scenario.items():
        every = [i for group in by_engine.values() for i in group]
        writer = writer_summary(judged, every)
        summaries = {
            engine: engine_summary(judged, by_engine.get(engine, []), defaults.get(engine, ""))
            for engine in engines
        }
        pair = is_type_change(scenario)
        if pair is None:
            first = judged[every[0]].cell
            rows.append(OperationRow(scenario, first.title, first.category, writer, summaries))
            continue
        writer_grid[pair] = writer
        for engine, summary in summaries.items():
            grids[engine][pair] = summary
    rows.sort(key=lambda r: _category_rank(r.category))
    return Overview(
        name, engines, {e: defaults.get(e, "") for e in engines}, rows, grids, writer_grid
    )


def _category_rank(category: str) -> int:
    """Where a category's rows go: CATEGORY_ORDER first, the others after (a stable sort keeps
    them in the run's order)."""
    return CATEGORY_ORDER.index(category) if category in CATEGORY_ORDER else len(CATEGORY_ORDER)


def writer_summary(judged: list[Judged], indexes: list[int]) -> Summary:
    """The writer's cell: accepted, or refused (on which table types) with its message."""
    refused: dict[str, str] = {}
    table_types: list[str] = []
    for index in indexes:
        cell = judged[index].cell
        if cell.table_type not in table_types:
            table_types.append(cell.table_type)
        if cell.outcome is Outcome.REJECTED:
            refused.setdefault(cell.table_type, cell.reason)
    if not refused:
        return Summary("accepted", Outcome.PASS)
    where = "" if len(refused) == len(table_types) else " on " + _table_types(list(refused))
    reasons = list(dict.fromkeys(refused.values()))
    return Summary(
        f"REJECTED{where}",
        Outcome.REJECTED,
        partial=bool(where),
        reasons=reasons,
        cells=[i for i in indexes if judged[i].cell.outcome is Outcome.REJECTED][:1],
    )


def engine_summary(judged: list[Judged], indexes: list[int], default: str) -> Summary:
    """An engine's cell: its default variant's `SELECT *` over every table and query type it
    read, with its shaped queries beside (`Summary.shaped`)."""
    every = [judged[i] for i in indexes]
    marks = {
        "regression": any(r.verdict is Verdict.REGRESSION for r in every),
        "fixed_upstream": any(r.verdict is Verdict.FIXED_UPSTREAM for r in every),
    }
    if not every:
        return Summary("not run", None, cells=[], **marks)
    shaped = [r for r in every if r.cell.shape != "all"]
    summary = _plain_summary([r for r in every if r.cell.shape == "all"], default, marks)
    summary.cells = list(indexes)
    summary.shaped = shaped_summary(shaped, default) if shaped else None
    return summary


def shaped_summary(rows: list[Judged], default: str) -> Summary:
    """What the default variant's shaped queries give: `PASS`, or which shapes fail how,
    whether rows were lost without an error, and whether they pass with pushdown off."""
    mine = [r for r in rows if r.cell.variant == default]
    read = [r for r in mine if r.cell.outcome not in NOT_READ]
    if not read:
        return Summary("not read", None)
    # A shape the engine has no query for is said, so that PASS speaks for the others only.
    done = {r.cell.shape for r in read}
    lacking = [
        r for r in mine if r.cell.outcome is Outcome.UNSUPPORTED and r.cell.shape not in done
    ]
    unsupported = list(dict.fromkeys(r.cell.shape for r in lacking))
    lacks = f" · UNSUPPORTED on {', '.join(unsupported)}" if unsupported else ""
    lacking_reasons = list(dict.fromkeys(f"{r.cell.shape}: {r.cell.reason}" for r in lacking))
    failing = [r for r in read if r.cell.outcome is not Outcome.PASS]
    if not failing:
        passed = (
            f"PASS on {', '.join(dict.fromkeys(r.cell.shape for r in read))}" if lacks else "PASS"
        )
        return Summary(passed + lacks, Outcome.PASS, reasons=lacking_reasons)
    shapes: dict[Outcome, list[str]] = defaultdict(list)
    for row in sorted(failing, key=lambda r: SEVERITY.index(r.cell.outcome), reverse=True):
        if row.cell.shape not in shapes[row.cell.outcome]:
            shapes[row.cell.outcome].append(row.cell.shape)
    text = "; ".join(f"{o.value} on {', '.join(names)}" for o, names in shapes.items())
    if any(r.cell.reason.startswith(ROWS_LOST) for r in failing):
        text += " · " + ROWS_LOST
    quiet = {
        (r.cell.table_type, r.cell.shape): r.cell.outcome
        for r in rows
        if r.cell.variant == f"{default}{PUSHDOWN_OFF}"
    }
    filters = [r for r in failing if (r.cell.table_type, r.cell.shape) in quiet]
    if filters and all(quiet[(r.cell.table_type, r.cell.shape)] is Outcome.PASS for r in filters):
        text += " · PASS with pushdown off"
    reasons = [
        f"{TABLE_TYPE_SHORT.get(r.cell.table_type, r.cell.table_type)} {r.cell.shape}: "
        f"{r.cell.reason}"
        for r in failing
    ]
    worst = max((r.cell.outcome for r in read), key=SEVERITY.index)
    return Summary(
        text + lacks,
        worst,
        partial=len(failing) < len(read),
        reasons=reasons + lacking_reasons,
    )


def _plain_summary(rows: list[Judged], default: str, marks: dict[str, bool]) -> Summary:
    """The default variant's `SELECT *` cells summed up (the caller adds the cells)."""
    if not rows:
        return Summary("not run", None, **marks)
    mine = [r for r in rows if r.cell.variant == default] or rows
    read = [r for r in mine if r.cell.outcome not in NOT_READ]
    if not read:
        refused = any(r.cell.outcome is Outcome.REJECTED for r in mine)
        text = "refused by the writer" if refused else "no such query"
        return Summary(text, None, **marks)
    failing = [r for r in read if r.cell.outcome is not Outcome.PASS]
    worst = max((r.cell.outcome for r in read), key=SEVERITY.index)
    if not failing:
        return Summary("PASS", Outcome.PASS, **marks)
    text = "; ".join(
        f"{outcome.value}{_where(places, read)}" for outcome, places in _by_outcome(failing).items()
    )
    fixed_by = _fixing_variants(rows, failing, default)
    if fixed_by:
        text += " · PASS with " + " or ".join(fixed_by)
    if all(BASELINE_NOTE in r.cell.reason for r in failing):
        text += " · fails without any schema change too"
    return Summary(
        text,
        worst,
        partial=len(failing) < len(read),
        fixed_by=fixed_by,
        reasons=_reasons(failing),
        **marks,
    )


def _by_outcome(failing: list[Judged]) -> dict[Outcome, list[tuple[str, str]]]:
    places: dict[Outcome, list[tuple[str, str]]] = defaultdict(list)
    for row in sorted(failing, key=lambda r: SEVERITY.index(r.cell.outcome), reverse=True):
        places[row.cell.outcome].append((row.cell.table_type, row.cell.query_type))
    return dict(places)


def _where(places: list[tuple[str, str]], read: list[Judged]) -> str:
    """Where the outcome holds, in the fewest words: "" (every read), " on COW" (every read of
    that table type, none of the other), " on snapshot" (that query type on every table type),
    else " on COW snapshot, MOR read-optimized"."""
    everywhere = {(r.cell.table_type, r.cell.query_type) for r in read}
    chosen = set(places)
    if chosen == everywhere:
        return ""
    table_types = list(dict.fromkeys(t for t, _ in sorted(everywhere)))
    whole = [t for t in table_types if {p for p in everywhere if p[0] == t} <= chosen]
    if chosen == {p for p in everywhere if p[0] in whole}:
        return " on " + _table_types(whole)
    words = []
    for query_type in sorted({q for _, q in chosen}, key=QUERY_TYPES.index):
        read_in = {t for t, q in everywhere if q == query_type}
        failed_in = sorted(t for t, q in chosen if q == query_type)
        word = QUERY_TYPE_WORDS.get(query_type, query_type)
        if set(failed_in) == read_in:
            words.append(word)
        else:
            words += [f"{TABLE_TYPE_SHORT.get(t, t)} {word}" for t in failed_in]
    return " on " + ", ".join(words)


def _fixing_variants(rows: list[Judged], failing: list[Judged], default: str) -> list[str]:
    """The other variants whose cells pass wherever the default's fail."""
    outcome = {(r.cell.variant, r.cell.table_type, r.cell.query_type): r.cell.outcome for r in rows}
    variants = [v for v in dict.fromkeys(r.cell.variant for r in rows) if v != default]
    return [
        variant
        for variant in variants
        if all(
            outcome.get((variant, r.cell.table_type, r.cell.query_type)) is Outcome.PASS
            for r in failing
        )
    ]


def _reasons(failing: list[Judged]) -> list[str]:
    """Each distinct reason, with the table and query types it applies to."""
    where: dict[str, list[str]] = defaultdict(list)
    for row in failing:
        cell = row.cell
        place = f"{TABLE_TYPE_SHORT.get(cell.table_type, cell.table_type)} "
        place += QUERY_TYPE_WORDS.get(cell.query_type, cell.query_type)
        where[cell.reason].append(place)
    return [f"{', '.join(places)}: {reason}" for reason, places in where.items()]


def _table_types(names: Iterable[str]) -> str:
    return ", ".join(TABLE_TYPE_SHORT.get(n, n) for n in names)
