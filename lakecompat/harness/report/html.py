"""`matrix.html`: the matrix as one self-contained page (no network fetches), from the cells.

The page opens with the overview of each table format, one format at a time (operations ×
engines, the type-change grids: `harness.report.overview_html`), then the regressions and the
known failures that now pass, then every cell by engine: folded sections whose tables (a row
per scenario, a column per variant, a table per table type and query type) the browser builds
from the page's data block when one is opened. Scenarios the writer refused and query types an
engine lacks stay folded unless asked for. Clicking a cell opens its details in a panel over the
side of the window away from it, so that the page does not move (verdict, reason, known reason
and link, what ran, diff sample, error, the table's live files, engine log).
"""

from __future__ import annotations

import html
import json
from importlib.resources import files
from typing import Any

from lakecompat.harness.report.grouping import TABLE_TYPE_NAMES
from lakecompat.harness.report.junit import case_id
from lakecompat.harness.report.overview import default_variants, overviews
from lakecompat.harness.report.overview_html import inline_code, overview_html, overview_switch
from lakecompat.harness.report.summary import (
    engine_versions,
    unfinished_notice,
    verdict_counts,
    writer_text,
)
from lakecompat.harness.results.expectations import Judged, Verdict
from lakecompat.harness.results.hints import recorded
from lakecompat.harness.results.outcomes import Outcome, summary_line
from lakecompat.harness.scenario.shapes import SHAPES

COLOURS = {
    Outcome.PASS: "#2e7d32",
    Outcome.WRONG: "#c62828",
    Outcome.ERROR: "#ef6c00",
    Outcome.REJECTED: "#6a1b9a",
    Outcome.UNSUPPORTED: "#757575",
    Outcome.ENGINE_FAILED: "#000000",
}
#: What both pages' scripts use: HTML escaping, and the values of a filter's ticked boxes.
SCRIPT_HELPERS = """
const ENTITIES = {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'};
function esc(s) { return String(s).replace(/[&<>"]/g, ch => ENTITIES[ch]); }
const wanted = name => Array.from(
  document.querySelectorAll('input[name=' + name + ']:checked')).map(i => i.value);
"""
#: The fields of a cell in the page's data block, in order (each an index into `strings`, but
#: `scenario`, an index into `scenarios`, and `seconds`).
FIELDS = (
    *("engine", "engine_version", "reader_hudi", "table_type", "query_type", "scenario"),
    *("variant", "outcome", "verdict", "expected", "reason", "known_reason", "known_link"),
    *("sql", "sample", "error", "log", "files", "table_from", "shape", "format", "seconds"),
)


def _unfinished(info: dict[str, Any], cells: int) -> list[str]:
    """The notice of a run that did not finish, first on the page (nothing for one that did)."""
    notice = unfinished_notice(info, cells)
    if not notice:
        return []
    return [f"<p class='unfinished' id='unfinished'><b>{inline_code(notice)}</b></p>"]


def render_html(info: dict[str, Any], judged: list[Judged]) -> str:
    """The page: the overview of each table format first, then the verdicts, then every cell
    by engine (built in the browser from the page's data block when a section is opened)."""
    cells = [j.cell for j in judged]
    engines = list(dict.fromkeys(c.engine for c in cells))
    categories = sorted({c.category for c in cells})
    # The query shapes of the run, `all` (SELECT *) first, the others as `SHAPES` lists them.
    shapes = [s for s in SHAPES if any(c.shape == s for c in cells)]
    formats = list(dict.fromkeys(c.format for c in cells))
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>lakecompat {_e(info.get('run_id', ''))}</title>",
        f"<style>{_resource('matrix.css')}</style></head><body><main>",
        "<h1>lakecompat compatibility matrix</h1>",
        *_unfinished(info, len(cells)),
        f"<p class='run'>Run <code>{_e(info.get('run_id', '?'))}</code> · writer: "
        f"{_e(writer_text(info))} · readers: " + _e(engine_versions(info)) + "</p>",
        f"<p class='run' id='totals'><b>{_e(summary_line(cells))}</b> · against the known "
        f"outcomes: <b id='verdicts'>{_e(verdict_counts(judged))}</b>"
        + _verdict_links(judged)
        + "</p>",
    ]
    shown = overviews(info, judged)
    parts.append(overview_switch(shown))
    parts += [overview_html(overview, first=n == 0) for n, overview in enumerate(shown)]
    index = {id(row.cell): n for n, row in enumerate(judged)}
    parts += [
        _verdict_list(judged, Verdict.REGRESSION, "Regressions", index),
        _verdict_list(judged, Verdict.FIXED_UPSTREAM, "Fixed upstream", index),
        "<h2 id='every-cell'>Every cell, by engine</h2>",
        "<p class='legend'>"
        + "".join(f"<span style='background:{c}'>{o.value}</span>" for o, c in COLOURS.items())
        + "⚠ regression (outlined yellow) · ✓ fixed upstream (outlined cyan)</p>",
        filter_boxes("engine", engines),
        filter_boxes("outcome", [o.value for o in Outcome]),
        filter_boxes("verdict", [v.value for v in Verdict]),
        filter_boxes("category", categories),
        filter_boxes("shape", shapes),
        *([filter_boxes("format", formats)] if len(formats) > 1 else []),
        "<p class='filters'><label><input type='checkbox' id='show-not-read'> show what no "
        "engine read: scenarios the writer refused (REJECTED) and query types an engine does "
        "not have (UNSUPPORTED)</label> · <a href='#' id='open-all' "
        "onclick='openAll();return false'>open every engine</a></p>",
    ]
    parts += [_engine_section(engine, judged) for engine in engines]
    payload = json.dumps(page_data(info, judged), separators=(",", ":")).replace("</", "<\\/")
    parts += [
        "</main><div id='details'></div>",
        f"<script type='application/json' id='data'>{payload}</script>",
        f"<script>{SCRIPT_HELPERS}{_resource('matrix.js')}</script></body></html>",
    ]
    return "\n".join(parts) + "\n"


