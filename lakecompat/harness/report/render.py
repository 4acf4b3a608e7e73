"""Reports rendered from a run folder alone: `results.json`, `matrix.md`, `matrix.html`,
`junit.xml` and `summary.md`. The run folder holds the cells and the known outcomes the run was
judged against, so any report can be regenerated."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from lakecompat.engines.formats import format_named
from lakecompat.engines.table import QUERY_TYPES
from lakecompat.harness.report.grouping import TABLE_TYPE_NAMES
from lakecompat.harness.report.html import render_html
from lakecompat.harness.report.junit import render_junit
from lakecompat.harness.report.overview import NOT_READ, overviews
from lakecompat.harness.report.overview_markdown import overview_markdown
from lakecompat.harness.report.shape_differences import differences_markdown
from lakecompat.harness.report.summary import (
    engine_versions,
    render_summary,
    settings_notes,
    unfinished_notice,
    verdict_counts,
    verdict_sections,
    writer_text,
)
from lakecompat.harness.results.expectations import Judged, Known, from_records, judge
from lakecompat.harness.results.outcomes import Cell, Outcome, summary_line
from lakecompat.harness.results.store import load_run, results_document
from lakecompat.harness.scenario.shapes import SHAPES

LEGEND = {
    Outcome.PASS: "the engine's answer equals the oracle's",
    Outcome.WRONG: "the engine answered, but not correctly (the reason says how)",
    Outcome.ERROR: "the engine (or the writer, for a non-schema step) raised an error",
    Outcome.REJECTED: "the writer refused the schema change itself",
    Outcome.UNSUPPORTED: "the engine has no such query type (where the table can still be "
    "read, the reason says what reading it anyway returned)",
    Outcome.ENGINE_FAILED: "the engine could not even read a plain Parquet table",
}


REPORT_FILES = ("results.json", "matrix.md", "matrix.html", "junit.xml", "summary.md")


def write_reports(
    run_dir: Path, out_dirs: list[Path], known: list[Known] | None = None
) -> list[Judged]:
    """Render the run's results into each of `out_dirs`; return every cell with its verdict.

    `known` replaces the known outcomes recorded in the run folder (to re-judge a run).
    """
    info, cells = load_run(run_dir)
    if known is None:
        known = from_records(info.get("known", []))
    judged = judge(cells, known)
    run_id = str(info.get("run_id", run_dir.name))
    rendered = {
        "results.json": json.dumps(results_document(info, judged), indent=2, sort_keys=True) + "\n",
        "matrix.md": render_matrix(info, judged),
        "matrix.html": render_html(info, judged),
        "junit.xml": render_junit(judged, run_id),
        "summary.md": render_summary(info, judged),
    }
    for out in out_dirs:
        out.mkdir(parents=True, exist_ok=True)
        for name, text in rendered.items():
            (out / name).write_text(text, encoding="utf-8")
    return judged


def render_matrix(info: dict[str, Any], judged: list[Judged]) -> str:
    """The Markdown matrix: the overview of each table format first (operations × engines, the
    type-change grids), then the verdicts, one table per engine, table type and variant, what
    the writer refused, and the evidence of every failing read."""
    cells = [j.cell for j in judged]
    notice = unfinished_notice(info, len(cells))
    lines = [
        "# lakecompat compatibility matrix",
        "",
        *([f"**{notice}**", ""] if notice else []),
        f"Run `{info.get('run_id', '?')}` · writer: {writer_text(info)} · " + engine_versions(info),
        *(f"- Setting: {_md(note)}" for note in settings_notes(info)),
        "",
        f"**{summary_line(cells)}** · against the known outcomes (`expectations/`): "
        f"**{verdict_counts(judged)}**",
    ]
    for overview in overviews(info, judged):
        lines += ["", *overview_markdown(overview)]
    lines += ["", *verdict_sections(judged, limit=None, finished=not notice)]
    lines += [*(f"- `{o.value}`: {text}" for o, text in LEGEND.items())]
    lines += differences_markdown(cells)
    for (engine, version, table_format, table_type, variant), group in _sections(cells).items():
        kind = _kind(table_format, table_type)
        lines += ["", f"## {engine} {version} · {kind} · `{variant}`", ""]
        lines += _section_table(group)
    lines += _refusals(judged)
    failing = [j for j in judged if j.cell.outcome not in (Outcome.PASS, *NOT_READ)]
    if failing:
        lines += ["", "## Evidence for every read that is not PASS"]
        for row in failing:
            lines += _evidence(row)
    return "\n".join(lines) + "\n"


def _refusals(judged: list[Judged]) -> list[str]:
    """What the writer refused, once per scenario and table type (not once per reader)."""
    seen: dict[tuple[str, str, str], Judged] = {}
    for row in judged:
        cell = row.cell
        if cell.outcome is Outcome.REJECTED:
            seen.setdefault((cell.scenario, cell.format, cell.table_type), row)
    if not seen:
        return []
    lines = ["", "## What the writer refused", ""]
    for (scenario, table_format, table_type), row in seen.items():
        kind = _kind(table_format, table_type)
        lines.append(f"- `{scenario}` ({kind}): {_md(row.cell.reason)}")
        if row.cell.evidence.sql:
            lines += ["", "  ```sql", *(f"  {x}" for x in row.cell.evidence.sql.splitlines())]
            lines += ["  ```"]
    return lines


def _sections(cells: list[Cell]) -> dict[tuple[str, str, str, str, str], list[Cell]]:
    sections: dict[tuple[str, str, str, str, str], list[Cell]] = defaultdict(list)
    for c in cells:
        sections[(c.engine, c.engine_version, c.format, c.table_type, c.variant)].append(c)
    return dict(sections)


def _kind(table_format: str, table_type: str) -> str:
    """`copy-on-write`, and `Iceberg copy-on-write` where the format is named in kinds."""
    name = TABLE_TYPE_NAMES[table_type]
    kind = format_named(table_format)
    return f"{kind.title} {name}" if kind.named_in_kinds else name


def _column(cell: Cell) -> str:
    """A section table's column: the query type, or the query shape where it is not `all`
    (shapes read the snapshot)."""
    return cell.query_type if cell.shape == "all" else cell.shape


def _section_table(cells: list[Cell]) -> list[str]:
    present = {_column(c) for c in cells}
    query_types = [q for q in (*QUERY_TYPES, *SHAPES[1:]) if q in present]
    rows: dict[str, dict[str, Cell]] = defaultdict(dict)
    for cell in cells:
        rows[cell.scenario][_column(cell)] = cell
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


def _evidence(row: Judged) -> list[str]:
    cell = row.cell
    lines = [
        "",
        f"### {cell.engine} · {cell.table_kind} · {cell.query_type}"
        + ("" if cell.shape == "all" else f" ({cell.shape})")
        + f" · `{cell.scenario}` [{cell.variant}]",
        "",
        f"**{cell.outcome.value}** ({row.verdict.value}): {_md(cell.reason)}",
    ]
    if row.known:
        link = f" ({row.known.link})" if row.known.link else ""
        lines += ["", f"Known {row.known.outcome.value}: {_md(row.known.reason)}{link}"]
    if cell.evidence.sql:
        # The library readers' evidence is the Python code of their read, not SQL.
        python = cell.evidence.sql.startswith(("import ", "from ", "# "))
        lines += ["", "```python" if python else "```sql", cell.evidence.sql.rstrip("\n"), "```"]
    if cell.evidence.sample:
        lines += ["", "Diff sample:", "", "```json"]
        lines += [json.dumps(entry, sort_keys=True) for entry in cell.evidence.sample]
        lines += ["```"]
    if cell.evidence.files:
        lines += ["", "Table files:", "", "```", cell.evidence.files.get("summary", ""), "```"]
    if cell.evidence.log:
        lines += ["", "Engine log (last lines):", "", "```", cell.evidence.log, "```"]
    return lines


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
