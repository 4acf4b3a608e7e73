"""Every report opens with the regressions and the fixed-upstream cells; the draft of known
outcomes from a run makes every cell as expected."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from test_results_report import CELLS, INFO, cell, write_run, wrong

from lakecompat.harness.report.render import write_reports
from lakecompat.harness.results.expectations import Verdict, judge, load_expectations, to_records
from lakecompat.harness.results.known_draft import draft_known, to_yaml
from lakecompat.harness.results.outcomes import Outcome

KNOWN_FILE = """\
known:
- {engine: spark, scenario: baseline/*, outcome: ERROR, reason: used to fail, link: 'https://x/1'}
"""


def judged_run(tmp_path: Path) -> Path:
    """CELLS (one WRONG, unknown) judged against a file that says the baseline fails."""
    folder = tmp_path / "expectations"
    folder.mkdir()
    (folder / "k.yaml").write_text(KNOWN_FILE)
    info = {**INFO, "known": to_records(load_expectations(folder), folder)}
    run_dir = write_run(tmp_path / "run", CELLS, info)
    write_reports(run_dir, [tmp_path / "out"])
    return tmp_path / "out"


def test_matrix_and_summary_list_regressions_and_fixed_upstream_first(tmp_path: Path) -> None:
    out = judged_run(tmp_path)
    regression_id = "spark.mor.read_optimized.add_column/after[default]"
    fixed_id = "spark.cow.snapshot.baseline/no_change[default]"
    for name in ("matrix.md", "summary.md"):
        text = (out / name).read_text()
        regressions = text.index("## Regressions (1)")
        fixed = text.index("## Fixed upstream (1)")
        assert regressions < fixed
        assert f"| `{regression_id}` | PASS | WRONG | `name` read by position |" in text
        assert f"| `{fixed_id}` | ERROR | PASS | known: used to fail (https://x/1) |" in text
        assert "4 as expected, 1 regressions, 1 fixed upstream" in text
    matrix = (out / "matrix.md").read_text()
    # The overview first, the verdicts right after it, then the detail tables.
    overview = matrix.index("operations × engines")
    assert overview < matrix.index("## Regressions") < matrix.index("## spark 3.5.9 ·")
    document = json.loads((out / "results.json").read_text())
    assert document["totals"]["verdicts"] == {
        "as expected": 4,
        "regression": 1,
        "fixed upstream": 1,
    }
    baseline = next(c for c in document["cells"] if c["scenario"] == "baseline/no_change")
    assert baseline["known"] == {"reason": "used to fail", "link": "https://x/1"}
    assert baseline["expected"] == "ERROR" and baseline["verdict"] == "fixed upstream"


def test_a_run_without_regressions_says_so(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "run", [cell(), cell(query_type="incremental")], INFO)
    write_reports(run_dir, [tmp_path / "out"])
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "No regressions: every cell is as expected." in summary
    assert "Fixed upstream" not in summary


def test_an_interrupted_run_says_so_first_and_claims_no_more_than_its_cells(
    tmp_path: Path,
) -> None:
    started = {
        "cwd": "/home/me/lake project",
        "program": ".venv/bin/lakecompat",
        "run": "reports/runs/20261128-092404",
        "reports": "",
    }
    info = {**INFO, "run_id": "20261128-092404", "status": "interrupted", "invocation": started}
    run_dir = write_run(tmp_path / "run", [cell(), cell(query_type="incremental")], info)
    write_reports(run_dir, [tmp_path / "out"])
    notice = "Interrupted: the run stopped after 2 cells"
    # The command that completes it, from any folder: where the run started, as it started.
    resume = (
        "complete it with `cd '/home/me/lake project' && .venv/bin/lakecompat run --resume "
        "reports/runs/20261128-092404`"
    )
    for name in ("summary.md", "matrix.md", "matrix.html"):
        text = (tmp_path / "out" / name).read_text()
        if name == "matrix.html":
            text = html.unescape(re.sub(r"</?code>", "`", text))
        # Before the totals: the first thing a reader sees after the title.
        assert text.index(notice) < text.index("2 pass"), name
        assert resume in text, name
        assert "every cell is as expected" not in text, name
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "No regressions among the cells measured before the run stopped." in summary
    # A run folder from before run.json recorded how the run started: the default layout.
    del info["invocation"]
    write_reports(write_run(tmp_path / "old", [cell()], info), [tmp_path / "old-out"])
    summary = (tmp_path / "old-out" / "summary.md").read_text()
    assert "complete it with `lakecompat run --resume reports/runs/20261128-092404`" in summary
    # A finished run has no such notice.
    write_reports(write_run(tmp_path / "done", [cell()], INFO), [tmp_path / "done-out"])
    for name in ("summary.md", "matrix.md", "matrix.html"):
        assert "the run stopped after" not in (tmp_path / "done-out" / name).read_text()


def test_a_failed_run_names_its_error_first(tmp_path: Path) -> None:
    info = {**INFO, "status": "failed", "error": "the Hudi bundle could not be fetched"}
    write_reports(write_run(tmp_path / "run", [cell()], info), [tmp_path / "out"])
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "Failed: the run stopped after 1 cell (the Hudi bundle could not be fetched)" in summary


def test_re_judging_with_other_known_outcomes(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "run", CELLS, INFO)
    folder = tmp_path / "known"
    folder.mkdir()
    (folder / "k.yaml").write_text(
        "known: [{engine: spark, scenario: add_column/after, table_type: mor, "
        "query_type: read_optimized, outcome: WRONG, reason: positions}]"
    )
    judged = write_reports(run_dir, [tmp_path / "out"], load_expectations(folder))
    assert all(j.verdict is Verdict.AS_EXPECTED for j in judged)


def test_draft_covers_every_failure_and_no_pass() -> None:
    cells = [
        *CELLS,
        # an engine that cannot do one query type at all: one general entry
        *(
            cell(scenario=s, engine="trino", query_type="incremental", outcome=Outcome.UNSUPPORTED)
            for s in ("a/x", "b/y", "c/z")
        ),
        # a scenario the writer refused, for every engine
        *(cell(scenario="r/first", engine=e, outcome=Outcome.REJECTED) for e in ("hive", "spark")),
        # one variant of a scenario fails, the other passes
        wrong(scenario="m/mixed", variant="by_position"),
        cell(scenario="m/mixed", variant="by_name"),
    ]
    entries = draft_known(cells)
    assert all(j.verdict is Verdict.AS_EXPECTED for j in judge(cells, entries))
    shapes = {(e.engine, e.scenario, e.table_type, e.query_type, e.variant) for e in entries}
    assert ("trino", "*", "cow", "incremental", "*") in shapes
    assert ("*", "r/first", "*", "*", "*") in shapes
    assert ("spark", "m/mixed", "cow", "snapshot", "by_position") in shapes
    assert len(entries) == 4  # the fourth: the one WRONG cell of CELLS


def test_drafted_file_loads_back_with_one_entry_per_cause(tmp_path: Path) -> None:
    # Two scenarios fail the same way in one variant and pass in the other: drafted per
    # scenario, written as one entry listing both.
    cells = [
        *CELLS,
        *(wrong(scenario=s, variant="by_position") for s in ("x/y", "z/w")),
        *(cell(scenario=s, variant="by_name") for s in ("x/y", "z/w")),
    ]
    entries = draft_known(cells)
    (tmp_path / "known.yaml").write_text(to_yaml(entries))
    loaded = load_expectations(tmp_path)
    assert len(loaded) < len(entries)
    [both] = [e for e in loaded if e.variant == "by_position"]
    assert both.scenario == ("x/y", "z/w") and both.reason == "`name` read by position"
    assert all(j.verdict is Verdict.AS_EXPECTED for j in judge(cells, loaded))


def test_every_field_of_results_json_is_documented(tmp_path: Path) -> None:
    out = judged_run(tmp_path)
    document = json.loads((out / "results.json").read_text())
    docs = (Path(__file__).resolve().parent.parent / "docs" / "results.md").read_text()
    assert f"# `results.json`, schema version {document['schema_version']}" in docs
    fields = set(document) | set(document["totals"]) | set(document["cells"][0])
    fields |= set(document["cells"][0]["evidence"])
    fields |= {"run_id", "started", "writer", "engines", "scenarios", "table_types", "pattern"}
    fields |= {"engine_settings", "known", "source"}
    missing = sorted(f for f in fields if f"`{f}`" not in docs)
    assert missing == []


def test_the_totals_count_a_refused_table_once_and_the_reads_apart(tmp_path: Path) -> None:
    """A table the writer refused has a REJECTED cell for every reader, query type and
    shape: summary.md and the headers of matrix.md and matrix.html count the table once, the
    cells that read apart; junit.xml keeps a case per cell."""
    refused = [
        cell(scenario="type_change/x", engine=e, query_type=q, shape=s, outcome=Outcome.REJECTED)
        for e in ("spark", "hive")
        for q in ("snapshot", "read_optimized")
        for s in ("all", "filter")
    ]
    known = (
        "known:\n- {engine: '*', scenario: type_change/x, shape: '*', outcome: REJECTED, "
        "reason: refused}\n"
    )
    folder = tmp_path / "expectations"
    folder.mkdir()
    (folder / "k.yaml").write_text(known)
    info = {**INFO, "known": to_records(load_expectations(folder), folder)}
    write_reports(write_run(tmp_path / "run", [*CELLS[:3], *refused], info), [tmp_path / "out"])
    out = tmp_path / "out"
    summary = (out / "summary.md").read_text()
    assert "- Tables: 3, 1 refused by the writer (each said once in matrix.md" in summary
    assert (
        "- Reads: 3 (3 pass, 0 wrong, 0 error, 0 unsupported, 0 engine failed; junit.xml" in summary
    )
    assert "for each of the 11 cells" in summary
    assert "- Against the known outcomes: 4 as expected, 0 regressions, 0 fixed upstream" in summary
    line = (
        "3 reads: 3 pass, 0 wrong, 0 error, 0 unsupported, 0 engine failed · 1 of 3 tables "
        "refused by the writer"
    )
    assert f"**{line}** · against the known outcomes" in (out / "matrix.md").read_text()
    assert html.escape(line, quote=True) in (out / "matrix.html").read_text()
    assert (out / "junit.xml").read_text().count("<testcase ") == 11
    totals = json.loads((out / "results.json").read_text())["totals"]
    assert totals["tables"] == {"total": 3, "refused": 1}
    assert totals["outcomes"]["REJECTED"] == 8


def test_drafts_on_top_never_speak_for_cells_the_reviewed_entries_judge_right() -> None:
    """A filter read under a second variant fails as the default's does: the draft names that
    variant, so the default's cell keeps its reviewed reason."""
    from lakecompat.harness.results.expectations import Known
    from lakecompat.harness.results.known_draft import draft_on_top

    reviewed = [
        Known.model_validate(
            {
                "engine": "spark",
                "scenario": "x/y",
                "variant": "by_name",
                "shape": "filter",
                "outcome": "WRONG",
                "reason": "reviewed: loses the renamed rows",
            }
        )
    ]
    cells = [
        *(cell(scenario="x/y", variant=v) for v in ("by_name", "by_id")),
        *(wrong(scenario="x/y", variant=v, shape="filter") for v in ("by_name", "by_id")),
    ]
    drafted = draft_on_top(cells, reviewed)
    assert [(e.variant, e.shape) for e in drafted] == [("by_id", "filter")]
    judged = {j.cell.variant: j for j in judge(cells, drafted + reviewed) if j.cell.shape != "all"}
    assert judged["by_name"].known.reason == "reviewed: loses the renamed rows"
    assert all(j.verdict is Verdict.AS_EXPECTED for j in judged.values())
