"""Compare two runs cell by cell: which outcomes changed, for qualifying an upgrade.

Cells are matched by their key (engine, table type, query type, scenario, variant, query shape,
table format), which leaves versions out, so a run before and after a Hudi or engine upgrade
line up. What a user needs first comes first: the cells whose outcome changed (regressions,
PASS to anything else, at the top), then counts of the rest: cells only one run has (two runs
of different selections differ in thousands of them) and cells whose reason changed while the
outcome stayed; those are listed only when asked (`--absent`, `--reasons`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from lakecompat.harness.results.outcomes import Cell, Outcome

KEY_FIELDS = ("engine", "table_type", "query_type", "scenario", "variant", "shape", "format")


@dataclass(frozen=True)
class Change:
    """One cell that differs; `None` on a side where the cell does not exist."""

    key: tuple[str, ...]
    old: Cell | None
    new: Cell | None

    @property
    def kind(self) -> str:
        """`regression`, `now passing`, `outcome changed`, `reason changed`, `only in new` or
        `only in old`."""
        if self.old is None:
            return "only in new"
        if self.new is None:
            return "only in old"
        if self.old.outcome == self.new.outcome:
            return "reason changed"
        if self.old.outcome is Outcome.PASS:
            return "regression"
        return "now passing" if self.new.outcome is Outcome.PASS else "outcome changed"

    def to_dict(self) -> dict[str, Any]:
        return {
            **dict(zip(KEY_FIELDS, self.key, strict=True)),
            "change": self.kind,
            "old": _side(self.old),
            "new": _side(self.new),
        }


#: The order of the outcome changes: regressions first, then what now passes, then the rest.
_ORDER = {"regression": 0, "now passing": 1, "outcome changed": 2}


@dataclass
class Diff:
    """Two runs compared: every differing cell, by what differs."""

    #: Cells of both runs whose outcome changed, regressions first.
    outcomes: list[Change] = field(default_factory=list)
    #: Cells of both runs with the same outcome and another reason.
    reasons: list[Change] = field(default_factory=list)
    #: Cells only the new run has.
    added: list[Change] = field(default_factory=list)
    #: Cells only the old run has.
    missing: list[Change] = field(default_factory=list)
    #: Cells of both runs with the same outcome and reason.
    unchanged: int = 0

    def summary(self) -> dict[str, int]:
        """How many cells differ in each way (zero counts included)."""
        kinds = [change.kind for change in self.outcomes]
        return {
            "outcome_changed": len(self.outcomes),
            "regressions": kinds.count("regression"),
            "now_passing": kinds.count("now passing"),
            "reason_changed": len(self.reasons),
            "only_in_new": len(self.added),
            "only_in_old": len(self.missing),
            "unchanged": self.unchanged,
        }


def _side(cell: Cell | None) -> dict[str, Any] | None:
    if cell is None:
        return None
    return {"outcome": str(cell.outcome), "reason": cell.reason, "version": cell.engine_version}


def diff_cells(old: list[Cell], new: list[Cell]) -> Diff:
    """The differences of two runs' cells, each list in a stable order."""
    before = {c.key: c for c in old}
    after = {c.key: c for c in new}
    found = Diff()
    for key in sorted(before.keys() | after.keys()):
        a, b = before.get(key), after.get(key)
        if a is None:
            found.added.append(Change(key, a, b))
        elif b is None:
            found.missing.append(Change(key, a, b))
        elif a.outcome != b.outcome:
            found.outcomes.append(Change(key, a, b))
        elif a.reason != b.reason:
            found.reasons.append(Change(key, a, b))
        else:
            found.unchanged += 1
    found.outcomes.sort(key=lambda change: _ORDER[change.kind])  # stable: keys stay in order
    return found


def summary_lines(diff: Diff, absent: bool, reasons: bool) -> list[str]:
    """The counts, as Markdown list items, each saying how to list what it counts."""
    counts = diff.summary()
    changed = f"- outcome changed: **{counts['outcome_changed']}**"
    if counts["outcome_changed"]:
        other = counts["outcome_changed"] - counts["regressions"] - counts["now_passing"]
        changed += (
            f" (regressions, PASS before and not now: {counts['regressions']}; "
            f"now PASS: {counts['now_passing']}; other: {other})"
        )

    def counted(label: str, count: int, listed: bool, flag: str) -> str:
        hint = "" if listed or not count else f" (`{flag}` lists them)"
        return f"- {label}: {count}{hint}"

    return [
        changed,
        counted("same outcome, other reason", counts["reason_changed"], reasons, "--reasons"),
        counted("only in NEW", counts["only_in_new"], absent, "--absent"),
        counted("only in OLD", counts["only_in_old"], absent, "--absent"),
        f"- unchanged: {counts['unchanged']}",
    ]


def render_markdown(
    diff: Diff, old_name: str, new_name: str, absent: bool = False, reasons: bool = False
) -> str:
    """The summary, then the cells whose outcome changed (regressions first); the cells only
    one run has with `absent`, those whose reason alone changed with `reasons` (suitable for a
    CI job summary)."""
    lines = [f"# lakecompat diff: `{old_name}` → `{new_name}`", ""]
    lines += [*summary_lines(diff, absent, reasons), ""]
    if not diff.outcomes:
        lines += ["No cell changed its outcome.", ""]
    lines += _table("Outcome changed", diff.outcomes, ("reason now",))
    if reasons:
        lines += _table("Same outcome, other reason", diff.reasons, ("reason before", "reason now"))
    if absent:
        lines += _table("Only in NEW", diff.added, ("reason",))
        lines += _table("Only in OLD", diff.missing, ("reason",))
    return "\n".join(lines).rstrip("\n") + "\n"


def _table(title: str, changes: list[Change], reasons: tuple[str, ...]) -> list[str]:
    """A section with one row per change: its key, both outcomes, and `reasons` (one column:
    the reason now, or the old one where the cell is gone; two: the old and the new)."""
    if not changes:
        return []
    columns = [field.replace("_", " ") for field in KEY_FIELDS] + ["before", "after", *reasons]
    lines = [f"## {title} ({len(changes)})", "", "| " + " | ".join(columns) + " |"]
    lines.append("|" + "---|" * len(columns))
    for change in changes:
        old = change.old.outcome.value if change.old else "(absent)"
        new = change.new.outcome.value if change.new else "(absent)"
        said = [c.reason for c in (change.old, change.new) if c is not None][-len(reasons) :]
        cells = [*change.key, old, new, *(_escaped(text) for text in said)]
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def _escaped(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_json(
    diff: Diff, old_name: str, new_name: str, absent: bool = False, reasons: bool = False
) -> str:
    """The summary and the outcome changes as a JSON document; the cells only one run has
    with `absent`, those whose reason alone changed with `reasons`."""
    document: dict[str, Any] = {
        "old": old_name,
        "new": new_name,
        "summary": diff.summary(),
        "changes": [c.to_dict() for c in diff.outcomes],
    }
    if absent:
        document["only_in_new"] = [c.to_dict() for c in diff.added]
        document["only_in_old"] = [c.to_dict() for c in diff.missing]
    if reasons:
        document["reason_changes"] = [c.to_dict() for c in diff.reasons]
    return json.dumps(document, indent=2, sort_keys=True) + "\n"
