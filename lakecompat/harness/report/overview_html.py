"""The overview as HTML: the first thing `matrix.html` shows (see `harness.report.overview`).

One table format at a time, in two views: operations × engines (shown first), and the
type-change grids of the writer and every engine; a switch above them chooses. Clicking a cell
lists every cell behind it.
"""

from __future__ import annotations

import html
import json

from lakecompat.harness.report.grouping import TYPE_COLUMNS, TYPE_ROWS, type_label
from lakecompat.harness.report.overview import Overview, Summary
from lakecompat.harness.report.overview_markdown import (
    asides_text,
    category_title,
    format_title,
    how_to_read,
)
from lakecompat.harness.results.outcomes import Outcome

#: A summary's colour: full where every read fails (or passes), pale where some pass.
FULL = {
    Outcome.PASS: "#2e7d32",
    Outcome.WRONG: "#c62828",
    Outcome.ERROR: "#ef6c00",
    Outcome.REJECTED: "#6a1b9a",
    Outcome.ENGINE_FAILED: "#000000",
}
PALE = {Outcome.WRONG: "#ef9a9a", Outcome.ERROR: "#ffcc80", Outcome.REJECTED: "#ce93d8"}


def overview_switch(shown: list[Overview]) -> str:
    """The bar above the overviews: which table format they show (where the run has several),
    and which view, operations × engines or the type-change grids. One format at a time, so
    that each format's overview starts at the top of the screen."""
    formats = [(o.format, format_title(o.format)) for o in shown]
    views = [("operations", "operations × engines")]
    if any(o.writer_grid for o in shown):
        views.append(("types", "type changes"))
    parts = []
    if len(formats) > 1:
        parts.append(
            f"<p class='formats'><b>Table format:</b> {_radios('shown-format', formats)}</p>"
        )
    if len(views) > 1:
        parts.append(f"<p class='views'><b>View:</b> {_radios('shown-view', views)}</p>")
    return f"<div class='switch' id='overview-switch'>{''.join(parts)}</div>" if parts else ""


def _radios(name: str, choices: list[tuple[str, str]]) -> str:
    """Radio buttons named `name`, the first chosen."""
    return "".join(
        f"<label><input type='radio' name='{name}' value='{_e(value)}'"
        f"{' checked' if n == 0 else ''}> {_e(label)}</label>"
        for n, (value, label) in enumerate(choices)
    )


def overview_html(overview: Overview, first: bool = True) -> str:
    """The overview of one table format, in two views: operations × engines (shown first) and
    the type-change grids of the writer and every engine. A format other than the `first` is
    hidden until the switch above the overviews (`overview_switch`) chooses it."""
    fmt = _e(overview.format)
    name = _e(format_title(overview.format))
    parts = [
        f"<section class='overview{'' if first else ' hidden'}' id='overview-{fmt}' "
        f"data-format='{fmt}'>",
        "<div class='view' data-view='operations'>",
        f"<h2>{name}: operations × engines</h2>",
        f"<p class='how'>{inline_code(how_to_read(overview, page=True))} Click a cell for every "
        "cell behind it.</p>",
        _operations(overview),
        _asides(overview),
        "</div>",
        _grids(overview),
        "</section>",
    ]
    return "\n".join(parts)


def _operations(overview: Overview) -> str:
    head = "<th>operation</th><th>writer</th>" + "".join(
        f"<th title='default configuration: {_e(overview.defaults.get(e, ''))}'>{_e(e)}"
        f"<small>{_e(overview.defaults.get(e, ''))}</small></th>"
        for e in overview.engines
    )
    lines = [f"<table class='operations'><thead><tr>{head}</tr></thead><tbody>"]
    category = None
    for row in overview.rows:
        if row.category != category:
            category = row.category
            lines.append(
                f"<tr class='category'><th colspan='{len(overview.engines) + 2}'>"
                f"{_e(category_title(category))}</th></tr>"
            )
        cells = [_summary_td(row.writer, "writer", row.scenario, row.writer.text)]
        cells += [
            _summary_td(row.engines[e], e, row.scenario, row.engines[e].text)
            for e in overview.engines
        ]
        lines.append(
            f"<tr class='operation' data-scenario='{_e(row.scenario)}'>"
            f"<td class='op' title='{_e(row.scenario)}'>{_e(row.title)}</td>"
            + "".join(cells)
            + "</tr>"
        )
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _asides(overview: Overview) -> str:
    """What the overview says once under its table, instead of in the rows."""
    items = "".join(f"<li>{inline_code(text)}</li>" for text in asides_text(overview))
    return f"<ul class='asides'>{items}</ul>" if items else ""


