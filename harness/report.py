"""Reports rendered from a run's results file alone: `results.json` and `matrix.md`."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from engines.base import QUERY_TYPES
from harness.outcomes import Cell, Outcome, summary_line
from harness.results import load_run, results_document

TABLE_TYPE_NAMES = {"cow": "copy-on-write", "mor": "merge-on-read"}
LEGEND = {
    Outcome.PASS: "the engine's answer equals the oracle's",
    Outcome.WRONG: "the engine answered, but not correctly (the reason says how)",
    Outcome.ERROR: "the engine (or the writer, for a non-schema step) raised an error",
    Outcome.REJECTED: "the writer refused the schema change itself",
    Outcome.UNSUPPORTED: "the engine has no such query type",
    Outcome.ENGINE_FAILED: "the engine could not even read a plain Parquet table",
}


def write_reports(run_dir: Path, out_dirs: list[Path]) -> None:
    """Render the run's results into each of `out_dirs`."""
    info, cells = load_run(run_dir)
    document = json.dumps(results_document(info, cells), indent=2, sort_keys=True) + "\n"
    matrix = render_matrix(info, cells)
    for out in out_dirs:
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.json").write_text(document, encoding="utf-8")
        (out / "matrix.md").write_text(matrix, encoding="utf-8")


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
    for (engine, version, table_type, variant), group in _sections(cells).items():
        lines += ["", f"## {engine} {version} · {TABLE_TYPE_NAMES[table_type]} · `{variant}`", ""]
        lines += _section_table(group)
    failing = [c for c in cells if c.outcome is not Outcome.PASS]
    if failing:
        lines += ["", "## Evidence for every cell that is not PASS"]
        for cell in failing:
            lines += _evidence(cell)
    return "\n".join(lines) + "\n"


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
