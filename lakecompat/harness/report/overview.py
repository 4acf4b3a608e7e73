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

from lakecompat.engines.shape import CONTROLS
from lakecompat.engines.table import QUERY_TYPES
from lakecompat.harness.report.grouping import CATEGORY_ORDER, TYPE_COLUMNS, TYPE_ROWS
from lakecompat.harness.results.causes import own_reason, same_failure
from lakecompat.harness.results.expectations import Judged, Verdict
from lakecompat.harness.results.outcomes import NOTHING_TO_READ, ROWS_LOST, Cell, Outcome
from lakecompat.harness.results.plain_reads import missing_rows, plain_cells, plain_key
from lakecompat.harness.scenario.type_shapes import ALWAYS_BASELINE

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
#: An engine's cell whose every read fails as on the baseline table (said under the table).
AS_BASELINE = "fails as without any schema change"


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
class Aside:
    """A failure that is not about any operation, said once under the overview instead of in
    every row it would paint."""

    #: `unreadable`: the engine reads no table of the format, not even the baseline's (it is
    #: not a column); `baseline`: reads that fail without any schema change (the rows leave
    #: out the cells that fail the same way); `nothing_to_read`: reads whose range holds no
    #: commit (UNSUPPORTED), scenario by scenario.
    kind: str
    #: The engine, or "" for what holds for every engine.
    engine: str
    #: "ERROR on MOR changelog", "ERROR 143, UNSUPPORTED 769", "incremental, changelog".
    text: str
    #: Each distinct reason, with where it applies.
    reasons: list[str] = field(default_factory=list)
    #: Indexes (into the run's judged cells) of the cells it speaks for.
    cells: list[int] = field(default_factory=list)
    #: How many cells of the rows fail as the baseline does, left out of them (`baseline`), or
    #: the scenarios (`nothing_to_read`).
    left_out: int = 0
    scenarios: list[str] = field(default_factory=list)


@dataclass
class Overview:
    """The overview of one table format."""

    format: str
    #: The engines with a column: every engine of the format that reads at least its
    #: baseline table (the others are `unreadable` asides).
    engines: list[str]
    #: The variant with each engine's own defaults, whose cells the summaries speak for.
    defaults: dict[str, str]
    rows: list[OperationRow]
    #: Per engine, the type-change grid: (type before, type after) → summary.
    grids: dict[str, dict[tuple[str, str], Summary]]
    #: The writer's grid: which type changes it accepts.
    writer_grid: dict[tuple[str, str], Summary]
    #: What is said once under the table (`Aside`), in the order unreadable, baseline,
    #: nothing to read.
    asides: list[Aside] = field(default_factory=list)


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
    baselines = _baseline_cells(judged, indexes)
    asides = _unreadable(judged, indexes, baselines)
    gone = {aside.engine for aside in asides}
    engines = [e for e in order if e in seen - gone] + sorted(seen - gone - set(order))
    shared = _failing_as_baseline(judged, indexes, baselines)
    asides += _baseline_asides(judged, baselines, shared, engines, defaults)
    asides += _nothing_to_read(judged, indexes, gone)
    rows: list[OperationRow] = []
    grids: dict[str, dict[tuple[str, str], Summary]] = {engine: {} for engine in engines}
    writer_grid: dict[tuple[str, str], Summary] = {}
    for scenario, by_engine in by_scenario.items():
        every = [i for group in by_engine.values() for i in group]
        first = judged[every[0]].cell
        if first.category == "baseline":
            continue  # said under the table (`Aside`): no schema change is no operation
        writer = writer_summary(judged, every)
        summaries = {
            engine: engine_summary(
                judged, by_engine.get(engine, []), defaults.get(engine, ""), shared
            )
            for engine in engines
        }
        pair = is_type_change(scenario)
        if pair is None:
            rows.append(OperationRow(scenario, first.title, first.category, writer, summaries))
            continue
        writer_grid[pair] = writer
        for engine, summary in summaries.items():
            grids[engine][pair] = summary
    rows.sort(key=lambda r: _category_rank(r.category))
    return Overview(
        name, engines, {e: defaults.get(e, "") for e in engines}, rows, grids, writer_grid, asides
    )


