"""Known outcomes as boxes: the cells of one cause as a product of the values each match
dimension spans, merged into as few entries as the cells allow, and written as a file.

A box holds, per dimension (`DIMENSIONS`), the set of values its cells span; the engine's
values are (engine, version range) pairs, so that an entry naming several engines can bound
each one's versions. Two boxes that differ in one dimension only cover, together, exactly the
product of their merged values: merging them never covers a cell neither covered. This is how
`lakecompat known` drafts one entry per cause and how `scripts/convert_known.py` turned one
entry per cell into one per cause.
"""

from __future__ import annotations

import fnmatch
import itertools
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Any

import yaml

from lakecompat.engines.table import FORMAT_QUERY_TYPES, QUERY_TYPES
from lakecompat.harness.results.expectations import TABLE_TYPES, Known
from lakecompat.harness.scenario.shapes import SHAPES

#: The match dimensions a box spans, in the order an entry lists them.
DIMENSIONS = ("engine", "scenario", "table_type", "query_type", "variant", "shape")
#: How each dimension's values are listed: in this order where it has one, else sorted.
_ORDER: dict[str, tuple[str, ...]] = {
    "table_type": TABLE_TYPES,
    "query_type": QUERY_TYPES,
    "shape": SHAPES,
}


@dataclass(frozen=True)
class Box:
    """A product of values, one set per dimension, and the items (entries or cells, by their
    position) it was made of."""

    values: tuple[frozenset[Hashable], ...]
    members: tuple[int, ...]

    @property
    def first(self) -> int:
        return self.members[0]

    def join(self, other: Box) -> Box:
        """The smallest box holding this one and `other`."""
        values = tuple(a | b for a, b in zip(self.values, other.values, strict=True))
        return Box(values, tuple(sorted(self.members + other.members)))

    def holds(self, values: tuple[Hashable, ...], dimensions: tuple[int, ...]) -> bool:
        """Whether the box spans `values` in `dimensions`."""
        return all(v in self.values[d] for v, d in zip(values, dimensions, strict=True))


class KeySpace:
    """Which combinations of engine, table type, query type and variant a table format's
    cells can have: a box may span the others, since no cell has them."""

    def __init__(self, variants: dict[tuple[str, str], tuple[str, ...]]) -> None:
        #: (engine, format) -> the variants it reads that format under.
        self.variants = variants

    def absent(self, formats: tuple[str, ...], key: tuple[Hashable, ...]) -> bool:
        """Whether no cell of `formats` has the values `key` (an engine with its range,
        table type, query type, variant; each may be `*`, the variant a glob)."""
        (engine, _), table_type, query_type, variant = key
        for (name, table_format), names in self.variants.items():
            if "*" not in formats and table_format not in formats:
                continue
            if engine not in ("*", name):
                continue
            types = FORMAT_QUERY_TYPES[table_format]
            kinds = types if table_type == "*" else {table_type: types.get(str(table_type), ())}
            if not any(query_type == "*" or query_type in q for q in kinds.values()):
                continue
            if any(fnmatch.fnmatchcase(n, str(variant)) for n in names):
                return False
        return True


def box_of(entry: Known, member: int) -> Box:
    """The box of one entry: its values per dimension (the engine's with their ranges)."""
    engines = frozenset((e, entry.engine_versions(e)) for e in entry.values("engine"))
    rest = (frozenset(entry.values(d)) for d in DIMENSIONS[1:])
    return Box((engines, *rest), (member,))


def merge_boxes(
    boxes: Iterable[Box],
    joinable: Callable[[Box, Box], bool] = lambda a, b: True,
    absent: Callable[[tuple[Hashable, ...]], bool] | None = None,
) -> list[Box]:
    """`boxes` merged, as long as any two can be and `joinable` allows it, into boxes that
    cover no cell none of them covered: first every two that differ in one dimension only,
    then (given `absent`, which says of an engine, table type, query type and variant that
    no cell has them) every two whose smallest common box adds only such cells. In the order
    of their first members."""
    current = _merge_neighbours(list(boxes), joinable)
    if absent is None:
        return current
    merged = True
    while merged:
        merged = False
        for i, j in itertools.combinations(range(len(current)), 2):
            a, b = current[i], current[j]
            if _one_range_each(a, b) and joinable(a, b) and _adds_only(a, b, absent):
                current[i] = a.join(b)
                del current[j]
                merged = True
                break
    return sorted(current, key=lambda b: b.first)


def _merge_neighbours(current: list[Box], joinable: Callable[[Box, Box], bool]) -> list[Box]:
    """Every two boxes that differ in one dimension only, merged while any can be."""
    changed = True
    while changed:
        changed = False
        for dimension in range(len(DIMENSIONS)):
            buckets: dict[tuple[frozenset[Hashable], ...], list[Box]] = defaultdict(list)
            for box in current:
                others = box.values[:dimension] + box.values[dimension + 1 :]
                buckets[others].append(box)
            current = []
            for bucket in buckets.values():
                merged = _merge_bucket(sorted(bucket, key=lambda b: b.first), dimension, joinable)
                changed = changed or len(merged) < len(bucket)
                current.extend(merged)
    return sorted(current, key=lambda b: b.first)


