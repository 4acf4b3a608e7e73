"""Draft known outcomes from a run: the fewest entries that make every cell "as expected".

Used to accept a measured run as the new baseline (`lakecompat known RUN_DIR`). Entries are
found greedily from the most general to the most specific shape, and an entry is only kept
when every cell it would newly match has one and the same non-PASS outcome, so no PASS cell
is ever covered. Entries are ordered so that "the first matching entry wins" holds.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import yaml

from harness.expectations import Known
from harness.outcomes import Cell, Outcome

#: The shapes tried, most general first: which key parts an entry names ("*" for the rest).
#: The first one, "what an engine cannot do at all", is only used for UNSUPPORTED cells.
_CAPABILITY = ("engine", "table_type", "query_type")
_SHAPES: tuple[tuple[str, ...], ...] = (
    _CAPABILITY,
    ("scenario",),  # what the writer refused, for every engine
    ("engine", "scenario"),
    ("engine", "scenario", "table_type", "query_type"),
    ("engine", "scenario", "table_type", "query_type", "variant"),
)
_HEADER = """\
# Known outcomes: which cells are expected not to pass, and why (see the README).
# The first entry that matches a cell wins; a cell no entry matches is expected to PASS.
"""


def draft_known(cells: list[Cell]) -> list[Known]:
    """Entries under which every cell of `cells` is as expected."""
    uncovered = list(cells)
    entries: list[Known] = []
    progress = True
    while progress and any(c.outcome is not Outcome.PASS for c in uncovered):
        progress = False
        for shape in _SHAPES:
            groups: dict[tuple[str, ...], list[Cell]] = defaultdict(list)
            for cell in uncovered:
                groups[_values(cell, shape)].append(cell)
            accepted = set()
            for values, matched in groups.items():
                outcomes = {c.outcome for c in matched}
                allowed = {Outcome.UNSUPPORTED} if shape == _CAPABILITY else set(Outcome)
                if len(outcomes) == 1 and outcomes <= allowed - {Outcome.PASS}:
                    entries.append(_entry(dict(zip(shape, values, strict=True)), matched))
                    accepted.add(values)
            if accepted:
                uncovered = [c for c in uncovered if _values(c, shape) not in accepted]
                progress = True
                break  # start again from the most general shape
    return entries


def to_yaml(entries: list[Known]) -> str:
    """An expectations file holding `entries`."""
    body = yaml.safe_dump(
        {"known": [e.to_yaml_dict() for e in entries]}, sort_keys=False, width=100
    )
    return _HEADER + body


def _values(cell: Cell, shape: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(getattr(cell, part) for part in shape)


def _entry(names: dict[str, str], matched: list[Cell]) -> Known:
    reason, _ = Counter(_first_sentence(c.reason) for c in matched).most_common(1)[0]
    return Known.model_validate(
        {
            "engine": names.get("engine", "*"),
            "scenario": names.get("scenario", "*"),
            "table_type": names.get("table_type", "*"),
            "query_type": names.get("query_type", "*"),
            "variant": names.get("variant", "*"),
            "outcome": matched[0].outcome,
            "reason": reason or matched[0].outcome.value,
        }
    )


def _first_sentence(reason: str) -> str:
    text = " ".join(reason.split("\n")[0].split())
    return text if len(text) <= 160 else text[:157] + "..."
