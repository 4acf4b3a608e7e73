"""Draft known outcomes from a run: the fewest entries that make every cell "as expected".

Used to accept a measured run as the new baseline (`lakecompat known RUN_DIR`). Entries are
found greedily from the most general to the most specific form, and an entry is only kept
when every cell it would newly match has one and the same non-PASS outcome, so no PASS cell
is ever covered. Entries are ordered so that "the first matching entry wins" holds.

From runs at several version points (`lakecompat known RUN RUN ...`), each run is drafted on
its own; an entry every run drafted holds for every point, and the others are scoped to the
versions of their point (`hudi`, `table_version`, `iceberg`, `format_version`, `reader_hudi`,
`versions`: whichever differ between the points), narrowed to exactly that release, and listed
first.

On top of reviewed known outcomes (`lakecompat known RUN --against expectations/`), only the
cells those outcomes misjudge get entries, scoped to the run's writer release: the additions a
version point needs, to be listed before the reviewed entries. A query shape's entry whose
tables' `SELECT *` snapshot the reviewed outcomes know to give the same outcome takes that
entry's reviewed reason and link, saying so; the others keep the engine's first line.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import replace

from lakecompat.engines.formats import format_named
from lakecompat.engines.shape import PUSHDOWN_OFF
from lakecompat.harness.results.expectations import (
    FORMAT_SCOPES,
    SCOPE_FIELDS,
    Known,
    Verdict,
    judge,
    scope_value,
)
from lakecompat.harness.results.known_lists import dump_entries
from lakecompat.harness.results.known_merge import by_cause, cause_item, merged
from lakecompat.harness.results.known_review import failure_class
from lakecompat.harness.results.outcomes import ROWS_LOST, Cell, Outcome
from lakecompat.harness.results.plain_reads import plain_cells, plain_key

#: The entry forms tried, most general first: which key parts an entry names ("*" for the
#: rest, except the query shape: see `_entry`). The first one, "what an engine cannot do at
#: all", is only used for UNSUPPORTED cells.
#: Every form names the table format: an entry speaks for one format's cells.
_CAPABILITY = ("format", "engine", "table_type", "query_type")
_FORMS: tuple[tuple[str, ...], ...] = (
    _CAPABILITY,
    ("format", "scenario"),  # what the writer refused, for every engine
    ("format", "engine", "scenario"),
    ("format", "engine", "scenario", "shape"),
    ("format", "engine", "scenario", "table_type", "query_type"),
    ("format", "engine", "scenario", "table_type", "query_type", "shape"),
    ("format", "engine", "scenario", "table_type", "query_type", "variant"),
    ("format", "engine", "scenario", "table_type", "query_type", "variant", "shape"),
)
_HEADER = """\
# Known outcomes: which cells are expected not to pass, and why (see docs/known-outcomes.md).
# The first entry that matches a cell wins; a cell no entry matches is expected to PASS.
"""


def draft_known(cells: list[Cell]) -> list[Known]:
    """Entries under which every cell of `cells` is as expected."""
    uncovered = list(cells)
    entries: list[Known] = []
    progress = True
    while progress and any(c.outcome is not Outcome.PASS for c in uncovered):
        progress = False
        for form in _FORMS:
            groups: dict[tuple[str, ...], list[Cell]] = defaultdict(list)
            for cell in uncovered:
                groups[_values(cell, form)].append(cell)
            accepted = set()
            for values, matched in groups.items():
                outcomes = {c.outcome for c in matched}
                allowed = {Outcome.UNSUPPORTED} if form == _CAPABILITY else set(Outcome)
                if len(outcomes) == 1 and outcomes <= allowed - {Outcome.PASS}:
                    entries.append(_entry(dict(zip(form, values, strict=True)), matched))
                    accepted.add(values)
            if accepted:
                uncovered = [c for c in uncovered if _values(c, form) not in accepted]
                progress = True
                break  # start again from the most general form
    return entries


def draft_known_across(runs: list[list[Cell]]) -> list[Known]:
    """Entries under which every cell of every run (one run per version point) is as expected."""
    drafts = [draft_known(cells) for cells in runs]
    if len(drafts) == 1:
        return drafts[0]
    common = [e for e in drafts[0] if all(e in other for other in drafts[1:])]
    signatures = [_signature(cells) for cells in runs]
    scoped: list[Known] = []
    for index, draft in enumerate(drafts):
        for entry in draft:
            if entry in common:
                continue
            scope = _scope(entry, signatures, index)
            if not scope:
                raise ValueError(
                    f"run {index + 1} has the same versions as another run given, but other "
                    f"outcomes ({entry.engine}, {entry.scenario}); known outcomes can only be "
                    "scoped to versions that differ: draft those runs one at a time"
                )
            scoped.append(Known.model_validate({**entry.model_dump(), **scope}))
    return [*dict.fromkeys(scoped), *common]


def draft_on_top(cells: list[Cell], known: list[Known]) -> list[Known]:
    """Entries that, listed before `known`, make every cell of one run as expected.

    Only the cells `known` misjudges are drafted, each form as general as the run allows: an
    entry is kept when every cell of the run it would match (and no earlier new entry
    matches) is one `known` misjudges and has its outcome: listed first, it never speaks for
    a cell the reviewed entries judge right. Entries are scoped to the run's writer release
    (`hudi`), the table version it was asked for (`table_version`, where the run chose one)
    and, for one engine, to its release (`versions`) and the Hudi release it read with
    (`reader_hudi`).
    """
    misjudged = [j.cell for j in judge(cells, known) if j.verdict is not Verdict.AS_EXPECTED]
    wrong = {id(c) for c in misjudged}
    plains = plain_cells(cells)
    claimed: set[int] = set()
    entries: list[Known] = []
    # Each entry names the query shape of the cells it was drafted for: on top of reviewed
    # entries, an entry for every shape would also speak for cells those entries judge.
    for form in [f for f in _FORMS[1:] if "shape" in f]:
        groups: dict[tuple[str, ...], list[Cell]] = defaultdict(list)
        for cell in misjudged:
            if id(cell) not in claimed:
                groups[_values(cell, form)].append(cell)
        for values, matched in groups.items():
            outcomes = {c.outcome for c in matched}
            reach = [c for c in cells if id(c) not in claimed and _values(c, form) == values]
            # Listed first, the entry would also speak for every cell it reaches: none that
            # the reviewed entries judge right already (their reasons stay theirs).
            if len(outcomes) != 1 or any(id(c) not in wrong for c in reach):
                continue
            entry = _entry(dict(zip(form, values, strict=True)), matched)
            entry = _borrowed(entry, matched, known, plains)
            entries.append(Known.model_validate({**entry.model_dump(), **_run_scope(matched)}))
            claimed.update(id(c) for c in reach)
    return entries


def _borrowed(
    entry: Known, matched: list[Cell], known: list[Known], plains: dict[tuple[str, ...], Cell]
) -> Known:
    """A shaped entry whose tables' `SELECT *` snapshot (same engine and variant, pushdown
    left on) `known` gives the same outcome, with one reason and link (one entry, or one per
    table type saying the same), and whose failed reads fail as that `SELECT *` cell of the
    run (`plains`) does: that reason and link, said to be `SELECT *`'s. Otherwise `entry` as
    it is."""
    if entry.shape == "all":
        return entry
    for cell in matched:
        plain = plains.get(plain_key(cell))
        if cell.outcome is Outcome.ERROR and (
            plain is None or failure_class(plain) != failure_class(cell)
        ):
            return entry
    plain = [
        replace(c, shape="all", query_type="snapshot", variant=c.variant.removesuffix(PUSHDOWN_OFF))
        for c in matched
    ]
    sources = {
        (j.known.outcome, j.known.reason, j.known.link) if j.known else None
        for j in judge(plain, known)
    }
    source = sources.pop() if len(sources) == 1 else None
    if source is None or source[0] is not entry.outcome or not source[1]:
        return entry
    outcome, reason, link = source
    lost = all(c.reason.startswith(ROWS_LOST) for c in matched)
    said = (
        f"{ROWS_LOST}; SELECT * on the same table is {outcome.value} too"
        if lost
        else f"as SELECT * on the same table ({outcome.value})"
    )
    fields = {**entry.model_dump(), "reason": f"{said}: {reason}", "link": link}
    return Known.model_validate(fields)


def _run_scope(cells: list[Cell]) -> dict[str, str]:
    cell = cells[0]
    scope: dict[str, str] = {}
    engines = {c.engine for c in cells}
    for fmt, keys in FORMAT_SCOPES.items():
        # Each format's writer release and the version it was asked to write.
        for key in (k for k in keys if k != "reader"):
            field = keys[key]
            if cell.writer.get(field):
                scope[field] = f"=={cell.writer[field]}"
        if "reader" in keys:
            readers = {scope_value(c, fmt, "reader") for c in cells}
            reader = readers.pop() if len(engines) == 1 and len(readers) == 1 else ""
            if reader[:1].isdigit():
                scope[keys["reader"]] = f"=={reader}"
    releases = {c.engine_version for c in cells}
    release = releases.pop() if len(engines) == 1 and len(releases) == 1 else ""
    if release[:1].isdigit():
        scope["versions"] = f"=={release}"
    return scope


def _signature(cells: list[Cell]) -> dict[str, str]:
    """The versions a run's cells ran with: the writer's Hudi, each engine's version and Hudi."""
    found: dict[str, str] = {}
    for cell in cells:
        for fmt, keys in FORMAT_SCOPES.items():
            for key, field in keys.items():
                name = f"{field}:{cell.engine}" if key == "reader" else field
                found.setdefault(name, scope_value(cell, fmt, key))
        found.setdefault(f"versions:{cell.engine}", cell.engine_version)
    return found


