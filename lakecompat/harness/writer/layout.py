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

from lakecompat.harness.scenario import model as sc
from lakecompat.harness.scenario.model import changes, needs
from lakecompat.harness.writer.base import DataFile

#: The kinds of live files, in the order a summary counts them: Hudi's base files and log
#: blocks, Iceberg's data files and delete files (position deletes, deletion vectors).
_KIND_FAMILIES = (("base", "log"), ("data", "delete"))
FILE_KINDS = tuple(kind for family in _KIND_FAMILIES for kind in family)

_MISSING = {
    "older_writer_files": "no live file was written by the older Hudi release: the steps after "
    "the writer's upgrade rewrote every file group it wrote",
    "old_files": "no live file was written before the schema change: the steps rewrote every "
    "file group that held the old schema",
    "new_files": "no live file was written after the schema change",
}


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
                "written_by": _step_label(spec, state) + _release(spec, state),
                "when": _when(state - 1, changed),
                **dict.fromkeys(_family(data_file.kind), 0),
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
        "older_writer_files": spec.upgrade is not None
        and any(key[0] <= spec.upgrade[0] for key in groups),
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


def note(layout: dict[str, Any], line: str) -> None:
    """Add a line of evidence about the table (for example its table version) to `layout`."""
    layout.setdefault("notes", []).append(line)
    layout["summary"] = summary(layout)


def unmet(layout: dict[str, Any], what: str) -> None:
    """Record that the table lacks something the run asked for (its cells then say so as an
    `ERROR`, instead of answers about another table), and say it in the summary."""
    layout.setdefault("unmet", []).append(what)
    note(layout, f"not as asked: {what}")


def summary(layout: dict[str, Any]) -> str:
    """Lines for people: `3 file groups`, `seed rows, before the schema change: 2 base files
    [id int, ...]`, ..., what the scenario needs, and the notes."""
    notes = layout.get("notes", [])
    if layout.get("error"):
        return "\n".join([f"the live files could not be listed: {layout['error']}", *notes])
    # Iceberg has no file groups: each data file stands alone, with its delete files.
    unit = "data file" if any("data" in group for group in layout["groups"]) else "file group"
    parts = [f"{layout['file_groups']} {unit}{'s' if layout['file_groups'] != 1 else ''}"]
    for group in layout["groups"]:
        counted = [
            f"{n} {kind} file{'s' if n != 1 else ''}"
            for kind in FILE_KINDS
            if (n := group.get(kind))
        ]
        when = f", {group['when']}" if group["when"] else ""
        columns = group["columns"] or "deletes only"
        parts.append(f"{group['written_by']}{when}: {' + '.join(counted)} [{columns}]")
    if layout["needs"]:
        state = "missing: " + "; ".join(layout["unmet"]) if layout["unmet"] else "present"
        parts.append(f"the scenario needs {' and '.join(layout['needs'])}: {state}")
    return "\n".join([*parts, *notes])


def _family(kind: str) -> tuple[str, ...]:
    """The kinds of files a format has, from one of them (each group counts them all)."""
    for family in _KIND_FAMILIES:
        if kind in family:
            return family
    return (kind,)


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


def _release(spec: sc.ScenarioSpec, state: int) -> str:
    """` (Hudi 0.15.0)` for a state the older release of an upgrade wrote, else nothing."""
    if spec.upgrade is None or state > spec.upgrade[0]:
        return ""
    return f" (Hudi {spec.upgrade[1].from_})"


def _when(step: int, changed: list[int]) -> str:
    if not changed:
        return ""
    if step < changed[0]:
        return "before the schema change"
    if step >= changed[-1]:
        return "after the schema change"
    return "between the schema changes"
