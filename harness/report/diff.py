"""Compare two runs cell by cell: which outcomes changed, for qualifying an upgrade.

Cells are matched by their key (engine, table type, query type, scenario, variant, query shape,
table format), which
leaves versions out, so a run before and after a Hudi or engine upgrade line up.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from harness.results.outcomes import Cell

KEY_FIELDS = ("engine", "table_type", "query_type", "scenario", "variant", "shape", "format")


@dataclass(frozen=True)
class Change:
    """One cell whose outcome differs; `None` on a side where the cell does not exist."""

    key: tuple[str, ...]
    old: Cell | None
    new: Cell | None

    def to_dict(self) -> dict[str, Any]:
        return {
            **dict(zip(KEY_FIELDS, self.key, strict=True)),
            "old": _side(self.old),
            "new": _side(self.new),
        }


def _side(cell: Cell | None) -> dict[str, Any] | None:
    if cell is None:
        return None
    return {"outcome": str(cell.outcome), "reason": cell.reason, "version": cell.engine_version}


def diff_cells(old: list[Cell], new: list[Cell]) -> list[Change]:
    """The cells whose outcome changed, appeared or disappeared, in a stable order."""
    before = {c.key: c for c in old}
    after = {c.key: c for c in new}
    changes = []
    for key in sorted(before.keys() | after.keys()):
        a, b = before.get(key), after.get(key)
        if a is None or b is None or a.outcome != b.outcome:
            changes.append(Change(key, a, b))
    return changes


def render_markdown(changes: list[Change], old_name: str, new_name: str) -> str:
    """A Markdown table of the changes (suitable for a CI job summary)."""
    lines = [f"# lakecompat diff: `{old_name}` → `{new_name}`", ""]
    if not changes:
        return "\n".join([*lines, "No cell changed its outcome."]) + "\n"
    lines += [
        f"{len(changes)} cell(s) changed.",
        "",
        "| engine | table type | query type | scenario | variant | shape | format | before "
        "| after | reason now |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for change in changes:
        old = change.old.outcome.value if change.old else "(absent)"
        new = change.new.outcome.value if change.new else "(absent)"
        reason = change.new.reason if change.new else ""
        cells = [*change.key, old, new, reason.replace("|", "\\|").replace("\n", " ")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def render_json(changes: list[Change], old_name: str, new_name: str) -> str:
    """The changes as a JSON document."""
    document = {"old": old_name, "new": new_name, "changes": [c.to_dict() for c in changes]}
    return json.dumps(document, indent=2, sort_keys=True) + "\n"