def _combination(cell: Cell) -> tuple[str, ...]:
    """What a cell shares with its baseline cell (`harness.run.cells.Baselines`)."""
    return (cell.engine, cell.table_type, cell.query_type, cell.variant)


def _baseline_cells(judged: list[Judged], indexes: list[int]) -> dict[tuple[str, ...], list[int]]:
    """The baseline scenarios' `SELECT *` cells by engine, table type, query type, variant."""
    found: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for i in indexes:
        if judged[i].cell.category == "baseline" and judged[i].cell.shape == "all":
            found[_combination(judged[i].cell)].append(i)
    return found


def _failing_as_baseline(
    judged: list[Judged], indexes: list[int], baselines: dict[tuple[str, ...], list[int]]
) -> set[int]:
    """The cells outside the baselines that fail as one of their baseline cells does: not
    about the operation of their row."""
    shared = set()
    for index in indexes:
        cell = judged[index].cell
        if cell.category == "baseline":
            continue
        found = baselines.get(_combination(cell), [])
        if any(same_failure(cell, judged[i].cell) for i in found):
            shared.add(index)
    return shared


def _unreadable(
    judged: list[Judged], indexes: list[int], baselines: dict[tuple[str, ...], list[int]]
) -> list[Aside]:
    """An aside per engine that reads no table of the format: its baseline tables fail in
    every read, and no cell of it passes (one line, not a column of identical failures)."""
    by_engine: dict[str, list[int]] = defaultdict(list)
    for index in indexes:
        by_engine[judged[index].cell.engine].append(index)
    asides = []
    for engine, mine in by_engine.items():
        base = [i for key, found in baselines.items() if key[0] == engine for i in found]
        cells = [judged[i].cell for i in mine]
        failed = [c for c in cells if c.outcome not in (Outcome.PASS, Outcome.REJECTED)]
        if not base or any(c.outcome is Outcome.PASS for c in cells) or not failed:
            continue
        counts: dict[str, int] = defaultdict(int)
        for c in failed:
            counts[c.outcome.value] += 1
        text = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
        # What fails says why it cannot read; what it has no query for, only where reading
        # nothing failed.
        reads = [c for c in failed if c.outcome is not Outcome.UNSUPPORTED]
        reasons = _common_reasons(reads or failed)
        asides.append(Aside("unreadable", engine, text, reasons, mine))
    return asides


def _common_reasons(cells: list[Cell], most: int = 2) -> list[str]:
    """The most frequent first lines of the cells' own reasons, with how many cells say each."""
    counts: dict[str, int] = defaultdict(int)
    for cell in cells:
        reason = own_reason(cell.reason).splitlines()
        counts[f"{cell.outcome.value}: {reason[0]}" if reason else cell.outcome.value] += 1
    ranked = sorted(counts.items(), key=lambda item: -item[1])[:most]
    return [f"{reason} ({n} cells)" for reason, n in ranked]


def _baseline_asides(
    judged: list[Judged],
    baselines: dict[tuple[str, ...], list[int]],
    shared: set[int],
    engines: list[str],
    defaults: dict[str, str],
) -> list[Aside]:
    """Per engine with a column and baseline scenario, what its default configuration gives
    on the baseline's table where that fails; the first of an engine's asides counts how many
    cells of the rows fail as one of its baselines does."""
    asides = []
    for engine in engines:
        by_scenario: dict[str, list[int]] = defaultdict(list)
        for key, found in baselines.items():
            for i in found if key[0] == engine else []:
                by_scenario[judged[i].cell.scenario].append(i)
        left_out = sum(1 for i in shared if judged[i].cell.engine == engine)
        # Baseline tables that fail alike are said once, `baseline/no_change` named first.
        alike: dict[tuple[str, tuple[str, ...]], Aside] = {}
        for scenario, mine in sorted(by_scenario.items(), key=lambda s: _baseline_rank(s[0])):
            summary = _plain_summary([judged[i] for i in mine], defaults.get(engine, ""), {})
            if summary.outcome in (None, Outcome.PASS):
                continue
            said = (summary.text, tuple(summary.reasons))
            if said in alike:
                alike[said].scenarios.append(scenario)
                alike[said].cells += mine
                continue
            aside = Aside("baseline", engine, summary.text, summary.reasons, list(mine))
            aside.scenarios, aside.left_out, left_out = [scenario], left_out, 0
            alike[said] = aside
            asides.append(aside)
    return asides