def _merge_bucket(
    bucket: list[Box], dimension: int, joinable: Callable[[Box, Box], bool]
) -> list[Box]:
    merged: list[Box] = []
    for box in bucket:
        for index, earlier in enumerate(merged):
            if _one_range_each(earlier, box) and joinable(earlier, box):
                merged[index] = earlier.join(box)
                break
        else:
            merged.append(box)
    return merged


def _one_range_each(a: Box, b: Box) -> bool:
    """Whether the merged engines would still have one version range each."""
    names = [name for name, _ in a.values[0] | b.values[0]]  # type: ignore[misc]
    return len(names) == len(set(names))


#: The dimensions whose values some cells lack (engine, table type, query type, variant);
#: every cell can have any scenario and shape.
_KEYED = (0, 2, 3, 4)
_FREE = (1, 5)


def _adds_only(a: Box, b: Box, absent: Callable[[tuple[Hashable, ...]], bool]) -> bool:
    """Whether every cell the smallest box holding `a` and `b` adds is one `absent` rules
    out: for each (engine, table type, query type, variant) it spans that some cell has,
    `a` and `b` together span every scenario and shape it spans."""
    both = a.join(b)
    spans = list(itertools.product(*(both.values[d] for d in _FREE)))
    for key in itertools.product(*(both.values[d] for d in _KEYED)):
        if absent(key):
            continue
        holders = [box for box in (a, b) if box.holds(key, _KEYED)]
        if not all(any(box.holds(free, _FREE) for box in holders) for free in spans):
            return False
    return True


def entry_fields(box: Box) -> dict[str, Any]:
    """The match fields of an entry covering `box`: one value, or a list; `versions` a
    range for one engine, a mapping for several."""
    ranges = dict(sorted(box.values[0]))  # type: ignore[arg-type]
    fields: dict[str, Any] = {}
    if "*" in ranges:  # every engine at every version: the others add nothing
        fields["engine"] = "*"
    elif len(ranges) == 1:
        [(name, bounds)] = ranges.items()
        fields["engine"] = name
        fields["versions"] = bounds
    else:
        fields["engine"] = list(ranges)
        fields["versions"] = {name: bounds for name, bounds in ranges.items() if bounds} or ""
    for dimension, values in zip(DIMENSIONS[1:], box.values[1:], strict=True):
        listed = _listed(dimension, {str(v) for v in values})
        fields[dimension] = listed[0] if len(listed) == 1 else listed
    return fields


def _listed(dimension: str, values: set[str]) -> list[str]:
    """`values` in their order, without those a glob among them matches already."""
    if "*" in values or (dimension == "table_type" and values >= set(TABLE_TYPES)):
        return ["*"]
    globs = [v for v in values if any(c in v for c in "*?[")]
    kept = {v for v in values if v in globs or not any(_glob_has(g, v) for g in globs)}
    order = _ORDER.get(dimension)
    if order:
        return sorted(kept, key=lambda v: order.index(v) if v in order else len(order))
    return sorted(kept)


def _glob_has(glob: str, value: str) -> bool:
    return glob != value and fnmatch.fnmatchcase(value, glob)


#: The width lines of an expectations file are wrapped at.
_WIDTH = 100


class _Dumper(yaml.SafeDumper):
    """Entries in block style, the lists and mappings inside them in flow style."""

    def expect_flow_sequence_item(self) -> None:
        """A list's next value on a new line where it would end past the width (PyYAML breaks
        only once a line is already past it)."""
        event = self.event
        if isinstance(event, yaml.ScalarEvent) and self.column + len(event.value) + 3 > _WIDTH:
            self.write_indicator(",", False)
            self.write_indent()
            self.states.append(self.expect_flow_sequence_item)
            self.expect_node(sequence=True)
        else:
            super().expect_flow_sequence_item()  # type: ignore[misc]


def _flow_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)


class _FlowMap(dict):  # type: ignore[type-arg]
    """A mapping inside an entry (`versions`), written on one line."""


def _flow_map(dumper: yaml.SafeDumper, data: dict[str, Any]) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data, flow_style=True)


class _Entries(list):  # type: ignore[type-arg]
    """The entries themselves, one under the other."""


def _block_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=False)


_Dumper.add_representer(list, _flow_list)
_Dumper.add_representer(_FlowMap, _flow_map)
_Dumper.add_representer(_Entries, _block_list)


def dump_entries(entries: list[dict[str, Any]]) -> str:
    """Entries as the items of a file's `known:` list (no `known:` line)."""
    if not entries:
        return ""
    items = _Entries(_item(e) for e in entries)
    return yaml.dump(items, Dumper=_Dumper, sort_keys=False, width=_WIDTH, allow_unicode=True)


def _item(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry's mappings on one line each; its `cases` one under the other, each on a line
    of its own."""
    item: dict[str, Any] = {}
    for key, value in entry.items():
        if key == "cases":
            item[key] = _Entries(_case(case) for case in value)
        else:
            item[key] = _FlowMap(value) if isinstance(value, dict) else value
    return item


def _case(case: dict[str, Any]) -> dict[str, Any]:
    """A case on one line where it fits (`- {scenario: ..., shape: filter}`), else a field a
    line, as an entry's."""
    line = yaml.dump(
        [_FlowMap(case)], Dumper=_Dumper, sort_keys=False, width=10_000, allow_unicode=True
    )
    if len(line.rstrip("\n")) + 2 <= _WIDTH:
        return _FlowMap(case)
    return {k: _FlowMap(v) if isinstance(v, dict) else v for k, v in case.items()}
