"""The short Markdown summary for CI job pages, and the verdict lists every report opens with."""

from __future__ import annotations

from typing import Any

from lakecompat.engines.formats import ORIGINAL, format_named
from lakecompat.harness.report.junit import case_id
from lakecompat.harness.results.expectations import Judged, Verdict
from lakecompat.harness.results.hints import recorded
from lakecompat.harness.results.outcomes import Outcome, Totals, table_of

#: How many cells a verdict list shows before it says how many more there are.
LIST_LIMIT = 50


def engine_versions(info: dict[str, Any]) -> str:
    """`spark 3.5.9, hive 4.0.1, trino 483`; a reader's Hudi jars named when they are not the
    writer's (version skew), and where an engine ran when not as a local process
    (`--containers`: `trino 483 in container <image> (<runtime>)`)."""
    parts = []
    where = info.get("runs_in") or {}
    for name, version in info.get("engines", {}).items():
        text = f"{name} {version}"
        if info.get(f"{name}_hudi"):
            text += f" with Hudi {info[f'{name}_hudi']} jars"
        if where.get(name, "process") != "process":
            text += f" in {where[name]}"
        parts.append(text)
    return ", ".join(parts)


def writer_text(info: dict[str, Any]) -> str:
    """`Spark 3.5.3 + Hudi 1.2.0`, and `writing table version 6` where the run chose one; for
    a run of several table formats (`writers`), each format's writer."""
    writers = info.get("writers") or {ORIGINAL: info.get("writer", {})}
    return "; ".join(_one_writer(f, writer) for f, writer in writers.items())


def _one_writer(table_format: str, writer: dict[str, Any]) -> str:
    return format_named(table_format).writer_words(writer)


def settings_notes(info: dict[str, Any]) -> list[str]:
    """What a run read with beyond each engine's variants, in Markdown: every `--set` setting
    (`run.json`'s `engine_settings`), one note per engine, each key it took unchecked saying
    why (from `unchecked_settings`); none without settings."""
    unchecked = info.get("unchecked_settings") or {}
    notes = []
    for engine, settings in (info.get("engine_settings") or {}).items():
        given = ", ".join(f"`{key}={value}`" for key, value in settings.items())
        note = f"{engine} read with {given} (`--set`, added to every variant)"
        for key, why in unchecked.get(engine, {}).items():
            note += f"; `{key}` was not checked before the run: {why}"
        notes.append(note)
    return notes


def verdict_units(judged: list[Judged]) -> list[Judged]:
    """What the verdicts count: every read (a cell not `REJECTED`), and each table the writer
    refused once, by its first regression cell or else its first cell (the table's other
    `REJECTED` cells, one per reader, query type, variant and shape, say the same)."""
    reads = [j for j in judged if j.cell.outcome is not Outcome.REJECTED]
    refused: dict[tuple[str, str, str], Judged] = {}
    for row in judged:
        if row.cell.outcome is Outcome.REJECTED:
            table = table_of(row.cell)
            first = refused.setdefault(table, row)
            if row.verdict is Verdict.REGRESSION and first.verdict is not Verdict.REGRESSION:
                refused[table] = row
    return reads + list(refused.values())


def verdict_counts(judged: list[Judged]) -> str:
    """`N as expected, N regressions, N fixed upstream` of the reads and the refused tables
    (`verdict_units`)."""
    units = verdict_units(judged)
    regressions = sum(j.verdict is Verdict.REGRESSION for j in units)
    fixed = sum(j.verdict is Verdict.FIXED_UPSTREAM for j in units)
    expected = len(units) - regressions - fixed
    return f"{expected} as expected, {regressions} regressions, {fixed} fixed upstream"


def known_failure(judged: Judged) -> bool:
    """A cell that fails (not PASS, not a query type the engine lacks), as known."""
    return judged.verdict is Verdict.AS_EXPECTED and judged.cell.outcome not in (
        Outcome.PASS,
        Outcome.UNSUPPORTED,
    )


def verdict_line(judged: list[Judged]) -> str:
    """`N regressions, N fixed upstream, N known failures`: what a run's console says, of the
    reads and the refused tables (`verdict_units`); a known refusal is said by the totals
    ("N of M tables refused by the writer"), not counted as a known failure."""
    units = verdict_units(judged)
    regressions = sum(j.verdict is Verdict.REGRESSION for j in units)
    fixed = sum(j.verdict is Verdict.FIXED_UPSTREAM for j in units)
    known = sum(known_failure(j) and j.cell.outcome is not Outcome.REJECTED for j in units)
    return tally_line(regressions, fixed, known)


