"""The overview as Markdown: the first thing `matrix.md` shows (see `harness.report.overview`)."""

from __future__ import annotations

from lakecompat.harness.report.grouping import TYPE_COLUMNS, TYPE_ROWS, type_label
from lakecompat.harness.report.overview import Aside, Overview, Summary

FORMAT_NAMES = {"hudi": "Apache Hudi", "iceberg": "Apache Iceberg", "delta": "Delta Lake"}


def category_title(category: str) -> str:
    """`rename_column` → `rename column`."""
    return category.replace("_", " ")


def format_title(name: str) -> str:
    """A table format's name as users know it."""
    return FORMAT_NAMES.get(name, name)


def how_to_read(overview: Overview, page: bool = False) -> str:
    """The sentence under an overview's heading: whose configuration the cells speak for, and
    what their words mean; on the HTML `page`, the defaults are named under each engine's name
    and the colours have a shade more to explain."""
    defaults = ", ".join(f"{e}: `{v}`" for e, v in overview.defaults.items())
    shade = " (a pale colour: it fails on some of them only)" if page else ""
    return (
        "An engine's cell: its default configuration "
        f"({'named under its name' if page else defaults}), over copy-on-write and "
        f"merge-on-read tables and every query type it has: `PASS`, or what fails where{shade}. "
        "`PASS with X`: the engine's configuration X reads it right. `filters:` what queries "
        "that select, filter or count the changed columns give (snapshot reads). — : the writer "
        "refused the change. ⚠ regression, ✓ fixed upstream (against the known outcomes). "
        "Reads that fail without any schema change, and engines that read no table of the "
        "format, are said once under the table."
    )


def overview_markdown(overview: Overview) -> list[str]:
    """The operations table and the type-change grids of one table format."""
    name = format_title(overview.format)
    behind = (
        "Every cell behind a summary is in the tables per engine below (`matrix.html` lists "
        "them when a summary is clicked)."
    )
    lines = [f"## {name}: operations × engines", "", f"{how_to_read(overview)} {behind}", ""]
    header = ["operation", "writer", *overview.engines]
    lines += ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    category = None
    for row in overview.rows:
        if row.category != category:
            category = row.category
            lines.append(f"| **{category_title(category)}** |" + " |" * (len(header) - 1))
        cells = [_text(row.writer), *(_text(row.engines[e]) for e in overview.engines)]
        lines.append(f"| {_md(row.title)} (`{row.scenario}`) | " + " | ".join(cells) + " |")
    lines += ["", *(f"- {_md(text)}" for text in asides_text(overview))]
    if overview.writer_grid:
        lines += ["", *type_grids_markdown(overview)]
    return lines


def asides_text(overview: Overview) -> list[str]:
    """What the overview says once under its table (`Aside`), a sentence each; Markdown `code`
    spans mark names."""
    said = [_aside(overview.format, aside) for aside in overview.asides]
    if not any(a.kind == "baseline" for a in overview.asides) and overview.engines:
        said.insert(
            sum(a.kind == "unreadable" for a in overview.asides),
            "Without any schema change (the baseline table), every engine with a column reads "
            "every query type right.",
        )
    return said


def _aside(table_format: str, aside: Aside) -> str:
    reasons = "; ".join(aside.reasons)
    if aside.kind == "unreadable":
        return (
            f"`{aside.engine}` reads no {format_title(table_format)} table of this run, not "
            f"even the baseline's, so it has no column: {reasons}; its cells: {aside.text}."
        )
    if aside.kind == "baseline":
        left = (
            f" {aside.left_out} cell(s) of the rows fail the same way and are left out of them."
            if aside.left_out
            else ""
        )
        tables = ", ".join(f"`{s}`" for s in aside.scenarios)
        plural = "s" if len(aside.scenarios) > 1 else ""
        return (
            f"`{aside.engine}` fails without any schema change too (the baseline table{plural} "
            f"{tables}): {aside.text} ({reasons}).{left}"
        )
    names = ", ".join(f"`{s}`" for s in aside.scenarios)
    return (
        f"The {aside.text} reads of {len(aside.scenarios)} scenario(s) have nothing to read "
        f"({names}): {reasons}. Their cells are UNSUPPORTED, with what reading anyway gave."
    )


def type_grids_markdown(overview: Overview) -> list[str]:
    """The writer's grid, then one grid per engine: rows the type before, columns after."""
    name = format_title(overview.format)
    lines = [
        f"## {name}: type changes",
        "",
        "Rows: the column's type before the change; columns: its type after (`decimal` is "
        "decimal(10,2); an empty cell is a change the catalog does not make). First whether "
        f"the {name} writer accepts the change, then what each engine's default configuration "
        "reads after it (`*`: on some table or query types only; details in the tables below).",
    ]
    lines += ["", "### writer", "", *_grid(overview.writer_grid)]
    for engine in overview.engines:
        default = overview.defaults.get(engine, "")
        lines += ["", f"### {engine} (`{default}`)", "", *_grid(overview.grids[engine])]
    return lines


def _grid(pairs: dict[tuple[str, str], Summary]) -> list[str]:
    rows = [s for s in TYPE_ROWS if any((s, t) in pairs for t in TYPE_COLUMNS)]
    columns = [t for t in TYPE_COLUMNS if any((s, t) in pairs for s in TYPE_ROWS)]
    lines = [
        "| source \\ target | " + " | ".join(map(type_label, columns)) + " |",
        "|---" * (len(columns) + 1) + "|",
    ]
    for source in rows:
        cells = []
        for target in columns:
            summary = pairs.get((source, target))
            if source == target:
                cells.append("·")
            else:
                cells.append(_marked(summary.short, summary) if summary else "")
        lines.append(f"| {type_label(source)} | " + " | ".join(cells) + " |")
    return lines


def _text(summary: Summary) -> str:
    if summary.outcome is None:
        return "—" if summary.text.startswith("refused") else summary.text
    text = _marked(_md(summary.text), summary)
    if summary.shaped is not None and summary.shaped.outcome is not None:
        text += f" · filters: {_md(summary.shaped.text)}"
    return text


def _marked(text: str, summary: Summary) -> str:
    if summary.regression:
        text += " ⚠"
    if summary.fixed_upstream:
        text += " ✓"
    return text


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