def page_data(info: dict[str, Any], judged: list[Judged]) -> dict[str, Any]:
    """Every cell as a row of indexes into one list of distinct strings: evidence that many
    cells share (a table's files, a query, a reason) is in the page once."""
    strings: dict[str, int] = {"": 0}
    scenarios: dict[str, int] = {}
    scenario_rows: list[list[str]] = []

    def text(value: object) -> int:
        return strings.setdefault(str(value or ""), len(strings))

    rows = []
    cells = [row.cell for row in judged]
    for row in judged:
        cell, evidence, known = row.cell, row.cell.evidence, row.known
        if cell.scenario not in scenarios:
            scenarios[cell.scenario] = len(scenarios)
            scenario_rows.append([cell.scenario, cell.title, cell.category])
        values = {
            **{name: getattr(cell, name) for name in FIELDS[:5]},
            "variant": cell.variant,
            "outcome": cell.outcome.value,
            "verdict": row.verdict.value,
            "expected": row.expected.value,
            "reason": cell.reason,
            "known_reason": known.reason if known else "",
            "known_link": known.link if known else "",
            "sql": evidence.sql,
            "sample": "\n".join(json.dumps(s, sort_keys=True) for s in evidence.sample),
            "error": evidence.error,
            "log": evidence.log,
            "files": (evidence.files or {}).get("summary", ""),
            "table_from": cell.table_from,
            "shape": cell.shape,
            "format": cell.format,
        }
        rows.append(
            [
                scenarios[cell.scenario]
                if name == "scenario"
                else round(cell.seconds, 2)
                if name == "seconds"
                else text(values[name])
                for name in FIELDS
            ]
        )
    return {
        "run_id": str(info.get("run_id", "<run id>")),
        "repro": recorded(info, "repro {run}"),
        "fields": list(FIELDS),
        "colours": {o.value: c for o, c in COLOURS.items()},
        "table_types": TABLE_TYPE_NAMES,
        "defaults": {
            f: default_variants(info, judged, f) for f in dict.fromkeys(c.format for c in cells)
        },
        "scenarios": scenario_rows,
        "strings": list(strings),
        "cells": rows,
    }


def _verdict_links(judged: list[Judged]) -> str:
    regressions = sum(j.verdict is Verdict.REGRESSION for j in judged)
    if not regressions:
        return ""
    return f" · <a href='#regression'>the {regressions} regressions</a>"


def _verdict_list(judged: list[Judged], verdict: Verdict, heading: str, index: dict) -> str:
    rows = [j for j in judged if j.verdict is verdict]
    anchor = verdict.name.lower()
    if not rows:
        return f"<h2 id='{anchor}'>{heading}: none</h2>"
    items = "".join(
        f"<li><a href='#' onclick='showCell({index[id(r.cell)]});return false'>"
        f"<code>{_e(case_id(r.cell))}</code></a>: expected {r.expected.value}, measured "
        f"{r.cell.outcome.value}. {inline_code(r.cell.reason)}</li>"
        for r in rows
    )
    return (
        f"<h2 id='{anchor}'>{heading} ({len(rows)})</h2><ul class='verdicts {anchor}'>{items}</ul>"
    )


def filter_boxes(name: str, values: list[str]) -> str:
    """A row of ticked boxes named `name`, one per value (the page's filters)."""
    boxes = "".join(
        f"<label><input type='checkbox' name='{name}' value='{_e(v)}' checked> {_e(v)}</label>"
        for v in values
    )
    return f"<p class='filters'><b>{name}:</b> {boxes}</p>"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _engine_section(engine: str, judged: list[Judged]) -> str:
    """An engine's every cell, folded: the browser builds its tables when it is opened."""
    mine = [j.cell for j in judged if j.cell.engine == engine]
    version = mine[0].engine_version if mine else ""
    return (
        f"<details class='engine' data-engine='{_e(engine)}'><summary>{_e(engine)} "
        f"{_e(version)}: {_e(summary_line(mine))}</summary>"
        "<div class='tables'></div></details>"
    )


def _resource(name: str) -> str:
    """A file shipped beside this module (the page's style and script)."""
    return (files("lakecompat.harness.report") / name).read_text(encoding="utf-8")
