"""Qualify an upgrade: compare a baseline version point with a candidate, cell by cell.

A version point is a run: the writer's Spark and Hudi and every reader's version. Cells are
matched by their key (engine, table type, query type, scenario, variant), which leaves versions
out. Each matched pair gets a `Change`; the report lists the cells that break first (they
passed on the baseline and do not on the candidate), then the cells that now pass, then the
failures whose outcome changed, then the failures that stayed, with both reasons side by side.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from lakecompat.harness.report.junit import case_id
from lakecompat.harness.results.outcomes import Cell, Outcome


class Change(StrEnum):
    """What happened to one cell between the baseline and the candidate, in report order."""

    NEWLY_FAILING = "newly failing"
    NEWLY_PASSING = "newly passing"
    FAILURE_CHANGED = "failure changed"
    STILL_FAILING = "still failing"
    ONLY_BASELINE = "only in baseline"
    ONLY_CANDIDATE = "only in candidate"
    UNCHANGED = "unchanged"


#: What each section of a report says about its cells.
EXPLANATIONS = {
    Change.NEWLY_FAILING: "passed on the baseline and do not pass on the candidate: the "
    "upgrade breaks them",
    Change.NEWLY_PASSING: "did not pass on the baseline and pass on the candidate",
    Change.FAILURE_CHANGED: "fail on both, with a different outcome",
    Change.STILL_FAILING: "fail on both with the same outcome (compare the reasons)",
    Change.ONLY_BASELINE: "were not run on the candidate (a different selection of scenarios, "
    "engines or table types)",
    Change.ONLY_CANDIDATE: "were not run on the baseline",
    Change.UNCHANGED: "pass on both, or are unsupported on both",
}


def classify(baseline: Cell | None, candidate: Cell | None) -> Change:
    """The change of one cell; `None` is a side where the cell was not run."""
    if candidate is None:
        return Change.ONLY_BASELINE
    if baseline is None:
        return Change.ONLY_CANDIDATE
    before, after = baseline.outcome, candidate.outcome
    if before is Outcome.PASS:
        return Change.UNCHANGED if after is Outcome.PASS else Change.NEWLY_FAILING
    if after is Outcome.PASS:
        return Change.NEWLY_PASSING
    if before is not after:
        return Change.FAILURE_CHANGED
    return Change.UNCHANGED if before is Outcome.UNSUPPORTED else Change.STILL_FAILING


@dataclass(frozen=True)
class Point:
    """One side of a qualification: a name and the versions its cells ran with."""

    name: str
    versions: dict[str, str]

    @classmethod
    def of_run(cls, name: str, info: dict[str, Any], cells: list[Cell]) -> Point:
        """The point of a run: its writer's versions (each format's, for a run of several
        formats), then each engine's (from its cells)."""
        writer = info.get("writer") or (cells[0].writer if cells else {})
        writers = info.get("writers") or {"": writer}
        versions = {
            f"{table_format} writer {k}".lstrip(): str(v)
            for table_format, one in writers.items()
            for k, v in sorted(one.items())
        }
        for cell in cells:
            versions.setdefault(cell.engine, cell.engine_version)
            # The format jars a reader carried where they are not the writer's (version skew).
            written = dict(writers.get(cell.format) or writer).get(cell.format)
            if cell.reader_hudi and cell.reader_hudi != written:
                versions.setdefault(f"{cell.engine} {cell.format}", cell.reader_hudi)
        return cls(name, versions)

    def label(self) -> str:
        """`name (writer hudi 1.2.0, trino 483, ...)`."""
        described = ", ".join(f"{k} {v}" for k, v in self.versions.items())
        return f"{self.name} ({described})" if described else self.name


@dataclass(frozen=True)
class Row:
    """One cell key with its two sides."""

    key: tuple[str, ...]
    change: Change
    baseline: Cell | None
    candidate: Cell | None

    @property
    def cell(self) -> Cell:
        """The side that exists (the candidate's when both do)."""
        cell = self.candidate or self.baseline
        assert cell is not None
        return cell