def tally_line(regressions: int, fixed: int, known: int) -> str:
    """`verdict_line` of counts."""
    return (
        f"{counted(regressions, 'regression')}, {fixed} fixed upstream, "
        f"{counted(known, 'known failure')}"
    )


def counted(number: int, noun: str) -> str:
    """`1 regression`, `2 regressions`."""
    return f"{number} {noun}" + ("" if number == 1 else "s")


def unfinished_notice(info: dict[str, Any], cells: int) -> str:
    """What a report of a run that did not finish says first ("" for a finished run): its
    cells are only those measured before the run stopped, and how to complete it."""
    status = info.get("status", "complete")
    if status == "complete":
        return ""
    resume = f"complete it with `{recorded(info, 'run --resume {run}{reports}')}`"
    missing = "the tables and engines it had not reached are missing from this report"
    measured = f"{cells} cell" + ("" if cells == 1 else "s")
    if status == "interrupted":
        return f"Interrupted: the run stopped after {measured}, so {missing}; {resume}."
    if status == "failed":
        error = info.get("error") or "no reason recorded"
        return f"Failed: the run stopped after {measured} ({error}), so {missing}; {resume}."
    return (
        f"Not finished: {measured} so far (the run was still running, or its process was "
        f"killed), so {missing}; when it is not running, {resume}."
    )


def verdict_sections(
    judged: list[Judged], limit: int | None = LIST_LIMIT, finished: bool = True
) -> list[str]:
    """Markdown lists of the regressions and the fixed-upstream cells, or a line saying none
    (of the cells measured so far, when the run did not finish)."""
    lines: list[str] = []
    none = (
        "No regressions: every cell is as expected."
        if finished
        else "No regressions among the cells measured before the run stopped."
    )
    for verdict, heading, empty in (
        (Verdict.REGRESSION, "Regressions", none),
        (Verdict.FIXED_UPSTREAM, "Fixed upstream", ""),
    ):
        rows = [j for j in judged if j.verdict is verdict]
        if not rows:
            if empty:
                lines += [f"**{empty}**", ""]
            continue
        lines += [f"## {heading} ({len(rows)})", ""]
        lines += ["| cell | expected | measured | reason |", "|---|---|---|---|"]
        for row in rows[:limit]:
            why = row.cell.reason if row.cell.reason else (row.known.reason if row.known else "")
            if verdict is Verdict.FIXED_UPSTREAM and row.known:
                why = f"known: {row.known.reason}"
                if row.known.link:
                    why += f" ({row.known.link})"
            lines.append(
                f"| `{case_id(row.cell)}` | {row.expected.value} | {row.cell.outcome.value} "
                f"| {_md(why)} |"
            )
        if limit is not None and len(rows) > limit:
            lines.append(f"| … and {len(rows) - limit} more (see matrix.md) | | | |")
        lines.append("")
    return lines


def render_summary(info: dict[str, Any], judged: list[Judged]) -> str:
    """`summary.md`: what a CI job page should show, short enough to read at a glance."""
    engines = engine_versions(info)
    notice = unfinished_notice(info, len(judged))
    lines = [
        f"# lakecompat run `{info.get('run_id', '?')}`",
        "",
        *([f"**{notice}**", ""] if notice else []),
        f"Writer {writer_text(info)}; readers {engines}.",
        *(f"- Setting: {_md(note)}" for note in settings_notes(info)),
        *_shard_lines(info),
        "",
        *_totals_lines(judged),
        f"- Against the known outcomes: {verdict_counts(judged)}",
        "",
        *verdict_sections(judged, finished=not notice),
        "Full report: `matrix.html` (or `matrix.md`); per-cell data: `results.json`.",
    ]
    return "\n".join(lines) + "\n"


def _totals_lines(judged: list[Judged]) -> list[str]:
    """The tables and what the reads gave, each refused table counted once."""
    totals = Totals.of(j.cell for j in judged)
    return [
        f"- Tables: {totals.tables}, {totals.refused} refused by the writer (each said once in "
        "matrix.md, not once per reader)",
        f"- Reads: {totals.read} ({totals.outcomes_text()}; junit.xml has a test case for each "
        f"of the {len(judged)} cells, those of the refused tables too)",
    ]


def _shard_lines(info: dict[str, Any]) -> list[str]:
    """What a shard or a merge of shards says about itself (nothing for other runs)."""
    shard = info.get("shard")
    if isinstance(shard, dict):
        return [
            "",
            f"Shard {shard['index']}/{shard['count']}: {len(shard['tables'])} tables and the "
            "baselines; merge every shard's run folder with `lakecompat merge`.",
        ]
    merged = info.get("merged_from")
    if merged:
        return ["", f"Merged from {len(merged)} shards (`run.json` lists their run folders)."]
    return []


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
