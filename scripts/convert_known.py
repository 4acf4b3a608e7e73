"""Convert expectations/ to one entry per cause, and prove the conversion changes no judgement.

Issue 69: the known outcomes held one entry per cell (about 4,100 entries, 44,000 lines), the
same cause written out once per cell. This script merges the entries of one cause (the same
outcome, reason, link, format and version scope) into entries whose match fields list values,
where merging cannot change any cell's judgement, and corrects the links and reasons issue 69's
audit found wrong (`CORRECTIONS`). Run from the project's root:

    .venv/bin/python scripts/convert_known.py            # rewrite expectations/, then check
    .venv/bin/python scripts/convert_known.py --check REV  # compare expectations/ with REV's

The check judges, with the files before and after, (a) every cell of the complete runs under
reports/runs/ (or the folders given with --runs) and (b) every cell the entries can address:
each scenario x engine x table type x query type of its format x variant (with `+pushdown_off`)
x shape x format, at versions inside and outside every bound the entries name. Any cell judged
otherwise (expected outcome, reason or link) is printed, and the exit code is 1.

Merging keeps "the first entry that matches a cell wins": the entries of one cause, whichever
files and commented sections they are in, merge into boxes of values that cover exactly their
cells, and then into one entry with a case per box, written where one of them was
(`PREFERRED` files first, else the first of them); an entry moves only past entries that could
not match one of its cells with another outcome, reason or link (`_barriers` and
`_barriers_ahead`, which over-approximate "could").
"""

from __future__ import annotations

import argparse
import fnmatch
import itertools
import json
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lakecompat.engines import known_engines  # noqa: E402
from lakecompat.engines.infra.hudi_jars import written_table_version  # noqa: E402
from lakecompat.engines.table import FORMAT_QUERY_TYPES  # noqa: E402
from lakecompat.harness.results.expectations import (  # noqa: E402
    SCOPE_FIELDS,
    Judge,
    Known,
    bound_parts,
    expanded,
    in_range,
    load_expectations,
    reader_variants,
)
from lakecompat.harness.results.known_lists import (  # noqa: E402
    dump_entries,
)
from lakecompat.harness.results.known_merge import by_cause, cause_item, merged  # noqa: E402
from lakecompat.harness.results.outcomes import Cell, Outcome  # noqa: E402
from lakecompat.harness.results.store import load_cells  # noqa: E402
from lakecompat.harness.scenario.load import load_scenarios  # noqa: E402
from lakecompat.harness.scenario.shapes import SHAPES  # noqa: E402

FOLDER = ROOT / "expectations"

# ---------------------------------------------------------------------------------------------
# Corrections (issue 69's audit), each link verified in the upstream tracker.

_DAFT_ROOT = (
    "; the root cause is that Daft applies the table's current partition spec to every data "
    "file (Eventual-Inc/Daft#2249), and this case is reported as Eventual-Inc/Daft#7428"
)
_HUDI_19467 = (
    "; apache/hudi#19467 describes the mechanism: the filter is checked against the old files' "
    "Parquet statistics read as the column's new type, which skips row groups that do hold "
    "matches (it turns that pushdown off in Hudi's own Trino connector)"
)
_NOT_FOUND = "; no upstream report found"


def _correct(entry: dict[str, Any]) -> dict[str, Any]:
    """`entry` with issue 69's corrections applied (itself when none applies)."""
    reason, link = entry["reason"], entry.get("link")
    if link == "https://github.com/apache/iceberg-python/issues/26":
        # Closed as stale, never fixed: it tracks nothing. No open report was found.
        reason += (
            "; no open upstream report found (apache/iceberg-python#26 asked for the order "
            "and was closed as stale, unfixed)"
        )
        return {k: v for k, v in entry.items() if k != "link"} | {"reason": reason}
    if link == "https://github.com/Eventual-Inc/Daft/issues/7428":
        link = "https://github.com/Eventual-Inc/Daft/issues/2249"
        return entry | {"reason": reason + _DAFT_ROOT, "link": link}
    if (
        entry.get("engine") == "trino"
        and entry.get("shape") == "filter"
        and reason.startswith("rows lost without an error")
        and "decimal(10,2)" in reason
        and reason.endswith(_NOT_FOUND)
    ):
        link = "https://github.com/apache/hudi/pull/19467"
        return entry | {"reason": reason.removesuffix(_NOT_FOUND) + _HUDI_19467, "link": link}
    if "prestodb/presto" in (link or "") and entry.get("format") == "iceberg":
        raise SystemExit(f"an Iceberg entry cites Presto: {entry}")  # none is left to fix
    return entry


