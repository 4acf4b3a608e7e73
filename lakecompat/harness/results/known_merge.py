"""Known outcomes merged into one entry per cause, where merging changes no cell's judgement.

Entries that say the same thing (outcome, reason, link), for the same table format and the
same version scope, merge into one entry whose match fields list values (`known_lists`), as
long as "the first entry that matches a cell wins" still gives every cell the same entry's
words: an entry joins an earlier one only when no entry between them could match one of its
cells with another outcome, reason or link (`_barriers`, which over-approximates "could").
`lakecompat known` drafts in this form; `scripts/convert_known.py` converted the project's
files with it.
"""

from __future__ import annotations

import fnmatch
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from lakecompat.engines import known_engines
from lakecompat.harness.results.expectations import (
    SCOPE_FIELDS,
    Known,
    bound_parts,
    reader_variants,
)
from lakecompat.harness.results.known_lists import (
    DIMENSIONS,
    Box,
    KeySpace,
    box_of,
    entry_fields,
    merge_boxes,
)


def merged(
    entries: list[Known], sections: Sequence[int] | None = None, across: bool = False
) -> list[tuple[int, Known]]:
    """`entries` (in the order they are matched) merged by what they say: each merged entry
    with the section of its first member, in the order of their first members. Entries of
    different `sections` (the commented parts of the files) merge only when `across`."""
    section_of = list(sections) if sections is not None else [0] * len(entries)
    barriers = _barriers(entries)
    groups: dict[tuple[Any, ...], list[Box]] = defaultdict(list)
    for index, entry in enumerate(entries):
        section = 0 if across else section_of[index]
        groups[(section, _signature(entry))].append(box_of(entry, index))

    def joinable(a: Box, b: Box) -> bool:
        first = min(a.first, b.first)
        return all(barriers[m] < first for m in a.members + b.members)

    space = KeySpace(reader_variants(known_engines()))
    boxes = sorted(
        (
            box
            for (_, signature), group in groups.items()
            for box in merge_boxes(group, joinable, partial(space.absent, signature[3]))
        ),
        key=lambda b: b.first,
    )
    found = []
    for box in boxes:
        entry = entries[box.first]
        fields = {**entry_fields(box), **entry.model_dump(include={*_SAID, "releases"})}
        fields["format"] = entry.format
        found.append((section_of[box.first], Known.model_validate(fields)))
    return found


def _signature(entry: Known) -> tuple[Any, ...]:
    """What merged entries share: what they say, their format and their version scope."""
    said = (entry.outcome, entry.reason, entry.link, entry.values("format"))
    return said + tuple(entry.bound(f) for f in SCOPE_FIELDS)


_SAID = ("outcome", "reason", "link")


def _barriers(entries: list[Known]) -> list[int]:
    """For each entry, the position of the last earlier entry that could match one of its
    cells with another outcome, reason or link (-1: none): it may join a merged entry only
    if that entry starts after this position."""
    return [_first_meeting(entries, i, range(i - 1, -1, -1), -1) for i in range(len(entries))]


def _barriers_ahead(entries: list[Known]) -> list[int]:
    """For each entry, the position of the first later entry that could match one of its
    cells with another outcome, reason or link (past the end: none): it may move later only
    to a position before that."""
    end = len(entries)
    return [_first_meeting(entries, i, range(i + 1, end), end) for i in range(end)]


def _first_meeting(entries: list[Known], index: int, positions: range, none: int) -> int:
    """The first of `positions` whose entry could match one of the cells of entry `index`
    with another outcome, reason or link (`none` when no such entry)."""
    entry = entries[index]
    said = (entry.outcome, entry.reason, entry.link)
    return next(
        (
            j
            for j in positions
            if (entries[j].outcome, entries[j].reason, entries[j].link) != said
            and may_meet(entry, entries[j])
        ),
        none,
    )


def may_meet(a: Known, b: Known) -> bool:
    """Whether some cell could match both entries (True where unsure)."""
    if not _lists_meet(a.values("format"), b.values("format")):
        return False
    engines_meet = any(
        _names_meet(x, y) and _ranges_meet(a.engine_versions(x), b.engine_versions(y))
        for x in a.values("engine")
        for y in b.values("engine")
    )
    if not engines_meet:
        return False
    for dimension in DIMENSIONS[1:]:
        if not _globs_meet(a.values(dimension), b.values(dimension)):
            return False
    return all(_ranges_meet(a.bound(f), b.bound(f)) for f in SCOPE_FIELDS)


def _names_meet(x: str, y: str) -> bool:
    return x == y or "*" in (x, y)


def _lists_meet(xs: tuple[str, ...], ys: tuple[str, ...]) -> bool:
    return any(_names_meet(x, y) for x in xs for y in ys)


def _globs_meet(xs: tuple[str, ...], ys: tuple[str, ...]) -> bool:
    return any(_glob_meets(x, y) for x in xs for y in ys)


