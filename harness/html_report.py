"""`matrix.html`: the matrix as one self-contained page (no network fetches), from the cells.

One table per engine, table type and query type: a row per scenario, a column per variant,
each cell coloured by outcome. Clicking a cell opens its details (reason, SQL, diff sample,
error, engine log). Filters by engine, outcome and scenario category hide rows and tables.
"""

from __future__ import annotations

import html
import json
from collections import defaultdict
from typing import Any

from harness.outcomes import Cell, Outcome, summary_line

COLOURS = {
    Outcome.PASS: "#2e7d32",
    Outcome.WRONG: "#c62828",
    Outcome.ERROR: "#ef6c00",
    Outcome.REJECTED: "#6a1b9a",
    Outcome.UNSUPPORTED: "#757575",
    Outcome.ENGINE_FAILED: "#000000",
}
_STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; font-size: 0.9em; }
td.cell { color: #fff; cursor: pointer; text-align: center; }
.legend span { color: #fff; padding: 0.2em 0.5em; margin-right: 0.4em; }
#details { position: fixed; right: 1em; bottom: 1em; width: 45%; max-height: 60%; overflow: auto;
  background: #fafafa; border: 1px solid #999; padding: 0.8em; display: none; }
pre { white-space: pre-wrap; background: #eee; padding: 0.4em; }
.filters label { margin-right: 1em; }
"""
_SCRIPT = """
const cells = JSON.parse(document.getElementById('cells').textContent);
function show(id) {
  const c = cells[id]; const d = document.getElementById('details');
  const e = c.evidence || {};
  let t = '<b>' + esc(c.outcome) + '</b> ' + esc(c.engine) + ' · ' + esc(c.table_type) + ' · '
    + esc(c.query_type) + ' · ' + esc(c.scenario) + ' [' + esc(c.variant) + ']';
  if (c.reason) t += '<p>' + esc(c.reason) + '</p>';
  if (e.sql) t += '<h4>SQL</h4><pre>' + esc(e.sql) + '</pre>';
  if (e.sample && e.sample.length) t += '<h4>Diff sample</h4><pre>'
    + esc(e.sample.map(s => JSON.stringify(s)).join('\\n')) + '</pre>';
  if (e.error) t += '<h4>Error</h4><pre>' + esc(e.error) + '</pre>';
  if (e.log) t += '<h4>Engine log</h4><pre>' + esc(e.log) + '</pre>';
  d.innerHTML = t + '<p><a href="#" onclick="this.parentNode.parentNode.style.display=\\'none\\';'
    + 'return false">close</a></p>';
  d.style.display = 'block';
}
const ENTITIES = {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'};
function esc(s) { return String(s).replace(/[&<>"]/g, ch => ENTITIES[ch]); }
function filter() {
  const wanted = name => Array.from(
    document.querySelectorAll('input[name=' + name + ']:checked')).map(i => i.value);
  const engines = wanted('engine'), outcomes = wanted('outcome'), categories = wanted('category');
  document.querySelectorAll('section.matrix').forEach(s => {
    s.style.display = engines.includes(s.dataset.engine) ? '' : 'none';
  });
  document.querySelectorAll('tr.scenario').forEach(r => {
    const outs = r.dataset.outcomes.split(' ');
    const show = categories.includes(r.dataset.category) && outs.some(o => outcomes.includes(o));
    r.style.display = show ? '' : 'none';
  });
}
document.querySelectorAll('.filters input').forEach(i => i.addEventListener('change', filter));
"""


def render_html(info: dict[str, Any], cells: list[Cell]) -> str:
    """The page: header, legend, filters, one table per engine × table type × query type."""
    writer = info.get("writer", {})
    engines = sorted({c.engine for c in cells})
    categories = sorted({c.category for c in cells})
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>lakecompat {_e(info.get('run_id', ''))}</title><style>{_STYLE}</style></head>",
        "<body><h1>lakecompat compatibility matrix</h1>",
        f"<p>Run <code>{_e(info.get('run_id', '?'))}</code> · writer: Spark "
        f"{_e(writer.get('spark', '?'))} + Hudi {_e(writer.get('hudi', '?'))} · "
        + ", ".join(f"{_e(n)} {_e(v)}" for n, v in info.get("engines", {}).items())
        + "</p>",
        f"<p><b>{_e(summary_line(cells))}</b></p>",
        "<p class='legend'>"
        + "".join(f"<span style='background:{c}'>{o.value}</span>" for o, c in COLOURS.items())
        + "</p>",
        _filters("engine", engines) + _filters("outcome", [o.value for o in Outcome]),
        _filters("category", categories),
    ]
    index = {id(cell): n for n, cell in enumerate(cells)}
    groups: dict[tuple[str, str, str], list[Cell]] = defaultdict(list)
    for cell in cells:
        groups[(cell.engine, cell.table_type, cell.query_type)].append(cell)
    for (engine, table_type, query_type), group in groups.items():
        parts.append(_section(engine, table_type, query_type, group, index))
    payload = json.dumps([c.to_dict() for c in cells]).replace("</", "<\\/")
    parts += [
        "<div id='details'></div>",
        f"<script type='application/json' id='cells'>{payload}</script>",
        f"<script>{_SCRIPT}</script></body></html>",
    ]
    return "\n".join(parts) + "\n"


def _filters(name: str, values: list[str]) -> str:
    boxes = "".join(
        f"<label><input type='checkbox' name='{name}' value='{_e(v)}' checked> {_e(v)}</label>"
        for v in values
    )
    return f"<p class='filters'><b>{name}:</b> {boxes}</p>"


def _section(
    engine: str, table_type: str, query_type: str, cells: list[Cell], index: dict[int, int]
) -> str:
    variants = list(dict.fromkeys(c.variant for c in cells))
    rows: dict[str, dict[str, Cell]] = defaultdict(dict)
    for cell in cells:
        rows[cell.scenario][cell.variant] = cell
    lines = [
        f"<section class='matrix' data-engine='{_e(engine)}'>",
        f"<h2>{_e(engine)} · {_e(table_type)} · {_e(query_type)}</h2><table>",
        "<tr><th>scenario</th>" + "".join(f"<th>{_e(v)}</th>" for v in variants) + "</tr>",
    ]
    for scenario, by_variant in rows.items():
        first = next(iter(by_variant.values()))
        outcomes = " ".join(sorted({c.outcome.value for c in by_variant.values()}))
        tds = []
        for variant in variants:
            cell = by_variant.get(variant)
            if cell is None:
                tds.append("<td></td>")
                continue
            tds.append(
                f"<td class='cell' data-outcome='{cell.outcome.value}' "
                f"style='background:{COLOURS[cell.outcome]}' title='{_e(cell.reason)}' "
                f"onclick='show({index[id(cell)]})'>{cell.outcome.value}</td>"
            )
        lines.append(
            f"<tr class='scenario' data-category='{_e(first.category)}' "
            f"data-outcomes='{outcomes}'><td>{_e(first.title)} (<code>{_e(scenario)}</code>)</td>"
            + "".join(tds)
            + "</tr>"
        )
    lines.append("</table></section>")
    return "\n".join(lines)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)