# ---------------------------------------------------------------------------------------------
# Files with their comments: a header, then sections, each a comment and its entries.


@dataclass
class Section:
    comment: list[str]
    entries: list[dict[str, Any]] = field(default_factory=list)
    #: Each entry's lines as the file had them (written again as they were while the entry
    #: is unchanged).
    lines: list[list[str]] = field(default_factory=list)

    def text(self) -> list[str]:
        lines = list(self.comment)
        for number, entry in enumerate(self.entries):
            kept = self.lines[number] if number < len(self.lines) else []
            lines += kept if _says(kept, entry) else dump_entries([entry]).splitlines()
        return lines


def _says(lines: list[str], entry: dict[str, Any]) -> bool:
    """Whether `lines` hold `entry` alone (not an alias of another entry's text)."""
    try:
        return bool(lines) and yaml.safe_load("\n".join(lines)) == [entry]
    except yaml.YAMLError:
        return False


@dataclass
class KnownFile:
    name: str
    header: list[str]
    sections: list[Section]

    def text(self) -> str:
        lines = [*self.header, "known:"]
        for section in self.sections:
            lines += section.text()
        return "\n".join(lines) + "\n"


def read_known(path: Path) -> KnownFile:
    """A file's header, sections and entries (each entry starts with `- ` in column 0)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = lines.index("known:")
    entries = iter(yaml.safe_load("\n".join(lines))["known"])
    sections: list[Section] = []
    pending: list[str] = []
    for line in lines[start + 1 :]:
        if line.startswith("#") or not line.strip():
            pending.append(line)
        elif line.startswith("- "):
            if pending or not sections:
                sections.append(Section(pending))
                pending = []
            sections[-1].entries.append(next(entries))
            sections[-1].lines.append([line])
        else:
            sections[-1].lines[-1].append(line)
    if next(entries, None) is not None or any(line.strip() for line in pending):
        raise SystemExit(f"{path}: entries or comments this script cannot place")
    return KnownFile(path.name, lines[:start], sections)


# ---------------------------------------------------------------------------------------------
# Merging.


#: The files a cause met in several files is written in, best first (then the first of them).
PREFERRED = ("known.yaml", "iceberg.yaml", "hive-3.1.3.yaml", "presto.yaml", "flink.yaml")


def convert(known_file: KnownFile) -> KnownFile:
    """The file with its entries merged, section by section."""
    return convert_all([known_file], across=False)[0]


def convert_all(files: list[KnownFile], across: bool = True) -> list[KnownFile]:
    """The files (in the order they are loaded) with the entries of one cause merged into one
    entry, at the place of one of them (in a `PREFERRED` file where they can all move there,
    else the first), in whichever file and section it is (only within a section when not
    `across`). Sections left without entries are left out."""
    owners: list[tuple[int, int]] = []  # (file, section) of each section of all the files
    pairs: list[tuple[int, dict[str, Any]]] = []
    for f, known_file in enumerate(files):
        for s, section in enumerate(known_file.sections):
            owners.append((f, s))
            pairs += [
                (len(owners) - 1, fields) for e in section.entries for _, fields in expanded(e)
            ]
    entries = [Known.model_validate(fields) for _, fields in pairs]
    out = [KnownFile(k.name, k.header, [Section(s.comment) for s in k.sections]) for k in files]
    sections = [s for s, _ in pairs]
    names = [files[f].name for f, _ in owners]

    def rank(section: int) -> int:
        """Where a cause met in several files is written: the file of the default releases
        first, then the format's and the engines' files, then the version points' files."""
        name = names[section]
        return PREFERRED.index(name) if name in PREFERRED else len(PREFERRED)

    for section, cases in by_cause(merged(entries, sections, across), across, rank):
        f, s = owners[section]
        out[f].sections[s].entries.append(cause_item(cases))
    for known_file in out:
        known_file.sections = [s for s in known_file.sections if s.entries]
    return out


