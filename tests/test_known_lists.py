"""Known outcomes written once per cause: `scripts/convert_known.py` merges the entries of one
cause into entries that list values, and never where that would judge a cell otherwise."""

from __future__ import annotations

import functools
import importlib.util
import itertools
import sys
from pathlib import Path
from types import ModuleType

import yaml
from test_results_report import cell

from lakecompat.harness.results.expectations import judge as judge_cells
from lakecompat.harness.results.expectations import load_expectations
from lakecompat.harness.results.outcomes import Outcome

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def script() -> ModuleType:
    """scripts/convert_known.py as a module (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location(
        "convert_known", ROOT / "scripts/convert_known.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def entry(scenario: str, table_type: str, outcome: str, reason: str) -> dict[str, object]:
    return {
        "engine": "spark",
        "format": "hudi",
        "hudi": "==1.2.0",
        "scenario": scenario,
        "table_type": table_type,
        "query_type": "snapshot",
        "outcome": outcome,
        "reason": reason,
    }


def converted(tmp_path: Path, entries: list[dict[str, object]]) -> tuple[Path, Path]:
    """`entries` as a file in folder `before/`, and the script's conversion of it in
    `after/`."""
    before, after = tmp_path / "before", tmp_path / "after"
    before.mkdir()
    after.mkdir()
    text = "# header\nknown:\n" + yaml.safe_dump(entries, sort_keys=False)
    (before / "known.yaml").write_text(text)
    convert = script()
    (after / "known.yaml").write_text(
        convert.convert(convert.read_known(before / "known.yaml")).text()
    )
    return before, after


def judgements(folder: Path) -> list[tuple[Outcome, str]]:
    """How every cell of the scenarios and table types below is judged by `folder`."""
    cells = [
        cell(scenario=s, table_type=t, writer={"spark": "3.5.9", "hudi": "1.2.0"})
        for s, t in itertools.product(
            ["add_column/after", "add_column/at_end", "rename_column/rename"], ["cow", "mor"]
        )
    ]
    known = load_expectations(folder)
    return [(j.expected, j.known.reason if j.known else "") for j in judge_cells(cells, known)]


def test_the_entries_of_one_cause_become_one_entry_listing_their_values(tmp_path: Path) -> None:
    before, after = converted(
        tmp_path,
        [
            entry("add_column/after", "cow", "WRONG", "read by position"),
            entry("add_column/after", "mor", "WRONG", "read by position"),
            entry("add_column/at_end", "cow", "WRONG", "read by position"),
            entry("add_column/at_end", "mor", "WRONG", "read by position"),
            entry("rename_column/rename", "cow", "ERROR", "another cause"),
        ],
    )
    merged = yaml.safe_load((after / "known.yaml").read_text())["known"]
    # cow and mor are every table type: the merged entry needs no `table_type`.
    assert [(e["reason"], e["scenario"], e.get("table_type")) for e in merged] == [
        ("read by position", ["add_column/after", "add_column/at_end"], None),
        ("another cause", "rename_column/rename", "cow"),
    ]
    assert judgements(after) == judgements(before)


def test_no_merge_moves_a_cell_past_an_entry_that_judged_it_first(tmp_path: Path) -> None:
    """`at_end`'s cells meet the `add_column/*` entry before their own: joining that entry to
    the first one (same cause) would judge them by it instead."""
    before, after = converted(
        tmp_path,
        [
            entry("add_column/after", "cow", "WRONG", "read by position"),
            entry("add_column/*", "cow", "ERROR", "fails to open the file"),
            entry("add_column/at_end", "cow", "WRONG", "read by position"),
        ],
    )
    assert len(yaml.safe_load((after / "known.yaml").read_text())["known"]) == 3
    assert judgements(after) == judgements(before)
    assert (Outcome.ERROR, "fails to open the file") in judgements(after)


def test_the_shipped_known_outcomes_are_written_once_per_cause() -> None:
    """After the conversion: no two entries of the files say the same thing where one entry
    could hold both (the script would merge them, across files and sections: it leaves
    nothing to merge), and there are about as many entries as distinct reasons."""
    convert = script()
    paths = sorted((ROOT / "expectations").glob("*.yaml"))
    files = [convert.read_known(path) for path in paths]
    again = convert.convert_all(files)
    for before, after in zip(files, again, strict=True):
        assert [s.entries for s in after.sections] == [s.entries for s in before.sections], (
            before.name
        )
    items = sum(len(s.entries) for f in files for s in f.sections)
    reasons = {e.reason for e in load_expectations(ROOT / "expectations")}
    assert items <= len(reasons) * 1.1


def known_files(tmp_path: Path, files: dict[str, list[dict[str, object]]]) -> Path:
    """`files` (name -> entries) written into a folder of their own."""
    folder = tmp_path / "known"
    folder.mkdir()
    for name, entries in files.items():
        text = "# header\nknown:\n" + yaml.safe_dump(entries, sort_keys=False)
        (folder / name).write_text(text)
    return folder


def converted_all(folder: Path, out: Path) -> Path:
    """The script's conversion of every file of `folder` (across files), in `out`."""
    convert = script()
    out.mkdir()
    paths = sorted(folder.glob("*.yaml"))
    for path, known_file in zip(
        paths, convert.convert_all([convert.read_known(p) for p in paths]), strict=True
    ):
        if known_file.sections:
            (out / path.name).write_text(known_file.text())
    return out


