"""Reports rendered from a run's results file alone: `results.json`, `matrix.md`, `junit.xml`."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from engines.base import QUERY_TYPES
from harness.junit import render_junit
from harness.outcomes import Cell, Outcome, summary_line
from harness.results import load_run, results_document

TABLE_TYPE_NAMES = {"cow": "copy-on-write", "mor": "merge-on-read"}
#: The summary's columns: (table type, query type) → heading.
SUMMARY_COLUMNS = {
    ("cow", "snapshot"): "COW",
    ("mor", "read_optimized"): "MOR read-optimized",
    ("mor", "snapshot"): "MOR snapshot",
}
#: The type-change table's layout, as in the source documents.
TYPE_ROWS = ("int", "long", "float", "double", "decimal", "string", "date")
TYPE_COLUMNS = ("long", "float", "double", "string", "decimal", "date", "int")
LEGEND = {
    Outcome.PASS: "the engine's answer equals the oracle's",
    Outcome.WRONG: "the engine answered, but not correctly (the reason says how)",
    Outcome.ERROR: "the engine (or the writer, for a non-schema step) raised an error",
    Outcome.REJECTED: "the writer refused the schema change itself",
    Outcome.UNSUPPORTED: "the engine has no such query type (where the table can still be "
    "read, the reason says what reading it anyway returned)",
    Outcome.ENGINE_FAILED: "the engine could not even read a plain Parquet table",
}


def write_reports(run_dir: Path, out_dirs: list[Path]) -> None:
    """Render the run's results into each of `out_dirs`."""
    info, cells = load_run(run_dir)
    document = json.dumps(results_document(info, cells), indent=2, sort_keys=True) + "\n"
    matrix = render_matrix(info, cells)
    junit = render_junit(cells, str(info.get("run_id", run_dir.name)))
    for out in out_dirs:
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.json").write_text(document, encoding="utf-8")
        (out / "matrix.md").write_text(matrix, encoding="utf-8")
        (out / "junit.xml").write_text(junit, encoding="utf-8")


def render_matrix(info: dict[str, Any], cells: list[Cell]) -> str:
    """The Markdown matrix: one table per engine, table type and variant, then the evidence."""
    writer = info.get("writer", {})
    lines = [
        "# lakecompat compatibility matrix",
        "",
        f"Run `{info.get('run_id', '?')}` · writer: Spark {writer.get('spark', '?')}"
        f" + Hudi {writer.get('hudi', '?')} · "
        + ", ".join(f"{name} {version}" for name, version in info.get("engines", {}).items()),
        "",
        f"**{summary_line(cells)}**",
        "",
        *(f"- `{o.value}`: {text}" for o, text in LEGEND.items()),
    ]
    for engine, group in _by_engine(cells).items():
        lines += ["", f"## Summary: {engine}", ""]
        lines += _summary_table(group)
    type_changes = _type_change_cells(cells)
    if type_changes:
        lines += ["", "## Type changes", ""]
        lines += [
            "Rows: the column's type before the change; columns: its type after. A cell is the",
            "outcome of every variant, or the outcomes and the variants that had them.",
        ]
        for (engine, table_type, query_type), pairs in type_changes.items():
            lines += ["", f"### {engine} · {TABLE_TYPE_NAMES[table_type]} · {query_type}", ""]
            lines += _type_change_table(pairs)
    for (engine, version, table_type, variant), group in _sections(cells).items():
        lines += ["", f"## {engine} {version} · {TABLE_TYPE_NAMES[table_type]} · `{variant}`", ""]
        lines += _section_table(group)
    failing = [c for c in cells if c.outcome is not Outcome.PASS]
    if failing:
        lines += ["", "## Evidence for every cell that is not PASS"]
        for cell in failing:
            lines += _evidence(cell)
    return "\n".join(lines) + "\n"


def _by_engine(cells: list[Cell]) -> dict[str, list[Cell]]:
    engines: dict[str, list[Cell]] = defaultdict(list)
    for cell in cells:
        engines[cell.engine].append(cell)
    return dict(engines)


def combined_outcome(cells: list[Cell]) -> str:
    """One outcome if every variant agrees, else each outcome with the variants that had it."""
    variants: dict[str, list[str]] = defaultdict(list)
    for cell in cells:
        variants[cell.outcome.value].append(cell.variant)
    if len(variants) == 1:
        return next(iter(variants))
    order = [o.value for o in Outcome]
    return "<br>".join(
        f"{outcome} ({', '.join(variants[outcome])})"
        for outcome in sorted(variants, key=order.index)
    )