# ---------------------------------------------------------------------------------------------
# The proof: judge real runs and the whole key space with both sets of files.


def judgement(judged: Any) -> tuple[Any, ...]:
    """What a cell's judgement says: expected outcome, verdict, reason and link."""
    known = judged.known
    return (
        judged.expected.value,
        judged.verdict.value,
        known.reason if known else None,
        known.link if known else None,
    )


def complete_runs(folders: list[Path]) -> list[Path]:
    """The run folders (below `folders`) whose run.json says complete."""
    found = []
    for folder in folders:
        candidates = [folder] if (folder / "run.json").exists() else sorted(folder.iterdir())
        for run in candidates:
            info = run / "run.json"
            if info.exists() and json.loads(info.read_text()).get("status") == "complete":
                found.append(run)
    return found


def check_runs(before: list[Known], after: list[Known], runs: list[Path]) -> int:
    """Cells of the runs judged otherwise by `after` than by `before`, printed; their count."""
    differing = 0
    for run in runs:
        cells = load_cells(run)[1]
        old, new = Judge(before), Judge(after)
        changed = [c for c in cells if judgement(old(c)) != judgement(new(c))]
        differing += len(changed)
        print(f"(a) {run}: {len(cells)} cells, {len(changed)} judged otherwise")
        for cell in changed[:20]:
            print(f"    {cell.key}: {judgement(old(cell))} -> {judgement(new(cell))}")
    return differing


def check_key_space(before: list[Known], after: list[Known]) -> int:
    """Cells of the whole key space judged otherwise by `after` than by `before`; their count.

    A cell's judgement is the first matching entry's outcome, reason and link. Cells that
    differ only in their versions share their candidate entries (those whose match fields
    name the cell), so the key space is walked as (cell without versions) x (versions at,
    between and around the bounds of its candidates), each set of candidates once."""
    scenarios = [s.id for s in load_scenarios(ROOT / "scenarios")]
    variants = reader_variants(known_engines())
    seen: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = {}
    plain = differing = points = 0
    for cell in _plain_cells(scenarios, variants):
        plain += 1
        old = [k for k in _pool(before, cell) if k.names_key(cell)]
        new = [k for k in _pool(after, cell) if k.names_key(cell)]
        key = (tuple(id(k) for k in old), tuple(id(k) for k in new))
        if key not in seen:
            seen[key], count = _differing_versions(cell, old, new)
            points += count
        if seen[key]:
            differing += 1
            if differing <= 20:
                print(f"    {cell.key}: judged otherwise at {seen[key]} version points")
    print(
        f"(b) key space: {plain} cells without versions, {len(seen)} distinct lists of "
        f"candidate entries, judged at {points} version points in all; {differing} cells "
        "judged otherwise"
    )
    return differing


_POOLS: dict[tuple[int, str, str, str], list[Known]] = {}


def _pool(entries: list[Known], cell: Cell) -> list[Known]:
    """The entries naming the cell's format, engine and scenario (cached)."""
    key = (id(entries), cell.format, cell.engine, cell.scenario)
    if key not in _POOLS:
        _POOLS[key] = [k for k in entries if _names_where(k, cell)]
    return _POOLS[key]


def _names_where(entry: Known, cell: Cell) -> bool:
    """Whether the entry names the cell's format, engine and scenario."""
    return (
        any(v in ("*", cell.format) for v in entry.values("format"))
        and any(v in ("*", cell.engine) for v in entry.values("engine"))
        and any(fnmatch.fnmatchcase(cell.scenario, v) for v in entry.values("scenario"))
    )


def _plain_cells(
    scenarios: list[str], variants: dict[tuple[str, str], tuple[str, ...]]
) -> Iterator[Cell]:
    """Every cell of the key space, without versions."""
    for (engine, table_format), names in sorted(variants.items()):
        for table_type, query_types in FORMAT_QUERY_TYPES[table_format].items():
            product = itertools.product(scenarios, query_types, names, SHAPES)
            for scenario, query_type, variant, shape in product:
                yield Cell(
                    scenario=scenario,
                    category=scenario.split("/")[0],
                    title="",
                    table_type=table_type,
                    query_type=query_type,
                    engine=engine,
                    engine_version="",
                    variant=variant,
                    settings={},
                    writer={},
                    outcome=Outcome.PASS,
                    shape=shape,
                    format=table_format,
                )