@dataclass
class Qualification:
    """The comparison of two version points."""

    baseline: Point
    candidate: Point
    rows: list[Row] = field(default_factory=list)

    def of(self, change: Change) -> list[Row]:
        """The rows with this change, in the order of the matrix."""
        return [row for row in self.rows if row.change is change]

    def counts(self) -> dict[Change, int]:
        """How many cells each change has (zero counts included)."""
        counts = {change: 0 for change in Change}
        for row in self.rows:
            counts[row.change] += 1
        return counts

    @property
    def breaks(self) -> bool:
        """The candidate breaks a cell that passed on the baseline."""
        return any(row.change is Change.NEWLY_FAILING for row in self.rows)


def qualify(
    baseline: Point, base_cells: list[Cell], candidate: Point, cand_cells: list[Cell]
) -> Qualification:
    """Match the cells of two points by key and classify every pair."""
    before = {c.key: c for c in base_cells}
    after = {c.key: c for c in cand_cells}
    order = list(dict.fromkeys([*before, *after]))
    rows = []
    for key in order:
        old, new = before.get(key), after.get(key)
        rows.append(Row(key, classify(old, new), old, new))
    return Qualification(baseline, candidate, rows)


def counts_line(result: Qualification) -> str:
    """`N newly failing, N newly passing, ...` (zero counts included)."""
    return ", ".join(f"{n} {change.value}" for change, n in result.counts().items())


def _side(cell: Cell | None) -> str:
    if cell is None:
        return "(not run)"
    return cell.outcome.value


def _reason(cell: Cell | None) -> str:
    if cell is None:
        return ""
    return cell.reason.replace("|", "\\|").replace("\n", " ")


def render_markdown(result: Qualification, limit: int = 200) -> str:
    """The report for a CI job summary: counts, then one table per change, breaks first."""
    lines = [
        "# lakecompat qualification",
        "",
        f"- baseline: **{result.baseline.label()}**",
        f"- candidate: **{result.candidate.label()}**",
        "",
        f"**{counts_line(result)}**",
        "",
        "The upgrade breaks cells that passed on the baseline."
        if result.breaks
        else "The upgrade breaks no cell that passed on the baseline.",
    ]
    for change in Change:
        rows = result.of(change)
        if change is Change.UNCHANGED or not rows:
            continue
        lines += [
            "",
            f"## {change.value.capitalize()} ({len(rows)})",
            "",
            f"Cells that {EXPLANATIONS[change]}.",
            "",
            "| cell | baseline | candidate | baseline reason | candidate reason |",
            "|---|---|---|---|---|",
        ]
        for row in rows[:limit]:
            before, after = _reason(row.baseline), _reason(row.candidate)
            if before and before == after:
                after = "(same)"
            lines.append(
                f"| `{case_id(row.cell)}` | {_side(row.baseline)} | {_side(row.candidate)} | "
                f"{before} | {after} |"
            )
        if len(rows) > limit:
            lines.append(f"| ... and {len(rows) - limit} more (see qualify.json) | | | | |")
    return "\n".join(lines) + "\n"


def _cell_dict(cell: Cell | None, evidence: bool) -> dict[str, Any] | None:
    if cell is None:
        return None
    data = {
        "outcome": cell.outcome.value,
        "reason": cell.reason,
        "engine_version": cell.engine_version,
        "writer": cell.writer,
    }
    if evidence:
        data["evidence"] = cell.to_dict()["evidence"]
    return data


def to_document(result: Qualification) -> dict[str, Any]:
    """The qualification as JSON-ready data: every cell, with both sides' evidence where the
    cell did not stay unchanged (the run folders keep the rest)."""
    fields = ("engine", "table_type", "query_type", "scenario", "variant", "shape", "format")
    return {
        "baseline": {"name": result.baseline.name, "versions": result.baseline.versions},
        "candidate": {"name": result.candidate.name, "versions": result.candidate.versions},
        "breaks": result.breaks,
        "counts": {change.value: n for change, n in result.counts().items()},
        "cells": [
            {
                "id": case_id(row.cell),
                **dict(zip(fields, row.key, strict=True)),
                "category": row.cell.category,
                "change": row.change.value,
                "baseline": _cell_dict(row.baseline, row.change is not Change.UNCHANGED),
                "candidate": _cell_dict(row.candidate, row.change is not Change.UNCHANGED),
            }
            for row in result.rows
        ],
    }


def render_json(result: Qualification) -> str:
    """The qualification as a JSON document."""
    return json.dumps(to_document(result), indent=2, sort_keys=True) + "\n"