def _summary_table(cells: list[Cell]) -> list[str]:
    """operation | COW | MOR read-optimized | MOR snapshot | reasons, one row per scenario."""
    rows: dict[str, dict[tuple[str, str], list[Cell]]] = defaultdict(lambda: defaultdict(list))
    titles: dict[str, str] = {}
    for cell in cells:
        if (cell.table_type, cell.query_type) in SUMMARY_COLUMNS:
            rows[cell.scenario][(cell.table_type, cell.query_type)].append(cell)
            titles[cell.scenario] = cell.title
    lines = [
        "| operation | " + " | ".join(SUMMARY_COLUMNS.values()) + " | reasons |",
        "|---" * (len(SUMMARY_COLUMNS) + 2) + "|",
    ]
    for scenario, by_column in rows.items():
        outcomes = [combined_outcome(by_column.get(k, [])) for k in SUMMARY_COLUMNS]
        reason_text = "<br>".join(
            f"{', '.join(where)}: {_md(reason)}"
            for reason, where in _summary_reasons(by_column).items()
        )
        lines.append(
            f"| {_md(titles[scenario])} (`{scenario}`) | "
            + " | ".join(outcomes)
            + f" | {reason_text} |"
        )
    return lines


def _summary_reasons(by_column: dict[tuple[str, str], list[Cell]]) -> dict[str, list[str]]:
    """Each reason with where it applies: a column, a column [variants], or `all`."""
    reasons: dict[str, list[str]] = defaultdict(list)
    for key, heading in SUMMARY_COLUMNS.items():
        column = by_column.get(key, [])
        by_reason: dict[str, list[str]] = defaultdict(list)
        for cell in column:
            if cell.outcome is not Outcome.PASS:
                by_reason[cell.reason].append(cell.variant)
        for reason, variants in by_reason.items():
            every = len(variants) == len(column)
            reasons[reason].append(heading if every else f"{heading} [{', '.join(variants)}]")
    present = {SUMMARY_COLUMNS[k] for k in by_column}
    if len(reasons) == 1 and set(next(iter(reasons.values()))) == present:
        return {next(iter(reasons)): ["all"]}
    return dict(reasons)


def _type_change_cells(
    cells: list[Cell],
) -> dict[tuple[str, str, str], dict[tuple[str, str], list[Cell]]]:
    """Cells of `type_change/<source>_to_<target>` scenarios, by engine, table and query type."""
    found: dict[tuple[str, str, str], dict[tuple[str, str], list[Cell]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for cell in cells:
        name = cell.scenario.removeprefix("type_change/")
        source, _, target = name.partition("_to_")
        if cell.category == "type_change" and source in TYPE_ROWS and target in TYPE_COLUMNS:
            found[(cell.engine, cell.table_type, cell.query_type)][(source, target)].append(cell)
    return {key: dict(pairs) for key, pairs in sorted(found.items())}


def _type_change_table(pairs: dict[tuple[str, str], list[Cell]]) -> list[str]:
    lines = [
        "| source \\ target | " + " | ".join(TYPE_COLUMNS) + " |",
        "|---" * (len(TYPE_COLUMNS) + 1) + "|",
    ]
    for source in TYPE_ROWS:
        row = [
            "—" if source == target else combined_outcome(pairs.get((source, target), []))
            for target in TYPE_COLUMNS
        ]
        lines.append(f"| {source} | " + " | ".join(row) + " |")
    return lines


def _sections(cells: list[Cell]) -> dict[tuple[str, str, str, str], list[Cell]]:
    sections: dict[tuple[str, str, str, str], list[Cell]] = defaultdict(list)
    for cell in cells:
        sections[(cell.engine, cell.engine_version, cell.table_type, cell.variant)].append(cell)
    return dict(sections)


def _section_table(cells: list[Cell]) -> list[str]:
    present = {c.query_type for c in cells}
    query_types = [q for q in QUERY_TYPES if q in present]
    rows: dict[str, dict[str, Cell]] = defaultdict(dict)
    for cell in cells:
        rows[cell.scenario][cell.query_type] = cell
    lines = [
        "| operation | " + " | ".join(query_types) + " | reason |",
        "|---" * (len(query_types) + 2) + "|",
    ]
    for scenario, by_query in rows.items():
        title = next(iter(by_query.values())).title
        results = [by_query[q].outcome.value if q in by_query else "" for q in query_types]
        lines.append(
            f"| {_md(title)} (`{scenario}`) | " + " | ".join(results) + f" | {_reasons(by_query)} |"
        )
    return lines


def _reasons(by_query: dict[str, Cell]) -> str:
    reasons = {q: c.reason for q, c in by_query.items() if c.outcome is not Outcome.PASS}
    if len(set(reasons.values())) == 1 and len(reasons) == len(by_query):
        return _md(next(iter(reasons.values())))
    return "<br>".join(f"{q}: {_md(r)}" for q, r in reasons.items())


def _evidence(cell: Cell) -> list[str]:
    lines = [
        "",
        f"### {cell.engine} · {cell.table_type} · {cell.query_type} · `{cell.scenario}`"
        f" [{cell.variant}]",
        "",
        f"**{cell.outcome.value}**: {_md(cell.reason)}",
    ]
    if cell.evidence.sql:
        lines += ["", "```sql", cell.evidence.sql, "```"]
    if cell.evidence.sample:
        lines += ["", "Diff sample:", "", "```json"]
        lines += [json.dumps(entry, sort_keys=True) for entry in cell.evidence.sample]
        lines += ["```"]
    if cell.evidence.log:
        lines += ["", "Engine log (last lines):", "", "```", cell.evidence.log, "```"]
    return lines


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