def test_a_cause_met_in_several_files_is_one_entry_in_the_default_releases_file(
    tmp_path: Path,
) -> None:
    """The same reason at Hudi 0.15.0 (its point's file loads first) and with the default
    releases: one entry in known.yaml, a case per point, the default's first."""
    older = entry("add_column/after", "cow", "WRONG", "read by position") | {"hudi": "==0.15.0"}
    before = known_files(
        tmp_path,
        {
            "hudi-0.15.0.yaml": [older],
            "known.yaml": [entry("add_column/after", "cow", "WRONG", "read by position")],
        },
    )
    after = converted_all(before, tmp_path / "after")
    assert sorted(p.name for p in after.iterdir()) == ["known.yaml"]
    items = yaml.safe_load((after / "known.yaml").read_text())["known"]
    assert [(i["reason"], i["cases"]) for i in items] == [
        (
            "read by position",
            [{"hudi": {"release": "==1.2.0"}}, {"hudi": {"release": "==0.15.0"}}],
        )
    ]
    assert judgements(after) == judgements(before)


def test_a_cause_stays_in_the_first_file_when_an_entry_between_would_judge_it(
    tmp_path: Path,
) -> None:
    """known.yaml judges `add_column/after` by another entry before its own: the point's entry
    cannot move past it, so the cause is written in the point's file."""
    older = entry("add_column/after", "cow", "WRONG", "read by position") | {"hudi": ">=0.15.0"}
    before = known_files(
        tmp_path,
        {
            "hudi-0.15.0.yaml": [older],
            "known.yaml": [
                entry("add_column/*", "cow", "ERROR", "fails to open the file"),
                entry("add_column/at_end", "cow", "WRONG", "read by position"),
            ],
        },
    )
    after = converted_all(before, tmp_path / "after")
    assert sorted(p.name for p in after.iterdir()) == ["hudi-0.15.0.yaml", "known.yaml"]
    first = yaml.safe_load((after / "hudi-0.15.0.yaml").read_text())["known"]
    assert [i["reason"] for i in first] == ["read by position"]
    assert judgements(after) == judgements(before)


def test_the_entries_of_one_cause_that_no_list_holds_become_the_cases_of_one_entry(
    tmp_path: Path,
) -> None:
    """`add_column/after` on both table types and `rename_column/rename` on cow alone are no
    box of values: one entry says their reason once, with a case for each."""
    before, after = converted(
        tmp_path,
        [
            entry("add_column/after", "cow", "WRONG", "read by position"),
            entry("add_column/at_end", "cow", "ERROR", "another cause"),
            entry("add_column/after", "mor", "WRONG", "read by position"),
            entry("rename_column/rename", "cow", "WRONG", "read by position"),
        ],
    )
    items = yaml.safe_load((after / "known.yaml").read_text())["known"]
    assert [(e["reason"], e.get("cases")) for e in items] == [
        (
            "read by position",
            [
                {"scenario": ["add_column/after", "rename_column/rename"], "table_type": "cow"},
                {"scenario": "add_column/after", "table_type": "mor"},
            ],
        ),
        ("another cause", None),
    ]
    assert judgements(after) == judgements(before)
    entries = load_expectations(after)
    assert [e.source(after) for e in entries] == [
        "known.yaml#known[0].cases[0]",
        "known.yaml#known[0].cases[1]",
        "known.yaml#known[1]",
    ]


def test_a_case_is_not_moved_past_an_entry_that_judged_its_cells_first(tmp_path: Path) -> None:
    """`rename_column/*` on cow judges `rename_column/rename`'s cow cell before the last entry
    does: that entry stays where it is, not a case of the first."""
    before, after = converted(
        tmp_path,
        [
            entry("add_column/after", "cow", "WRONG", "read by position"),
            entry("rename_column/*", "cow", "ERROR", "another cause"),
            entry("rename_column/rename", "cow", "WRONG", "read by position"),
        ],
    )
    items = yaml.safe_load((after / "known.yaml").read_text())["known"]
    assert [e["reason"] for e in items] == ["read by position", "another cause", "read by position"]
    assert judgements(after) == judgements(before)
