"""The qualification's files: `qualify.md`, `qualify.json`, `qualify.html`, `qualify-junit.xml`.

The HTML page is self-contained (no network fetches): the counts, then one table per change
(newly failing first), a row per cell with the baseline's and the candidate's outcome, engine
version and reason side by side. Filters by engine, change, outcome and scenario category hide
rows; clicking a row shows both sides' evidence. In the JUnit file every compared cell is a
test case, and a newly failing cell is a failure.
"""

from __future__ import annotations

import html
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from lakecompat.harness.qualify.compare import (
    EXPLANATIONS,
    Change,
    Qualification,
    Row,
    counts_line,
    render_json,
    render_markdown,
)
from lakecompat.harness.report.html import COLOURS, SCRIPT_HELPERS, filter_boxes
from lakecompat.harness.report.junit import case_id, testcase_element
from lakecompat.harness.results.outcomes import Cell, Outcome

REPORT_FILES = ("qualify.md", "qualify.json", "qualify.html", "qualify-junit.xml")
_STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; font-size: 0.9em; vertical-align: top; }
td.outcome { color: #fff; text-align: center; white-space: nowrap; }
tr.cell { cursor: pointer; }
#details { position: fixed; right: 1em; bottom: 1em; width: 45%; max-height: 60%; overflow: auto;
  background: #fafafa; border: 1px solid #999; padding: 0.8em; display: none; }
pre { white-space: pre-wrap; background: #eee; padding: 0.4em; }
.filters label { margin-right: 1em; }
"""
_SCRIPT = (
    SCRIPT_HELPERS
    + """
const rows = JSON.parse(document.getElementById('rows').textContent);
function side(name, s) {
  if (!s) return '<h3>' + name + '</h3><p>not run</p>';
  const e = s.evidence || {};
  let t = '<h3>' + name + ': ' + esc(s.outcome) + ' (' + esc(s.engine_version) + ')</h3>';
  if (s.reason) t += '<p>' + esc(s.reason) + '</p>';
  if (e.sql) t += '<h4>SQL</h4><pre>' + esc(e.sql) + '</pre>';
  if (e.sample && e.sample.length) t += '<h4>Diff sample</h4><pre>'
    + esc(e.sample.map(x => JSON.stringify(x)).join('\\n')) + '</pre>';
  if (e.error) t += '<h4>Error</h4><pre>' + esc(e.error) + '</pre>';
  if (e.files) t += '<h4>Table files</h4><pre>' + esc(e.files.summary) + '</pre>';
  return t;
}
function show(n) {
  const r = rows[n]; const d = document.getElementById('details');
  d.innerHTML = '<b id="detail-change">' + esc(r.change) + '</b> <span id="detail-id">'
    + esc(r.id) + '</span>' + side('baseline', r.baseline) + side('candidate', r.candidate)
    + '<p><a href="#" onclick="this.parentNode.parentNode.style.display=\\'none\\';'
    + 'return false">close</a></p>';
  d.style.display = 'block';
}
function filter() {
  const engines = wanted('engine'), changes = wanted('change'), outcomes = wanted('outcome');
  const categories = wanted('category');
  document.querySelectorAll('section.change').forEach(s => {
    s.style.display = changes.includes(s.dataset.change) ? '' : 'none';
  });
  document.querySelectorAll('tr.cell').forEach(r => {
    const show = engines.includes(r.dataset.engine) && categories.includes(r.dataset.category)
      && r.dataset.outcomes.split(' ').some(o => outcomes.includes(o));
    r.style.display = show ? '' : 'none';
  });
}
document.querySelectorAll('.filters input').forEach(i => i.addEventListener('change', filter));
"""
)


def write_qualification(result: Qualification, out: Path) -> list[Path]:
    """Write the four report files into `out` and return their paths."""
    out.mkdir(parents=True, exist_ok=True)
    texts = {
        "qualify.md": render_markdown(result),
        "qualify.json": render_json(result),
        "qualify.html": render_html(result),
        "qualify-junit.xml": render_junit(result),
    }
    paths = []
    for name in REPORT_FILES:
        path = out / name
        path.write_text(texts[name], encoding="utf-8")
        paths.append(path)
    return paths


def render_junit(result: Qualification) -> str:
    """One suite per engine, one case per compared cell; a newly failing cell is a failure."""
    suites = ET.Element(
        "testsuites", name=f"lakecompat qualify {result.baseline.name} -> {result.candidate.name}"
    )
    by_engine: dict[str, list[Row]] = {}
    for row in result.rows:
        by_engine.setdefault(row.cell.engine, []).append(row)
    for engine, rows in by_engine.items():
        failures = sum(row.change is Change.NEWLY_FAILING for row in rows)
        suite = ET.SubElement(
            suites, "testsuite", name=engine, tests=str(len(rows)), failures=str(failures)
        )
        for row in rows:
            case = testcase_element(suite, row.cell)
            before, after = _outcome(row.baseline), _outcome(row.candidate)
            text = f"{row.change.value}: {before} on {result.baseline.name}, {after} on "
            text += f"{result.candidate.name}"
            if row.change is Change.NEWLY_FAILING:
                reason = row.candidate.reason if row.candidate else ""
                ET.SubElement(case, "failure", message=f"{text}: {reason}", type=after)
            elif row.change is not Change.UNCHANGED:
                ET.SubElement(case, "system-out").text = text
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _outcome(cell: Cell | None) -> str:
    return cell.outcome.value if cell else "not run"


def render_html(result: Qualification) -> str:
    """The page: the two points, counts, filters, then one table per change."""
    rows = result.rows
    engines = list(dict.fromkeys(row.cell.engine for row in rows))
    categories = sorted({row.cell.category for row in rows})
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>lakecompat qualification {_e(result.baseline.name)} → "
        f"{_e(result.candidate.name)}</title><style>{_STYLE}</style></head>",
        "<body><h1>lakecompat qualification</h1>",
        f"<p>Baseline: <b id='baseline'>{_e(result.baseline.label())}</b><br>",
        f"Candidate: <b id='candidate'>{_e(result.candidate.label())}</b></p>",
        f"<p id='counts'><b>{_e(counts_line(result))}</b></p>",
        "<p id='breaks'>"
        + (
            "The upgrade breaks cells that passed on the baseline."
            if result.breaks
            else "The upgrade breaks no cell that passed on the baseline."
        )
        + "</p>",
        "<p class='legend'>"
        + "".join(
            f"<span style='background:{c};color:#fff'>{o.value}</span> " for o, c in COLOURS.items()
        )
        + "</p>",
        filter_boxes("engine", engines),
        filter_boxes("change", [c.value for c in Change]),
        filter_boxes("outcome", [o.value for o in Outcome]),
        filter_boxes("category", categories),
    ]
    index = {id(row): n for n, row in enumerate(rows)}
    for change in Change:
        parts.append(_section(result, change, index))
    payload = json.dumps([_payload(row) for row in rows]).replace("</", "<\\/")
    parts += [
        "<div id='details'></div>",
        f"<script type='application/json' id='rows'>{payload}</script>",
        f"<script>{_SCRIPT}</script></body></html>",
    ]
    return "\n".join(parts) + "\n"


def _section(result: Qualification, change: Change, index: dict[int, int]) -> str:
    rows = result.of(change)
    anchor = change.name.lower()
    head = f"<section class='change' data-change='{_e(change.value)}' id='{anchor}'>"
    title = f"<h2>{_e(change.value.capitalize())} ({len(rows)})</h2>"
    if not rows:
        return f"{head}{title}</section>"
    lines = [
        head,
        title,
        f"<p>Cells that {_e(EXPLANATIONS[change])}.</p><table>",
        "<tr><th>engine</th><th>table type</th><th>query type</th><th>scenario</th>"
        "<th>variant</th><th>shape</th><th>format</th><th>baseline</th><th>version</th><th>candidate</th><th>version</th>"
        "<th>baseline reason</th><th>candidate reason</th></tr>",
    ]
    for row in rows:
        cell = row.cell
        outcomes = " ".join(
            sorted({c.outcome.value for c in (row.baseline, row.candidate) if c is not None})
        )
        lines.append(
            f"<tr class='cell' data-id='{_e(case_id(cell))}' data-engine='{_e(cell.engine)}' "
            f"data-category='{_e(cell.category)}' data-outcomes='{outcomes}' "
            f"onclick='show({index[id(row)]})'>"
            + "".join(f"<td>{_e(v)}</td>" for v in row.key)
            + _side_cells(row.baseline)
            + _side_cells(row.candidate)
            + f"<td>{_e(row.baseline.reason if row.baseline else '')}</td>"
            + f"<td>{_e(row.candidate.reason if row.candidate else '')}</td></tr>"
        )
    lines.append("</table></section>")
    return "\n".join(lines)


def _side_cells(cell: Cell | None) -> str:
    if cell is None:
        return "<td>not run</td><td></td>"
    colour = COLOURS[cell.outcome]
    return (
        f"<td class='outcome' style='background:{colour}'>{cell.outcome.value}</td>"
        f"<td>{_e(cell.engine_version)}</td>"
    )


def _payload(row: Row) -> dict[str, Any]:
    """A row's data for the details view (evidence only where the cell changed or fails)."""

    def side(cell: Cell | None) -> dict[str, Any] | None:
        if cell is None:
            return None
        data: dict[str, Any] = {
            "outcome": cell.outcome.value,
            "reason": cell.reason,
            "engine_version": cell.engine_version,
        }
        if row.change is not Change.UNCHANGED:
            data["evidence"] = cell.to_dict()["evidence"]
        return data

    return {
        "id": case_id(row.cell),
        "change": row.change.value,
        "baseline": side(row.baseline),
        "candidate": side(row.candidate),
    }


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)