def _grids(overview: Overview) -> str:
    """The type-change view: the writer's grid, then each engine's (hidden until chosen)."""
    name = format_title(overview.format)
    heading = f"<div class='view hidden' data-view='types'><h2>{_e(name)}: type changes</h2>"
    if not overview.writer_grid:
        none = f"This run changed no column's type in {_e(name)} tables."
        return f"{heading}<p class='how'>{none}</p></div>"
    grids = [_grid("writer", "", overview.writer_grid)]
    grids += [_grid(e, overview.defaults.get(e, ""), overview.grids[e]) for e in overview.engines]
    return (
        f"{heading}<p class='how'>Rows: the column's type before the change; columns: its type "
        f"after (decimal is decimal(10,2)). First the writer (does the {_e(name)} writer accept "
        "the change?), then each engine in its default configuration (does it read the table "
        "after it?). *: on some table or query types only; refused: the writer refused the "
        "change. Click a cell for every cell behind it.</p>"
        f"<div class='grids'>{''.join(grids)}</div></div>"
    )


def _grid(name: str, default: str, pairs: dict[tuple[str, str], Summary]) -> str:
    rows = [s for s in TYPE_ROWS if any((s, t) in pairs for t in TYPE_COLUMNS)]
    columns = [t for t in TYPE_COLUMNS if any((s, t) in pairs for s in TYPE_ROWS)]
    head = "".join(f"<th>{_e(type_label(t))}</th>" for t in columns)
    caption = f"{name} <small>({default})</small>" if default else name
    lines = [
        f"<table class='grid' data-engine='{_e(name)}'><caption>{caption}</caption>"
        f"<thead><tr><th>before \\ after</th>{head}</tr></thead><tbody>"
    ]
    for source in rows:
        tds = [f"<th>{_e(type_label(source))}</th>"]
        for target in columns:
            summary = pairs.get((source, target))
            if source == target or summary is None:
                tds.append("<td class='none'>·</td>" if source == target else "<td></td>")
                continue
            scenario = f"type_change/{source}_to_{target}"
            tds.append(
                _summary_td(summary, name, scenario, summary.short, css="pair").replace(
                    "<td ", f"<td data-pair='{source}_to_{target}' ", 1
                )
            )
        lines.append("<tr>" + "".join(tds) + "</tr>")
    lines.append("</tbody></table>")
    return "".join(lines)


def _summary_td(summary: Summary, engine: str, scenario: str, text: str, css: str = "sum") -> str:
    """A clickable overview cell: its colour, its words, and the data its details need."""
    if summary.outcome is None:
        shown = "—" if summary.text.startswith("refused") and css == "sum" else text
        return f"<td class='none' title='{_e(summary.text)}'>{_e(shown)}</td>"
    if engine == "writer" and summary.outcome is Outcome.PASS:
        style = "color:#2e7d32"
    elif summary.partial and summary.outcome in PALE:
        style = f"background:{PALE[summary.outcome]}"
    else:
        style = f"background:{FULL[summary.outcome]};color:#fff"
    classes = [css, "writer"] if engine == "writer" else [css]
    if summary.regression:
        classes.append("regression")
        text += " ⚠"
    if summary.fixed_upstream:
        classes.append("fixed")
        text += " ✓"
    title = "\n".join([summary.text, *summary.reasons])
    shaped = summary.shaped
    reasons = summary.reasons
    if shaped is not None and shaped.outcome is not None:
        title += "\nfilters: " + "\n".join([shaped.text, *shaped.reasons])
        reasons = [*reasons, *(f"filters, {r}" for r in shaped.reasons)]
    click = "showSummary(this)" if engine != "writer" else "showWriter(this)"
    return (
        f"<td class='{' '.join(classes)}' style='{style}' data-engine='{_e(engine)}' "
        f"data-scenario='{_e(scenario)}' data-outcome='{summary.outcome.value}' "
        f"data-summary='{_e(summary.text)}' data-reasons='{_e(json.dumps(reasons))}' "
        f"title='{_e(title)}' onclick='{click}'>{_words(text)}{_shaped(shaped, css)}</td>"
    )


def _shaped(shaped: Summary | None, css: str) -> str:
    """The shaped queries' line under a summary: a small badge in their outcome's colour,
    their words where the cell has room (the operations table)."""
    if shaped is None or shaped.outcome is None:
        return ""
    colour = FULL[shaped.outcome]
    words = shaped.short if css == "pair" else shaped.text
    return (
        f"<br><small class='shapes' data-shapes-outcome='{shaped.outcome.value}' "
        f"style='color:#fff;background:{colour};padding:0 3px'>filters: {_e(words)}</small>"
    )


def _words(text: str) -> str:
    """`ERROR on snapshot · PASS with x`: the outcome bold, the variant that helps on a line
    of its own."""
    head, _, fix = text.partition(" · ")
    word, _, where = head.partition(" ")
    shown = f"<b>{_e(word)}</b> {_e(where)}".rstrip()
    return shown + (f" <small>· {_e(fix)}</small>" if fix else "")


def inline_code(text: str) -> str:
    """Escaped `text` with its Markdown `code` spans as <code> elements."""
    parts = text.split("`")
    return "".join(
        _e(part) if n % 2 == 0 else f"<code>{_e(part)}</code>" for n, part in enumerate(parts)
    )


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)
