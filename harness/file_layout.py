"""Which schemas a written table's live files carry, and whether the scenario's case is there.

A scenario about reading across a schema change only tests something when files written
before the change are still live after its steps (an upsert into a copy-on-write table
rewrites every file group it touches), and, where it writes after the change, files written
after it too. The writer lays the seed rows out one file group per row so that rows a step
does not touch keep their old files; this module checks the result and describes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engines.hudi_files import DataFile
from harness import scenario as sc

NEEDS = ("old_files", "new_files")
_MISSING = {
    "old_files": "no live file was written before the schema change: the steps rewrote every "
    "file group that held the old schema",
    "new_files": "no live file was written after the schema change",
}


def changes(spec: sc.ScenarioSpec) -> list[int]:
    """The indices of the steps that change the schema (DDL, or a write with its own schema)."""
    return [
        index
        for index, step in enumerate(spec.steps)
        if step.op in sc.SCHEMA_OPS or (isinstance(step, sc.Upsert) and step.schema_ is not None)
    ]


def needs(spec: sc.ScenarioSpec) -> tuple[str, ...]:
    """What the table must hold after the steps: the scenario's `needs`, or the default.

    The default for a scenario that changes the schema: files written before the first change
    (`old_files`) and, when an insert or upsert comes at or after the last change, files
    written after it (`new_files`). Without a schema change: nothing.
    """
    if spec.needs is not None:
        return tuple(spec.needs)
    changed = changes(spec)
    if not changed:
        return ()
    writes_after = any(step.op in ("insert", "upsert") for step in spec.steps[changed[-1] :])
    return ("old_files", "new_files") if writes_after else ("old_files",)


def describe(
    spec: sc.ScenarioSpec,
    files: Sequence[DataFile],
    instants: Sequence[tuple[str, str] | None],
) -> dict[str, Any]:
    """The evidence of a table's live files: who wrote them, in which schema, and what is missing.

    `instants[i]` is the newest completed commit after the seed rows (i = 0) or after
    `steps[i-1]`; a file belongs to the first of them at or after its own instant.
    """
    changed = changes(spec)
    groups: dict[tuple[int, tuple[str, ...]], dict[str, Any]] = {}
    for data_file in files:
        state = _state_of(data_file.instant, instants)
        entry = groups.setdefault(
            (state, data_file.columns),
            {
                "written_by": _step_label(spec, state),
                "when": _when(state - 1, changed),
                "base": 0,
                "log": 0,
                "columns": ", ".join(data_file.columns),
            },
        )
        entry[data_file.kind] += 1
    required = needs(spec)
    layout: dict[str, Any] = {"file_groups": len({f.file_group for f in files})}
    layout["groups"] = [groups[key] for key in sorted(groups)]
    present = {
        "old_files": any(key[0] - 1 < changed[0] for key in groups) if changed else True,
        "new_files": any(key[0] - 1 >= changed[-1] for key in groups) if changed else True,
    }
    layout["needs"] = list(required)
    layout["unmet"] = [f"{need}: {_MISSING[need]}" for need in required if not present[need]]
    layout["summary"] = summary(layout)
    return layout


def unlisted(spec: sc.ScenarioSpec, failure: str) -> dict[str, Any]:
    """The evidence when the live files could not be listed or read: a scenario that needs
    old or new files cannot be checked, so that need counts as unmet."""
    required = list(needs(spec))
    layout: dict[str, Any] = {"file_groups": 0, "groups": [], "needs": required}
    layout["unmet"] = [f"the live files could not be listed: {failure}"] if required else []
    layout["error"] = failure
    layout["summary"] = summary(layout)
    return layout


def summary(layout: dict[str, Any]) -> str:
    """Lines for people: `3 file groups`, `seed rows, before the schema change: 2 base files
    [id int, ...]`, ..., and what the scenario needs."""
    if layout.get("error"):
        return f"the live files could not be listed: {layout['error']}"
    parts = [f"{layout['file_groups']} file group{'s' if layout['file_groups'] != 1 else ''}"]
    for group in layout["groups"]:
        counted = [
            f"{n} {kind} file{'s' if n != 1 else ''}"
            for kind in ("base", "log")
            if (n := group[kind])
        ]
        when = f", {group['when']}" if group["when"] else ""
        columns = group["columns"] or "deletes only"
        parts.append(f"{group['written_by']}{when}: {' + '.join(counted)} [{columns}]")
    if layout["needs"]:
        state = "missing: " + "; ".join(layout["unmet"]) if layout["unmet"] else "present"
        parts.append(f"the scenario needs {' and '.join(layout['needs'])}: {state}")
    return "\n".join(parts)


def _state_of(instant: str, instants: Sequence[tuple[str, str] | None]) -> int:
    for index, newest in enumerate(instants):
        if newest is not None and newest[0] >= instant:
            return index
    return len(instants)  # written after the last step we know of (not expected)


def _step_label(spec: sc.ScenarioSpec, state: int) -> str:
    if state == 0:
        return "seed rows"
    if state > len(spec.steps):
        return "an unknown commit"
    return f"steps[{state - 1}] {spec.steps[state - 1].op}"


def _when(step: int, changed: list[int]) -> str:
    if not changed:
        return ""
    if step < changed[0]:
        return "before the schema change"
    if step >= changed[-1]:
        return "after the schema change"
    return "between the schema changes"