def _baseline_rank(scenario: str) -> tuple[bool, str]:
    """`baseline/no_change` (the baseline every run reads) first, then by name."""
    return (scenario != ALWAYS_BASELINE, scenario)


def _nothing_to_read(judged: list[Judged], indexes: list[int], gone: set[str]) -> list[Aside]:
    """One aside for the reads whose range holds no commit (`harness.run.cells.empty_range`)."""
    found = [
        i
        for i in indexes
        if judged[i].cell.reason.startswith(NOTHING_TO_READ) and judged[i].cell.engine not in gone
    ]
    if not found:
        return []
    cells = [judged[i].cell for i in found]
    query_types = sorted({c.query_type for c in cells}, key=QUERY_TYPES.index)
    text = ", ".join(QUERY_TYPE_WORDS.get(q, q) for q in query_types)
    reason = own_reason(cells[0].reason).split("; read")[0]
    scenarios = list(dict.fromkeys(c.scenario for c in cells))
    return [Aside("nothing_to_read", "", text, [reason], found, scenarios=scenarios)]


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


def engine_summary(
    judged: list[Judged], indexes: list[int], default: str, shared: set[int] = frozenset()
) -> Summary:
    """An engine's cell: its default variant's `SELECT *` over every table and query type it
    read, with its shaped queries beside (`Summary.shaped`); the cells of `shared`, which fail
    as the baseline does, are behind it but not in its words."""
    every = [judged[i] for i in indexes]
    marks = {
        "regression": any(r.verdict is Verdict.REGRESSION for r in every),
        "fixed_upstream": any(r.verdict is Verdict.FIXED_UPSTREAM for r in every),
    }
    if not every:
        return Summary("not run", None, cells=[], **marks)
    own = [judged[i] for i in indexes if i not in shared]
    shaped = [r for r in own if r.cell.shape != "all"]
    plain = [r for r in own if r.cell.shape == "all"]
    if _only_shared(every, plain, default):
        summary = Summary(AS_BASELINE, None, **marks)
    else:
        summary = _plain_summary(plain, default, marks)
    summary.cells = list(indexes)
    plains = plain_cells(r.cell for r in every)
    summary.shaped = shaped_summary(shaped, default, plains) if shaped else None
    return summary


def _only_shared(every: list[Judged], plain: list[Judged], default: str) -> bool:
    """Whether every `SELECT *` read of the default variant fails as the baseline does."""
    ours = [r for r in every if r.cell.shape == "all" and r.cell.variant == default]
    read = [r for r in ours if r.cell.outcome not in NOT_READ]
    kept = {id(r) for r in plain}
    return bool(read) and not any(id(r) in kept for r in read)


def shaped_summary(
    rows: list[Judged], default: str, plains: dict[tuple[str, ...], Cell] | None = None
) -> Summary:
    """What the default variant's shaped queries give: `PASS`, or which shapes fail how,
    whether a filter lost rows without an error where `SELECT *` of its table (in `plains`,
    by `plain_key`) reads them right, and under which controls (pushdown off, ...) they
    pass."""
    plains = plains or {}
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
    if any(missing_rows(r.cell, plains.get(plain_key(r.cell))) == ROWS_LOST for r in failing):
        text += " · " + ROWS_LOST
    for control in CONTROLS:
        if _pass_under(control, rows, failing, default):
            text += f" · PASS with {control_words(control)}"
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


def control_words(control: str) -> str:
    """A control variant's suffix as a user says it: `+pushdown_off` is "pushdown off"."""
    return control.removeprefix("+").replace("_", " ")


def _pass_under(control: str, rows: list[Judged], failing: list[Judged], default: str) -> bool:
    """Whether the failing shaped cells that were read under `control` (`+pushdown_off`, ...)
    too all pass there."""
    quiet = {
        (r.cell.table_type, r.cell.shape): r.cell.outcome
        for r in rows
        if r.cell.variant == f"{default}{control}"
    }
    filters = [r for r in failing if (r.cell.table_type, r.cell.shape) in quiet]
    return bool(filters) and all(
        quiet[(r.cell.table_type, r.cell.shape)] is Outcome.PASS for r in filters
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