def _differing_versions(cell: Cell, old: list[Known], new: list[Known]) -> tuple[int, int]:
    """At how many version points (around the bounds of `old` and `new`) the first matching
    entry of `old` says another outcome, reason or link than that of `new`; and how many
    version points were judged.

    Each entry's bounds are evaluated once per value of each version field (the writer's Hudi
    release and table version together: the second follows from the first where a run chose
    none); a point's first match is then a lookup. Every 97th point is judged again with
    `Known.matches` on a real cell, to keep the shortcut honest."""
    grid = _grid(cell.engine, old + new)
    old_sets = [(_allowed(k, cell.engine, grid), _said(k)) for k in old]
    new_sets = [(_allowed(k, cell.engine, grid), _said(k)) for k in new]
    differing = count = 0
    for point in itertools.product(*(range(len(values)) for values in grid.values())):
        count += 1
        first_old = next((said for sets, said in old_sets if _holds(sets, point)), None)
        first_new = next((said for sets, said in new_sets if _holds(sets, point)), None)
        if count % 97 == 0:
            versioned = _at(cell, grid, point)
            assert first_old == _said(next((k for k in old if k.matches(versioned)), None))
            assert first_new == _said(next((k for k in new if k.matches(versioned)), None))
        if first_old != first_new:
            differing += 1
    return differing, count


def _holds(sets: tuple[frozenset[int], ...], point: tuple[int, ...]) -> bool:
    return all(index in allowed for index, allowed in zip(point, sets, strict=True))


def _said(entry: Known | None) -> tuple[Any, ...] | None:
    return None if entry is None else (entry.outcome, entry.reason, entry.link)


#: The version fields beside the engine's release and Hudi's writer: the reader's Hudi jars, then
#: the other formats' writer releases and version options, as a cell's `writer` names them.
_OTHER_FIELDS = ("reader_hudi", "iceberg", "format_version", "delta", "column_mapping")


def _grid(engine: str, entries: list[Known]) -> dict[str, list[Any]]:
    """The values each version field takes: `writer` pairs (Hudi release, table version)."""
    values = _version_values(engine, entries)
    pairs = itertools.product(values.get("hudi", [""]), values.get("table_version", [""]))
    grid: dict[str, list[Any]] = {"versions": values.get("versions", [""]), "writer": list(pairs)}
    for name in _OTHER_FIELDS:
        grid[name] = values.get(name, [""])
    return grid


def _allowed(entry: Known, engine: str, grid: dict[str, list[Any]]) -> tuple[frozenset[int], ...]:
    """For each field of `grid`, the positions of the values within the entry's bounds."""

    def within(name: str, bounds: str) -> frozenset[int]:
        return frozenset(i for i, v in enumerate(grid[name]) if in_range(v, bounds))

    writers = frozenset(
        i
        for i, (hudi, table_version) in enumerate(grid["writer"])
        if in_range(hudi, entry.bound("hudi"))
        and in_range(
            written_table_version(_writer(hudi, table_version)), entry.bound("table_version")
        )
    )
    return (
        within("versions", entry.engine_versions(engine)),
        writers,
        *(within(name, entry.bound(name)) for name in _OTHER_FIELDS),
    )


def _writer(hudi: str, table_version: str) -> dict[str, str]:
    writer = {"hudi": hudi} if hudi else {}
    return writer | ({"table_version": table_version} if table_version else {})


def _version_values(engine: str, entries: list[Known]) -> dict[str, list[str]]:
    """For each version field the entries bound, values inside and outside every bound."""
    bounds: dict[str, set[str]] = defaultdict(set)
    for entry in entries:
        for name in ("versions", *SCOPE_FIELDS):
            text = entry.engine_versions(engine) if name == "versions" else entry.bound(name)
            for _, limit in bound_parts(text):
                bounds[name].add(limit)
    return {name: _around(limits) for name, limits in bounds.items()}


