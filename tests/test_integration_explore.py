"""Integration: exploration with Spark finds a planted failure and shrinks it to the minimal
sequence.

The test alters one oracle rule (after a rename, the renamed column is expected to be NULL)
in the answers the cells are compared with, so Spark's correct answers become failures of every
sequence that renames a column with a value in it. The smallest such sequence: one data column
of the simplest type, one row, one step renaming it, on a copy-on-write table.

The writer writes what it always does, so the sequences' tables go through the table cache as
`lakecompat explore`'s do: the same seed finds the same sequences, and a later run of the test
reads their tables instead of writing them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from lakecompat.harness.explore.lab import Lab, explore, mark_covered, write_findings
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.scenario import model as sc
from lakecompat.harness.scenario import oracle, shapes
from lakecompat.harness.writer.cache import default_location

pytestmark = pytest.mark.integration


def test_a_planted_failure_is_found_and_shrunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original_apply, original_expected = oracle._apply, shapes.expected

    def renamed_reads_null(state: Any, spec: Any, step: Any, where: str) -> None:
        original_apply(state, spec, step, where)
        if isinstance(step, sc.RenameColumn):
            for row in state.rows.values():
                row[step.to] = None

    def planted_expected(*args: Any, **kwargs: Any) -> Any:
        # Only the answer a cell is compared with changes; the writer writes what it always
        # does, so the tables it keeps in the table cache are everybody's.
        with monkeypatch.context() as planted:
            planted.setattr(oracle, "_apply", renamed_reads_null)
            return original_expected(*args, **kwargs)

    monkeypatch.setattr(shapes, "expected", planted_expected)
    lab = Lab(tmp_path / "work", ("spark",), Progress(quiet=True), 120, default_location())
    with lab.running():
        result = explore(lab, budget=900, seed=7, max_examples=12)
    assert result.findings, "the planted failure was not found"
    # Every finding is the planted one: a sequence with a rename.
    for finding in result.findings.values():
        assert finding.signature[:2] == ("spark", "WRONG")
        assert "rename_column" in [step["op"] for step in finding.spec["steps"]]
    smallest = min(
        result.findings.values(),
        key=lambda f: (len(f.spec["steps"]), len(f.spec["schema"]), len(f.spec["rows"])),
    )
    assert smallest.shrunk
    assert smallest.spec["steps"] == [{"op": "rename_column", "column": "c1", "to": "r4"}]
    assert [c["name"] for c in smallest.spec["schema"]] == ["id", "c1", "ts"]
    assert smallest.spec["schema"][1]["type"] == "int"
    assert len(smallest.spec["rows"]) == 1
    assert smallest.spec["table_types"] == ["cow"]
    mark_covered(result, [])
    paths = write_findings(result, tmp_path / "out")
    assert len(paths) == len(result.findings)
    written = [yaml.safe_load(path.read_text()) for path in paths]
    assert smallest.spec["steps"] in [w["steps"] for w in written]
    assert "**new**" in (tmp_path / "out" / "explore.md").read_text()