def _glob_meets(x: str, y: str) -> bool:
    """Whether some name could match both globs: exact for a name and a glob; for two globs,
    unless their fixed beginnings or endings differ."""
    wild_x, wild_y = _is_glob(x), _is_glob(y)
    if not wild_x and not wild_y:
        return x == y
    if not wild_x:
        return fnmatch.fnmatchcase(x, y)
    if not wild_y:
        return fnmatch.fnmatchcase(y, x)
    head_x, head_y = re.split(r"[*?\[]", x)[0], re.split(r"[*?\[]", y)[0]
    tail_x, tail_y = re.split(r"[*?\]]", x)[-1], re.split(r"[*?\]]", y)[-1]
    heads = head_x.startswith(head_y) or head_y.startswith(head_x)
    tails = tail_x.endswith(tail_y) or tail_y.endswith(tail_x)
    return heads and tails


def _is_glob(text: str) -> bool:
    return any(c in text for c in "*?[")


def _ranges_meet(x: str, y: str) -> bool:
    """Whether a version could satisfy both bounds (False only where they provably exclude
    each other)."""
    low: tuple[tuple[int, ...], bool] | None = None  # (version, included)
    high: tuple[tuple[int, ...], bool] | None = None
    parts = bound_parts(f"{x},{y}")
    named = {limit for _, limit in parts if not re.search(r"\d", limit)}
    if named:  # named values (`==name`): they meet where they are one name
        return len(named) == 1 and all(not re.search(r"\d", limit) for _, limit in parts)
    for op, limit in parts:
        value = tuple(int(n) for n in re.findall(r"\d+", limit))
        if op in (">=", ">", "=="):
            bound = (value, op != ">")
            if low is None or bound[0] > low[0] or (bound[0] == low[0] and not bound[1]):
                low = bound
        if op in ("<=", "<", "=="):
            bound = (value, op != "<")
            if high is None or bound[0] < high[0] or (bound[0] == high[0] and not bound[1]):
                high = bound
    if low is None or high is None:
        return True
    return low[0] < high[0] or (low[0] == high[0] and low[1] and high[1])


def by_cause(
    found: list[tuple[int, Known]],
    across: bool = False,
    rank: Callable[[int], int] | None = None,
) -> list[tuple[int, list[Known]]]:
    """Merged entries (`merged`) gathered by cause: the entries of one section (of any, when
    `across`) that say the same thing of the same format (at any versions) become the cases
    of one entry, where moving them together changes no cell's judgement (no entry between
    could match one of their cells with other words: `_barriers`). The entry stands at the
    place of the first of them, or, given `rank` (of a section: lower first), of the one in
    the best ranked section that they can all move to; its case comes first."""
    entries = [entry for _, entry in found]
    barriers = _barriers(entries)
    groups: list[list[int]] = []
    open_groups: dict[tuple[Any, ...], list[int]] = {}
    for index, (section, entry) in enumerate(found):
        key = (0 if across else section, entry.outcome, entry.reason, entry.link)
        key += (entry.values("format"),)
        candidates = open_groups.get(key, [])
        joined = next((g for g in candidates if barriers[index] < groups[g][0]), None)
        if joined is None:
            open_groups.setdefault(key, []).append(len(groups))
            groups.append([index])
        else:
            groups[joined].append(index)
    ahead = _barriers_ahead(entries) if rank is not None else []
    placed = []
    for members in groups:
        at = members[0]
        if rank is not None and len(members) > 1:
            order = sorted(members, key=lambda m: (rank(found[m][0]), m))
            at = next(p for p in order if _movable(members, p, barriers, ahead))
        placed.append((at, sorted(members, key=lambda m: m != at)))
    placed.sort()
    return [(found[at][0], [entries[i] for i in members]) for at, members in placed]


def _movable(members: list[int], to: int, barriers: list[int], ahead: list[int]) -> bool:
    """Whether every member can move to position `to`: no entry between could match one of
    its cells with other words (`_barriers` before it, `_barriers_ahead` after it)."""
    return all(barriers[m] < to if m > to else ahead[m] > to for m in members if m != to)


def cause_item(cases: list[Known]) -> dict[str, Any]:
    """One entry as a file writes it for the entries of one cause: what they share, and a
    `cases` list of what differs (an entry alone as it is)."""
    dicts = [case.to_yaml_dict() for case in cases]
    if len(dicts) == 1:
        return dicts[0]
    keys = [k for k in dicts[0] if all(k in d for d in dicts)]
    shared = {k: dicts[0][k] for k in keys if all(d[k] == dicts[0][k] for d in dicts)}
    # Which cells differ from case to case; what is said of them, never.
    shared |= {k: dicts[0][k] for k in _SAID if k in dicts[0]}
    item = {k: v for k, v in dicts[0].items() if k in shared and k not in _SAID}
    item |= {k: dicts[0][k] for k in _SAID if k in dicts[0]}
    item["cases"] = [{k: v for k, v in d.items() if k not in shared} for d in dicts]
    return item