def _scope(entry: Known, signatures: list[dict[str, str]], index: int) -> dict[str, str]:
    """The version bounds that pin `entry` to point `index`: exact releases, for what differs
    between the points (and what an entry of its engine may name)."""
    mine = signatures[index]
    scope: dict[str, str] = {}

    def differs(field: str) -> bool:
        value = mine.get(field) or ""
        return value[:1].isdigit() and any(s.get(field) != value for s in signatures)

    readers = [keys["reader"] for keys in FORMAT_SCOPES.values() if "reader" in keys]
    for field in (f for f in SCOPE_FIELDS if f not in readers):
        if differs(field):
            scope[field] = f"=={mine[field]}"
    if entry.engine != "*":
        for field in ("versions", *readers):
            if differs(f"{field}:{entry.engine}"):
                scope[field] = f"=={mine[f'{field}:{entry.engine}']}"
    return scope


def to_yaml(entries: list[Known]) -> str:
    """An expectations file holding `entries`, one entry per cause: those that say the same
    merged, and gathered as the cases of one entry, where that changes no cell's judgement
    (`known_merge`)."""
    together = [cause_item(cases) for _, cases in by_cause(merged(entries))]
    return _HEADER + "known:\n" + dump_entries(together)


def _values(cell: Cell, form: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(getattr(cell, part) for part in form)


def _entry(names: dict[str, str], matched: list[Cell]) -> Known:
    reason, _ = Counter(_first_sentence(c.reason) for c in matched).most_common(1)[0]
    fmt = names.get("format", matched[0].format)
    if matched[0].outcome is Outcome.PASS:
        writer = format_named(fmt)
        reason = f"passes with {writer.title} {matched[0].writer.get(fmt, '?')}"
    return Known.model_validate(
        {
            "format": fmt,
            "engine": names.get("engine", "*"),
            "scenario": names.get("scenario", "*"),
            "table_type": names.get("table_type", "*"),
            "query_type": names.get("query_type", "*"),
            "variant": names.get("variant", "*"),
            "shape": names.get("shape") or _shape_of(matched),
            "outcome": matched[0].outcome,
            "reason": reason or matched[0].outcome.value,
        }
    )


def _shape_of(matched: list[Cell]) -> str:
    """The shape of an entry whose form names none: the one shape its cells have (an entry
    claims no more than was measured, `all` for `SELECT *` only), `*` when they have several."""
    shapes = {c.shape for c in matched}
    return shapes.pop() if len(shapes) == 1 else "*"


def _first_sentence(reason: str) -> str:
    text = " ".join(reason.split("\n")[0].split())
    return text if len(text) <= 160 else text[:157] + "..."