def _around(limits: set[str]) -> list[str]:
    """Versions at, between, below and above `limits`, and "" (a cell without the version);
    for named limits (a column mapping mode), each name and one name of none of them."""
    named = sorted(v for v in limits if not re.search(r"\d", v))
    if named:
        return ["", *named, "another"]
    keys = sorted({tuple(int(n) for n in re.findall(r"\d+", v)) for v in limits})
    points = set(keys)
    for low, high in itertools.pairwise(keys):
        if (*low, 0) < high:
            points.add((*low, 0))
    if keys and keys[0] > (0,):
        points.add((0,))
    if keys:
        points.add((*keys[-1][:-1], keys[-1][-1] + 1))
    return ["", *(".".join(map(str, p)) for p in sorted(points))]


def _at(cell: Cell, grid: dict[str, list[Any]], point: tuple[int, ...]) -> Cell:
    """`cell` at the versions `point` picks from `grid`."""
    versions, (hudi, table_version), reader, *others = (
        values[index] for values, index in zip(grid.values(), point, strict=True)
    )
    writer = _writer(hudi, table_version)
    writer |= {k: v for k, v in zip(_OTHER_FIELDS[1:], others, strict=True) if v}
    return replace(cell, engine_version=versions, reader_hudi=reader, writer=writer)


# ---------------------------------------------------------------------------------------------


def figures(folder: Path) -> str:
    paths = sorted(folder.glob("*.yaml"))
    entries = load_expectations(folder)
    lines = sum(len(p.read_text().splitlines()) for p in paths)
    reasons = len({e.reason for e in entries})
    return f"{len(entries)} entries, {lines} lines, {reasons} distinct reasons"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", metavar="REV", help="only compare expectations/ with REV's")
    parser.add_argument("--runs", type=Path, nargs="*", default=[ROOT / "reports" / "runs"])
    parser.add_argument("--no-merge", action="store_true", help="apply the corrections only")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        before_dir = Path(scratch)
        if args.check:
            _export(args.check, before_dir)
            print(f"before: {figures(before_dir)} ({args.check})")
        else:
            print(f"before: {figures(FOLDER)}")
            before_dir = _rewrite(not args.no_merge, before_dir)
        print(f"after:  {figures(FOLDER)}")
        before, after = load_expectations(before_dir), load_expectations(FOLDER)
        runs = complete_runs([p for p in args.runs if p.exists()])
        differing = check_runs(before, after, runs) + check_key_space(before, after)
    return 1 if differing else 0


def _export(rev: str, folder: Path) -> None:
    """REV's expectations/ into `folder`."""
    names = subprocess.run(
        ["git", "ls-tree", "--name-only", f"{rev}:expectations"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    for name in names:
        text = subprocess.run(
            ["git", "show", f"{rev}:expectations/{name}"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        (folder / name).write_text(text, encoding="utf-8")


def _rewrite(merge: bool, scratch: Path) -> Path:
    """Rewrite expectations/ (corrected, and merged unless `merge` is False); return a folder
    holding the files before, with the corrections applied (what the merge must preserve).
    A file left without entries (each moved to an earlier file's entry of its cause) goes."""
    paths = sorted(FOLDER.glob("*.yaml"))
    files = [read_known(path) for path in paths]
    for path, known_file in zip(paths, files, strict=True):
        corrected = False
        for section in known_file.sections:
            entries = [_correct(e) for e in section.entries]
            corrected = corrected or entries != section.entries
            section.entries = entries
        (scratch / path.name).write_text(known_file.text(), encoding="utf-8")
        if corrected and not merge:
            path.write_text(known_file.text(), encoding="utf-8")
    if merge:
        # A merge can take away what kept two entries apart: merge again until nothing moves.
        done, again = files, convert_all(files)
        while [f.text() for f in again] != [f.text() for f in done]:
            done, again = again, convert_all(again)
        for path, known_file in zip(paths, done, strict=True):
            if known_file.sections:
                path.write_text(known_file.text(), encoding="utf-8")
            else:
                path.unlink()
    return scratch


if __name__ == "__main__":
    sys.exit(main())
