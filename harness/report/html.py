"""`matrix.html`: the matrix as one self-contained page (no network fetches), from the cells.

The page opens with the regressions and the known failures that now pass, then one table per
engine, table type and query type (a row per scenario, a column per variant, each cell coloured
by outcome and marked when it is a regression or fixed upstream), then the type-change tables.
Clicking a cell opens its details (verdict, reason, known reason and link, SQL, diff sample,
error, the table's live files and their schemas, engine log). Filters by engine, outcome,
verdict and scenario category hide rows.
"""

from __future__ import annotations

import html
import json
from collections import defaultdict
from typing import Any

from harness.report.grouping import (
    TABLE_TYPE_NAMES,
    TYPE_COLUMNS,
    TYPE_ROWS,
    type_change_cells,
    type_label,
)
from harness.report.junit import case_id
from harness.report.summary import engine_versions, verdict_counts
from harness.results.expectations import Judged, Verdict
from harness.results.outcomes import Cell, Outcome, summary_line

COLOURS = {
    Outcome.PASS: "#2e7d32",
    Outcome.WRONG: "#c62828",
    Outcome.ERROR: "#ef6c00",
    Outcome.REJECTED: "#6a1b9a",
    Outcome.UNSUPPORTED: "#757575",
    Outcome.ENGINE_FAILED: "#000000",
}
MIXED = "#8d6e63"  # a type-change pair whose variants disagree
MARKS = {Verdict.REGRESSION: " ⚠", Verdict.FIXED_UPSTREAM: " ✓", Verdict.AS_EXPECTED: ""}
_STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; font-size: 0.9em; }
td.cell, td.pair { color: #fff; cursor: pointer; text-align: center; }
td.regression { outline: 3px solid #ffd600; outline-offset: -3px; font-weight: bold; }
td.fixed { outline: 3px dashed #00e5ff; outline-offset: -3px; }
.legend span { color: #fff; padding: 0.2em 0.5em; margin-right: 0.4em; }
#details { position: fixed; right: 1em; bottom: 1em; width: 45%; max-height: 60%; overflow: auto;
  background: #fafafa; border: 1px solid #999; padding: 0.8em; display: none; }
pre { white-space: pre-wrap; background: #eee; padding: 0.4em; }
.filters label { margin-right: 1em; }
ul.regression, ul.fixed_upstream { max-height: 16em; overflow: auto; font-size: 0.85em; }
"""
#: What both pages' scripts use: HTML escaping, and the values of a filter's ticked boxes.
SCRIPT_HELPERS = """
const ENTITIES = {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'};
function esc(s) { return String(s).replace(/[&<>"]/g, ch => ENTITIES[ch]); }
const wanted = name => Array.from(
  document.querySelectorAll('input[name=' + name + ']:checked')).map(i => i.value);
"""
_SCRIPT = (
    SCRIPT_HELPERS
    + """
const cells = JSON.parse(document.getElementById('cells').textContent);
function show(id) {
  const c = cells[id]; const d = document.getElementById('details');
  const e = c.evidence || {};
  let t = '<b id="detail-outcome">' + esc(c.outcome) + '</b> <span id="detail-id">'
    + esc(c.id) + '</span><p>Verdict: <b>' + esc(c.verdict) + '</b> (expected '
    + esc(c.expected) + ')</p>';
  if (c.reason) t += '<p id="detail-reason">' + esc(c.reason) + '</p>';
  if (c.known) {
    t += '<p>Known: ' + esc(c.known.reason);
    if (c.known.link) t += ' <a href="' + esc(c.known.link) + '">' + esc(c.known.link) + '</a>';
    t += '</p>';
  }
  if (e.sql) t += '<h4>SQL</h4><pre>' + esc(e.sql) + '</pre>';
  if (e.sample && e.sample.length) t += '<h4>Diff sample</h4><pre>'
    + esc(e.sample.map(s => JSON.stringify(s)).join('\\n')) + '</pre>';
  if (e.error) t += '<h4>Error</h4><pre>' + esc(e.error) + '</pre>';
  if (e.files) t += '<h4>Table files</h4><pre id="detail-files">' + esc(e.files.summary) + '</pre>';
  if (e.log) t += '<h4>Engine log</h4><pre>' + esc(e.log) + '</pre>';
  if (c.repro) t += '<h4>Reproduce without lakecompat</h4><p>A folder with the writer as a '
    + 'PySpark script, the SQL of the engine and an ISSUE.md draft:</p><pre id="detail-repro">'
    + esc(c.repro) + '</pre>';
  d.innerHTML = t + '<p><a href="#" onclick="this.parentNode.parentNode.style.display=\\'none\\';'
    + 'return false">close</a></p>';
  d.style.display = 'block';
}
function filter() {
  const engines = wanted('engine'), outcomes = wanted('outcome'), categories = wanted('category');
  const verdicts = wanted('verdict');
  document.querySelectorAll('section.matrix').forEach(s => {
    s.style.display = engines.includes(s.dataset.engine) ? '' : 'none';
  });
  document.querySelectorAll('tr.scenario').forEach(r => {
    const outs = r.dataset.outcomes.split(' '), verds = r.dataset.verdicts.split('|');
    const show = categories.includes(r.dataset.category) && outs.some(o => outcomes.includes(o))
      && verds.some(v => verdicts.includes(v));
    r.style.display = show ? '' : 'none';
  });
}
document.querySelectorAll('.filters input').forEach(i => i.addEventListener('change', filter));
"""
)


def render_html(info: dict[str, Any], judged: list[Judged]) -> str:
    """The page: header, verdict lists, legend, filters, the matrix tables, the type changes."""
    cells = [j.cell for j in judged]
    writer = info.get("writer", {})
    engines = list(dict.fromkeys(c.engine for c in cells))
    categories = sorted({c.category for c in cells})
    index = {id(row.cell): n for n, row in enumerate(judged)}
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>lakecompat {_e(info.get('run_id', ''))}</title><style>{_STYLE}</style></head>",
        "<body><h1>lakecompat compatibility matrix</h1>",
        f"<p>Run <code>{_e(info.get('run_id', '?'))}</code> · writer: Spark "
        f"{_e(writer.get('spark', '?'))} + Hudi {_e(writer.get('hudi', '?'))} · "
        + _e(engine_versions(info))
        + "</p>",
        f"<p id='totals'><b>{_e(summary_line(cells))}</b></p>",
        f"<p id='verdicts'>Against the known outcomes: <b>{_e(verdict_counts(judged))}</b></p>",
        _verdict_list(judged, Verdict.REGRESSION, "Regressions", index),
        _verdict_list(judged, Verdict.FIXED_UPSTREAM, "Fixed upstream", index),
        "<p class='legend'>"
        + "".join(f"<span style='background:{c}'>{o.value}</span>" for o, c in COLOURS.items())
        + "⚠ regression (outlined yellow) · ✓ fixed upstream (outlined cyan)</p>",
        filter_boxes("engine", engines),
        filter_boxes("outcome", [o.value for o in Outcome]),
        filter_boxes("verdict", [v.value for v in Verdict]),
        filter_boxes("category", categories),
    ]
    groups: dict[tuple[str, str, str], list[Judged]] = defaultdict(list)
    for row in judged:
        groups[(row.cell.engine, row.cell.table_type, row.cell.query_type)].append(row)
    for (engine, table_type, query_type), group in groups.items():
        parts.append(_section(engine, table_type, query_type, group, index))
    parts.append(_type_changes(cells, index))
    run_id = str(info.get("run_id", "<run id>"))
    payload = json.dumps([_payload(row, run_id) for row in judged]).replace("</", "<\\/")
    parts += [
        "<div id='details'></div>",
        f"<script type='application/json' id='cells'>{payload}</script>",
        f"<script>{_SCRIPT}</script></body></html>",
    ]
    return "\n".join(parts) + "\n"


def _payload(row: Judged, run_id: str) -> dict[str, Any]:
    """A cell's data for its details; a failing cell's with the command that reproduces it."""
    data = {**row.to_dict(), "id": case_id(row.cell)}
    if row.cell.outcome in (Outcome.WRONG, Outcome.ERROR):
        data["repro"] = f"lakecompat repro reports/runs/{run_id} '{case_id(row.cell)}'"
    return data


def _verdict_list(judged: list[Judged], verdict: Verdict, heading: str, index: dict) -> str:
    rows = [j for j in judged if j.verdict is verdict]
    anchor = verdict.name.lower()
    if not rows:
        return f"<h2 id='{anchor}'>{heading}: none</h2>"
    items = "".join(
        f"<li><a href='#' onclick='show({index[id(r.cell)]});return false'>"
        f"<code>{_e(case_id(r.cell))}</code></a>: expected {r.expected.value}, measured "
        f"{r.cell.outcome.value}. {_e(r.cell.reason)}</li>"
        for r in rows
    )
    return f"<h2 id='{anchor}'>{heading} ({len(rows)})</h2><ul class='{anchor}'>{items}</ul>"


def filter_boxes(name: str, values: list[str]) -> str:
    """A row of ticked boxes named `name`, one per value (the page's filters)."""
    boxes = "".join(
        f"<label><input type='checkbox' name='{name}' value='{_e(v)}' checked> {_e(v)}</label>"
        for v in values
    )
    return f"<p class='filters'><b>{name}:</b> {boxes}</p>"


def _section(
    engine: str, table_type: str, query_type: str, rows: list[Judged], index: dict[int, int]
) -> str:
    variants = list(dict.fromkeys(r.cell.variant for r in rows))
    by_scenario: dict[str, dict[str, Judged]] = defaultdict(dict)
    for row in rows:
        by_scenario[row.cell.scenario][row.cell.variant] = row
    lines = [
        f"<section class='matrix' data-engine='{_e(engine)}'>",
        f"<h2>{_e(engine)} · {_e(TABLE_TYPE_NAMES[table_type])} · {_e(query_type)}</h2><table>",
        "<tr><th>scenario</th>" + "".join(f"<th>{_e(v)}</th>" for v in variants) + "</tr>",
    ]
    for scenario, by_variant in by_scenario.items():
        first = next(iter(by_variant.values())).cell
        outcomes = " ".join(sorted({r.cell.outcome.value for r in by_variant.values()}))
        verdicts = "|".join(sorted({r.verdict.value for r in by_variant.values()}))
        tds = [_td(by_variant[v], index) if v in by_variant else "<td></td>" for v in variants]
        lines.append(
            f"<tr class='scenario' data-category='{_e(first.category)}' "
            f"data-outcomes='{outcomes}' data-verdicts='{_e(verdicts)}'>"
            f"<td>{_e(first.title)} (<code>{_e(scenario)}</code>)</td>" + "".join(tds) + "</tr>"
        )
    lines.append("</table></section>")
    return "\n".join(lines)


def _td(row: Judged, index: dict[int, int]) -> str:
    cell = row.cell
    css = {Verdict.REGRESSION: "cell regression", Verdict.FIXED_UPSTREAM: "cell fixed"}
    return (
        f"<td class='{css.get(row.verdict, 'cell')}' data-id='{_e(case_id(cell))}' "
        f"data-outcome='{cell.outcome.value}' data-verdict='{_e(row.verdict.value)}' "
        f"style='background:{COLOURS[cell.outcome]}' title='{_e(cell.reason)}' "
        f"onclick='show({index[id(cell)]})'>{cell.outcome.value}{MARKS[row.verdict]}</td>"
    )


def _type_changes(cells: list[Cell], index: dict[int, int]) -> str:
    tables = type_change_cells(cells)
    if not tables:
        return ""
    parts = [
        "<h2 id='type-changes'>Type changes</h2><p>Rows: the column's type before the change; "
        "columns: its type after (<code>decimal</code> is decimal(10,2); an empty cell is a "
        "change the catalog does not make). Click a cell for the first variant's details.</p>"
    ]
    for (engine, table_type, query_type), pairs in tables.items():
        headings = "".join(f"<th>{_e(type_label(t))}</th>" for t in TYPE_COLUMNS)
        rows = ["<tr><th>source \\ target</th>" + headings]
        for source in TYPE_ROWS:
            tds = [f"<th>{_e(type_label(source))}</th>"]
            for target in TYPE_COLUMNS:
                group = pairs.get((source, target), [])
                if source == target or not group:
                    tds.append("<td>—</td>" if source == target else "<td></td>")
                    continue
                outcomes = list(dict.fromkeys(c.outcome for c in group))
                colour = COLOURS[outcomes[0]] if len(outcomes) == 1 else MIXED
                text = " / ".join(o.value for o in outcomes)
                tds.append(
                    f"<td class='pair' data-pair='{source}_to_{target}' "
                    f"style='background:{colour}' onclick='show({index[id(group[0])]})'>"
                    f"{text}</td>"
                )
            rows.append("<tr>" + "".join(tds) + "</tr>")
        parts.append(
            f"<section class='matrix types' data-engine='{_e(engine)}'><h3>{_e(engine)} · "
            f"{_e(TABLE_TYPE_NAMES[table_type])} · {_e(query_type)}</h3>"
            f"<table>{''.join(rows)}</table></section>"
        )
    return "\n".join(parts)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)
