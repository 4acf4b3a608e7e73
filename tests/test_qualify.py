"""`lakecompat qualify` on finished runs, and version points as data (no engine runs here)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support import ROOT
from test_results_report import cell, write_run

from lakecompat.engines import engine_class
from lakecompat.engines.releases import Releases
from lakecompat.harness.cli import main
from lakecompat.harness.qualify.compare import Change, Point, classify, qualify, render_markdown
from lakecompat.harness.qualify.versions import VersionsError, load_versions, parse_points
from lakecompat.harness.results.outcomes import Outcome
from lakecompat.harness.run.plan import needed_baselines
from lakecompat.harness.scenario.load import load_scenarios

BASE_INFO = {"run_id": "base", "writer": {"spark": "3.5.9", "hudi": "1.1.1"}}
CAND_INFO = {"run_id": "cand", "writer": {"spark": "3.5.9", "hudi": "1.2.0"}}
P, W, E, U = Outcome.PASS, Outcome.WRONG, Outcome.ERROR, Outcome.UNSUPPORTED


@pytest.mark.parametrize(
    ("before", "after", "change"),
    [
        (P, P, Change.UNCHANGED),
        (U, U, Change.UNCHANGED),
        (P, W, Change.NEWLY_FAILING),
        (P, U, Change.NEWLY_FAILING),
        (E, P, Change.NEWLY_PASSING),
        (W, E, Change.FAILURE_CHANGED),
        (W, W, Change.STILL_FAILING),
        (P, None, Change.ONLY_BASELINE),
        (None, W, Change.ONLY_CANDIDATE),
    ],
)
def test_every_pair_of_outcomes_has_one_change(
    before: Outcome | None, after: Outcome | None, change: Change
) -> None:
    old = cell(outcome=before) if before else None
    new = cell(outcome=after) if after else None
    assert classify(old, new) is change


def pair(tmp_path: Path) -> tuple[Path, Path]:
    """Two runs: one cell breaks, one is fixed, one failure changes, one stays, one is new."""
    base = [
        cell(),
        cell(query_type="read_optimized", outcome=E, reason="old error"),
        cell(table_type="mor", outcome=W, reason="NULLs in `a`"),
        cell(variant="other", outcome=W, reason="NULLs in `b`"),
        cell(scenario="baseline/no_change", category="baseline"),
    ]
    cand = [
        cell(outcome=W, reason="NULLs where values were expected in `a`"),
        cell(query_type="read_optimized"),
        cell(table_type="mor", outcome=E, reason="new error"),
        cell(variant="other", outcome=W, reason="NULLs in `b`"),
        cell(scenario="baseline/no_change", category="baseline"),
        cell(engine="trino", engine_version="483"),
    ]
    return write_run(tmp_path / "base", base, BASE_INFO), write_run(
        tmp_path / "cand", cand, CAND_INFO
    )


def test_report_lists_breaks_first_then_fixes_then_failures(tmp_path: Path) -> None:
    base, cand = pair(tmp_path)
    out = tmp_path / "q"
    assert main(["qualify", str(base), str(cand), "--out", str(out)]) == 1
    markdown = (out / "qualify.md").read_text()
    headings = [line for line in markdown.splitlines() if line.startswith("## ")]
    assert headings == [
        "## Newly failing (1)",
        "## Newly passing (1)",
        "## Failure changed (1)",
        "## Still failing (1)",
        "## Only in candidate (1)",
    ]
    assert "writer hudi 1.1.1" in markdown and "writer hudi 1.2.0" in markdown
    assert (
        "| `spark.cow.snapshot.add_column/after[default]` | PASS | WRONG |  | "
        "NULLs where values were expected in `a` |" in markdown
    )
    document = json.loads((out / "qualify.json").read_text())
    assert document["breaks"] is True
    assert document["counts"]["newly failing"] == 1 and document["counts"]["unchanged"] == 1
    changes = {c["id"]: c["change"] for c in document["cells"]}
    assert changes["spark.mor.snapshot.add_column/after[default]"] == "failure changed"
    assert changes["trino.cow.snapshot.add_column/after[default]"] == "only in candidate"


def test_junit_fails_exactly_the_newly_failing_cells(tmp_path: Path) -> None:
    base, cand = pair(tmp_path)
    out = tmp_path / "q"
    main(["qualify", str(base), str(cand), "--out", str(out)])
    root = ET.parse(out / "qualify-junit.xml").getroot()
    cases = root.findall(".//testcase")
    assert len(cases) == 6
    failed = [
        f"{c.get('classname')}.{c.get('name')}" for c in cases if c.find("failure") is not None
    ]
    assert failed == ["spark.cow.snapshot.add_column/after[default]"]


def test_no_break_exits_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = write_run(tmp_path / "base", [cell(outcome=W, reason="x"), cell(variant="v")], BASE_INFO)
    cand = write_run(tmp_path / "cand", [cell(), cell(variant="v")], CAND_INFO)
    assert main(["qualify", str(base), str(cand), "--out", str(tmp_path / "q")]) == 0
    out = capsys.readouterr().out
    assert "0 newly failing, 1 newly passing" in out
    html = (tmp_path / "q" / "qualify.html").read_text()
    assert "breaks no cell" in html and "id='newly_passing'" in html


def test_identical_reasons_are_not_repeated() -> None:
    same = cell(outcome=W, reason="NULLs in `b`")
    result = qualify(Point("a", {}), [same], Point("b", {}), [same])
    assert "| NULLs in `b` | (same) |" in render_markdown(result)


def test_qualify_needs_exactly_one_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["qualify"]) == 2
    assert "exactly one of" in capsys.readouterr().err
    base, _ = pair(tmp_path)
    assert main(["qualify", str(base)]) == 2
    assert "compares two runs; 1 given" in capsys.readouterr().err


def test_versions_file_names_baseline_and_candidate(tmp_path: Path) -> None:
    path = tmp_path / "versions.yaml"
    path.write_text(
        "baseline: old\ncandidate: new\npoints:\n"
        "  - {name: new, hudi: 1.2.0}\n  - {name: mid, hudi: 1.1.1, trino: '476'}\n"
        "  - {name: old, hudi: 0.15.0}\n"
    )
    plan = load_versions(path)
    assert plan.baseline_point().hudi == "0.15.0"
    assert plan.candidate_point().name == "new"
    assert plan.points[1].releases() == {"hudi": "1.1.1", "trino": "476"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("points:\n  - {name: a, hudi: 1.2.0}\n", "points: List should have at least 2 items"),
        (
            "points:\n  - {name: a, hudi: 1.2.0}\n  - {name: b, flink: 1.17.1}\n",
            "points[1]: unknown field 'flink'; known fields: name, hudi, table_version, "
            "hive_hudi, spark_hudi, iceberg, format_version, delta, column_mapping, daft, "
            "deltalake, duckdb, hive, hudi_rs, polars, pyiceberg, trino",
        ),
        (
            "points:\n  - {name: a, hudi: 1.2.0}\n  - {name: b, spark: 4.0.0}\n",
            "points[1]: unknown field 'spark' (did you mean 'spark_hudi'?)",
        ),
        (
            "points:\n  - {name: a, hudi: 1.2.0}\n  - {nmae: b, trino: 476}\n",
            "points[1]: unknown field 'nmae' (did you mean 'name'?)",
        ),
        (
            "points:\n  - {name: a, hudi: latest}\n  - {name: b}\n",
            "points[0].hudi: 'latest' is not a release number",
        ),
        (
            "points:\n  - {name: a}\n  - {name: a}\n",
            "point names must differ; repeated: a",
        ),
        (
            "baseline: x\npoints:\n  - {name: a}\n  - {name: b}\n",
            "baseline 'x' is not a point (points: a, b)",
        ),
        ("- a\n", "expected a mapping with 'points:'"),
    ],
)
def test_bad_versions_files_name_the_file_and_field(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "versions.yaml"
    path.write_text(text)
    with pytest.raises(VersionsError) as raised:
        load_versions(path)
    assert str(raised.value).startswith(str(path))
    assert message in str(raised.value)


def test_points_from_the_command_line() -> None:
    plan = parse_points(["old:hudi=1.1.1,trino=476", "new:hudi=1.2.0"])
    assert [p.name for p in plan.points] == ["old", "new"]
    assert plan.baseline_point().trino == "476"
    with pytest.raises(VersionsError, match="'hudi' is not KEY=VERSION"):
        parse_points(["old:hudi", "new:hudi=1.2.0"])


def test_a_bad_point_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["qualify", "--point", "old:hudi=x", "--point", "new:hudi=1.2.0"]) == 2
    assert "--point: points[0].hudi: 'x' is not a release number" in capsys.readouterr().err


def test_the_project_versions_files_are_valid() -> None:
    folder = Path(__file__).resolve().parent.parent / "versions"
    files = sorted(folder.glob("*.yaml"))
    assert files
    for path in files:
        plan = load_versions(path)
        assert plan.baseline_point() != plan.candidate_point()


def test_hive_with_older_hudi_jars_is_named_in_reports_and_points() -> None:
    from lakecompat.harness.report.summary import engine_versions

    info = {"engines": {"spark": "3.5.9", "hive": "4.0.1"}, "hive_hudi": "0.15.0"}
    assert engine_versions(info) == "spark 3.5.9, hive 4.0.1 with Hudi 0.15.0 jars"
    assert engine_versions({**info, "hive_hudi": None}) == "spark 3.5.9, hive 4.0.1"
    hive = cell(engine="hive", engine_version="4.0.1", reader_hudi="0.15.0")
    point = Point.of_run("skew", {"writer": {"spark": "3.5.9", "hudi": "1.2.0"}}, [hive])
    assert point.versions["hive hudi"] == "0.15.0"


def test_known_outcomes_drafted_across_version_points_judge_every_point() -> None:
    from lakecompat.harness.results.expectations import Verdict, judge
    from lakecompat.harness.results.known_draft import draft_known_across

    def at(hudi: str, **overrides: object) -> object:
        return cell(writer={"spark": "3.5.9", "hudi": hudi}, reader_hudi=hudi, **overrides)

    old = [
        at("1.1.1", outcome=W, reason="NULLs in `a`"),  # fails the same way at both points
        at("1.1.1", query_type="incremental"),  # passes on 1.1.1 only
        at("1.1.1", query_type="time_travel", outcome=E, reason="old bug"),  # fixed in 1.2.0
        at("1.1.1", engine="hive", engine_version="4.0.1"),
    ]
    new = [
        at("1.2.0", outcome=W, reason="NULLs in `a`"),
        at("1.2.0", query_type="incremental", outcome=E, reason="new bug"),
        at("1.2.0", query_type="time_travel"),
        at("1.2.0", engine="hive", engine_version="4.0.1"),
    ]
    entries = draft_known_across([old, new])
    scoped = [e for e in entries if e.bound("hudi")]
    assert {(e.query_type, e.bound("hudi"), e.bound("reader_hudi")) for e in scoped} == {
        ("incremental", "==1.2.0", "==1.2.0"),
        ("time_travel", "==1.1.1", "==1.1.1"),
    }
    assert entries[-1].bound("hudi") == "" and entries[-1].outcome is W
    for cells in (old, new):
        assert {j.verdict for j in judge(cells, entries)} == {Verdict.AS_EXPECTED}


def test_known_takes_several_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base, cand = pair(tmp_path)
    # The pair's cells all say the writer was Hudi 0.15.0: nothing to scope the differences by.
    assert main(["known", str(base), str(cand)]) == 2
    assert "same versions as another run" in capsys.readouterr().err
    old = write_run(tmp_path / "old", [cell(outcome=E, reason="x", writer={"hudi": "1.1.1"})])
    new = write_run(tmp_path / "new", [cell(writer={"hudi": "1.2.0"})])
    assert main(["known", str(old), str(new)]) == 0
    text = capsys.readouterr().out
    assert "hudi: {release: ==1.1.1}" in text and "1.2.0" not in text


def test_known_against_reviewed_entries_drafts_only_what_a_point_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from lakecompat.harness.results.expectations import Known, Verdict, judge
    from lakecompat.harness.results.known_draft import draft_on_top

    reviewed = [
        Known(engine="spark", scenario="a/*", outcome=W, reason="reviewed"),
        Known(engine="hive", scenario="a/x", outcome=E, reason="fixed since 1.0"),
    ]

    def at(**overrides: object) -> object:
        fields = {"writer": {"spark": "3.5.9", "hudi": "0.15.0"}, "reader_hudi": "0.15.0"}
        return cell(**{**fields, **overrides})

    old = [
        at(scenario="a/x", outcome=W, reason="NULLs"),  # as the reviewed entry says
        at(scenario="a/y", outcome=E, reason="old bug"),  # fails otherwise at 0.15.0
        at(scenario="a/y", engine="hive", engine_version="4.0.1"),
        at(scenario="a/x", engine="hive", engine_version="4.0.1", outcome=E, reason="bug"),
        at(scenario="a/x", engine="hive", engine_version="4.0.1", query_type="incremental"),
        at(scenario="b/z", engine="hive", engine_version="4.0.1", reader_hudi="1.2.0", outcome=E),
        at(scenario="b/z"),
    ]
    entries = draft_on_top(old, reviewed)
    drafted = [
        (e.engine, e.scenario, e.query_type, e.outcome, e.bound("hudi"), e.bound("reader_hudi"))
        for e in entries
    ]
    assert drafted == [
        ("spark", "a/y", "*", E, "==0.15.0", "==0.15.0"),
        ("hive", "b/z", "*", E, "==0.15.0", "==1.2.0"),
        ("hive", "a/x", "incremental", Outcome.PASS, "==0.15.0", "==0.15.0"),
    ]
    assert entries[-1].reason == "passes with Hudi 0.15.0"
    assert {j.verdict for j in judge(old, entries + reviewed)} == {Verdict.AS_EXPECTED}
    folder = tmp_path / "expectations"
    folder.mkdir()
    (folder / "known.yaml").write_text(to_yaml_text(reviewed))
    run = write_run(tmp_path / "old", old)
    assert main(["known", str(run), "--against", str(folder)]) == 0
    assert capsys.readouterr().out.count("\n  hudi: {release: ==0.15.0") == 3


def test_a_shaped_entry_borrows_the_reviewed_reason_of_its_tables_select_star() -> None:
    from lakecompat.harness.results.expectations import Known, Verdict, judge
    from lakecompat.harness.results.known_draft import draft_on_top

    link = "https://example.org/an-upstream-report"
    reviewed = [
        Known(engine="spark", scenario="a/x", outcome=W, reason="renamed reads NULL", link=link),
        Known(engine="spark", scenario="a/y", outcome=E, reason="reviewed error"),
        Known(engine="spark", scenario="a/z", outcome=E, reason="reviewed cast"),
    ]

    def at(**overrides: object) -> object:
        fields = {"writer": {"spark": "3.5.9", "hudi": "0.15.0"}, "reader_hudi": "0.15.0"}
        return cell(**{**fields, **overrides})

    lost = "rows lost without an error: the filter `b = 1` returned 0 of 1 matching rows"
    cast = "QueryError: java.lang.ClassCastException: class A cannot be cast to class B"
    shaped = [
        # the tables' SELECT * cells, as the reviewed entries know them
        at(scenario="a/x", outcome=W, reason="NULLs where values were expected in `b`"),
        at(scenario="a/y", outcome=E, reason="java.lang.Oops"),
        at(scenario="a/z", outcome=E, reason=cast),
        # SELECT * of a/x is known WRONG: the filter's lost rows take its reason and link
        at(scenario="a/x", shape="filter", outcome=W, reason=lost),
        at(scenario="a/x", shape="filter", variant="default+pushdown_off", outcome=W, reason=lost),
        # SELECT * of a/y is known ERROR, and the projection fails too
        at(scenario="a/y", shape="project", outcome=E, reason="java.lang.Oops"),
        # a/y's filter is WRONG where SELECT * is an ERROR: its own reason stays
        at(scenario="a/y", shape="filter", outcome=W, reason=lost),
        # a/z's projection fails too, but otherwise than SELECT *: its own reason stays
        at(scenario="a/z", shape="project", outcome=E, reason="QueryError: java.io.IOException"),
    ]
    entries = draft_on_top(shaped, reviewed)
    by_shape = {(e.scenario, e.shape): e for e in entries}
    borrowed = by_shape[("a/x", "filter")]
    assert borrowed.reason == (
        "rows lost without an error; SELECT * on the same table is WRONG too: renamed reads NULL"
    )
    assert borrowed.link == link
    assert by_shape[("a/y", "project")].reason == (
        "as SELECT * on the same table (ERROR): reviewed error"
    )
    assert by_shape[("a/y", "filter")].reason.startswith("rows lost without an error: the filter")
    assert by_shape[("a/y", "filter")].link is None
    assert by_shape[("a/z", "project")].reason == "QueryError: java.io.IOException"
    assert {j.verdict for j in judge(shaped, entries + reviewed)} == {Verdict.AS_EXPECTED}


def to_yaml_text(entries: list) -> str:
    from lakecompat.harness.results.known_draft import to_yaml

    return to_yaml(entries)


def test_two_finished_runs_are_compared_on_the_selected_cells_only(tmp_path: Path) -> None:
    base, cand = pair(tmp_path)
    out = tmp_path / "out"
    args = [str(base), str(cand), "--out", str(out), "--quiet"]
    assert main(["qualify", *args, "--engines", "trino"]) == 0
    document = json.loads((out / "qualify.json").read_text())
    assert [c["id"] for c in document["cells"]] == ["trino.cow.snapshot.add_column/after[default]"]
    # The one merge-on-read cell fails on both runs (another outcome): nothing newly breaks.
    assert main(["qualify", *args, "--scenarios", "add_column/*", "--table-types", "mor"]) == 0
    document = json.loads((out / "qualify.json").read_text())
    assert [c["id"] for c in document["cells"]] == ["spark.mor.snapshot.add_column/after[default]"]


def test_points_with_the_same_writer_share_a_run() -> None:
    from lakecompat.harness.qualify.run import share_groups
    from lakecompat.harness.run.options import RunOptions

    plan = parse_points(
        [
            "old:hudi=0.15.0",
            "current:hudi=1.2.0",
            "lagging:hudi=1.2.0,hive_hudi=0.15.0,spark_hudi=0.15.0",
            "default:",
            "other-hive:hudi=1.2.0,hive=4.0.0",
        ]
    )
    groups = share_groups(plan, RunOptions(releases=Releases({"hudi": "1.2.0"})))
    assert [[p.name for p in group] for group in groups] == [
        ["old"],
        ["current", "lagging", "default"],
        ["other-hive"],
    ]


def test_a_shared_run_starts_each_distinct_reader_once() -> None:
    from lakecompat.harness.run.options import RunOptions
    from lakecompat.harness.run.outlets import plan_engines

    current = RunOptions(engines=("spark", "hive", "trino"))
    lagging = RunOptions(
        engines=current.engines, releases=Releases(carried={"hive": {"hudi": "0.15.0"}})
    )
    same_as_writer = RunOptions(
        engines=current.engines, releases=Releases(carried={"spark": {"hudi": "1.2.0"}})
    )
    specs, routes = plan_engines([current, lagging, same_as_writer])
    assert [(s.cls.name, s.carried, s.label) for s in specs] == [
        ("spark", (), "spark"),
        ("hive", (), "hive"),
        ("hive", (("hudi", "0.15.0"),), "hive-hudi-0.15.0"),
        ("trino", (), "trino"),
    ]
    assert routes == [[0, 1, 3], [0, 2, 3], [0, 1, 3]]
    # A run of one point: one instance of each engine, named as always, skew or not.
    specs, routes = plan_engines([lagging])
    assert [(s.label, s.carried) for s in specs] == [
        ("spark", ()),
        ("hive", (("hudi", "0.15.0"),)),
        ("trino", ()),
    ]


def test_points_that_choose_different_cells_cannot_share_a_run() -> None:
    from lakecompat.harness.run.options import RunOptions
    from lakecompat.harness.run.outlets import check_shareable

    with pytest.raises(ValueError, match="must agree on pattern, table_types"):
        check_shareable(RunOptions(), RunOptions(pattern="x/*", table_types=("cow",)))


@pytest.mark.parametrize(
    ("status", "said"),
    [
        ("interrupted", "the run was interrupted after 1 cells; complete it with"),
        ("failed", "the run failed after 1 cells (boom); complete it with"),
        ("running", "the run has not finished (1 cells so far; it is still running"),
    ],
)
def test_an_unfinished_run_is_not_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], status: str, said: str
) -> None:
    """Comparing against a part of a run reported its missing cells as breaks ("84 newly
    failing"): an unfinished run is refused in one line naming it, its status and the command
    that completes it."""
    base, _ = pair(tmp_path)
    cand = write_run(tmp_path / "part", [cell()], {**CAND_INFO, "status": status, "error": "boom"})
    out = tmp_path / "q"
    assert main(["qualify", str(base), str(cand), "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"lakecompat: error: qualify compares finished runs only: {cand}: ")
    assert said in error
    if status != "running":
        assert f"`lakecompat run --resume {cand}`" in error
    assert error.count("\n") == 1
    assert not out.exists()


def versions_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "versions.yaml"
    path.write_text(text)
    return path


def test_a_versions_file_says_which_engines_and_scenarios_it_is_for(tmp_path: Path) -> None:
    path = versions_file(
        tmp_path,
        "engines: [spark, presto]\nscenarios: 'rename_column/*, type_change/int_to_long'\n"
        "points:\n  - {name: a}\n  - {name: b, table_version: 6}\n",
    )
    plan = load_versions(path)
    assert plan.engines == ["spark", "presto"]
    assert plan.scenarios == ["rename_column/*", "type_change/int_to_long"]
    bad = versions_file(
        tmp_path, "engines: [spark, prestodb]\npoints:\n  - {name: a}\n  - {name: b}\n"
    )
    with pytest.raises(VersionsError, match="engines: unknown engine 'prestodb'; known: daft"):
        load_versions(bad)


def test_the_shipped_versions_files_name_the_engines_outside_the_default_set() -> None:
    """The README's Presto example ran 25 minutes without Presto: a file about readers that
    are not read by default names them."""
    from lakecompat.harness.run.options import DEFAULT_ENGINES

    folder = Path(__file__).resolve().parent.parent / "versions"
    six = load_versions(folder / "hudi-1.2-table-version-6.yaml")
    assert six.engines is not None
    assert {"daft", "flink", "presto"} <= set(six.engines)
    assert set(DEFAULT_ENGINES) <= set(six.engines)  # and what the default readers lose
    assert load_versions(folder / "hive-3.1-to-4.0.yaml").engines == ["hive"]
    assert load_versions(folder / "writer-1.2-hive-0.15.yaml").engines == ["hive"]
    assert load_versions(folder / "writer-1.2-readers-0.15.yaml").engines == ["spark", "hive"]


class Stop(Exception):
    """Raised in place of fetching, to see what qualify did before it."""


def started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], stop: type[BaseException]
) -> int:
    """`lakecompat qualify ARGS` in `tmp_path`, stopped by `stop` where it would first fetch
    a release (the point after every check)."""

    def fetching(*_: object, **__: object) -> None:
        raise stop

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("lakecompat.harness.qualify.run.provision_points", fetching)
    try:
        return main(["qualify", *args])
    except Stop:
        return -1


def test_the_plan_is_said_before_anything_starts_and_the_command_line_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from lakecompat.harness.qualify.run import plan_line

    path = versions_file(
        tmp_path,
        "engines: [spark, hudi-rs]\nscenarios: 'rename_column/rename'\n"
        "points:\n  - {name: a}\n  - {name: b}\n",
    )
    assert started(tmp_path, monkeypatch, ["--versions", str(path)], Stop) == -1
    line = capsys.readouterr().out.splitlines()[-1]
    # The baseline scenario runs too; each is written as a cow and a mor table.
    assert line.startswith("qualifying 2 version points in 1 run(s): 4 tables and ")
    assert line.endswith("cells a point, read by spark, hudi-rs (hudi tables)")
    args = ["--versions", str(path), "--engines", "spark", "--scenarios", "add_column/*"]
    assert started(tmp_path, monkeypatch, [*args, "--table-types", "cow"], Stop) == -1
    line = capsys.readouterr().out.splitlines()[-1]
    assert "read by spark (hudi tables)" in line
    from lakecompat.harness.qualify.record import load_record

    record = load_record(tmp_path / "reports" / "qualify")
    assert record.options.pattern == "add_column/*" and record.options.engines == ("spark",)
    assert line == plan_line(record.plan, record.options)
    tables = int(line.split(": ")[1].split()[0])
    # The baselines that carry the column types of add_column/* (no_change, arrays, ...).
    chosen = load_scenarios(ROOT / "scenarios", "add_column/*")
    baselines = needed_baselines(load_scenarios(ROOT / "scenarios"), chosen)
    assert {s.id for s in baselines} > {"baseline/no_change", "baseline/arrays"}
    assert tables == len(baselines) + len(list((ROOT / "scenarios" / "add_column").glob("*.yaml")))


def test_ctrl_c_during_a_qualification_prints_the_command_that_completes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    points = ["--point", "a:", "--point", "b:", "--engines", "spark", "--scenarios", "add_column/*"]
    script = tmp_path / ".venv" / "bin" / "lakecompat"
    monkeypatch.setattr("sys.argv", [str(script), "qualify"])
    assert started(tmp_path, monkeypatch, points, KeyboardInterrupt) == 130
    error = capsys.readouterr().err.splitlines()
    assert error == [
        "lakecompat: interrupted; no point had finished a cell yet.",
        "Complete the qualification with: .venv/bin/lakecompat qualify --resume reports/qualify",
    ]
    record = json.loads((tmp_path / "reports" / "qualify" / "qualification.json").read_text())
    assert record["status"] == "interrupted"
    assert [p["name"] for p in record["plan"]["points"]] == ["a", "b"]
    assert record["options"]["pattern"] == "add_column/*"
    assert record["runs"] == {}


def test_the_interrupted_message_names_the_kept_cells_and_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lakecompat.harness.qualify.record import QualificationInterrupted
    from lakecompat.harness.run.interrupt import RunInterrupted

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", ["pytest"])
    run_dir = tmp_path / "reports" / "points" / "b" / "runs" / "20260101-000000"
    stopped = RunInterrupted([run_dir], 12, tmp_path / "reports" / "points" / "b")
    message = QualificationInterrupted(Path("out/q"), stopped, ["a"]).message()
    assert message.splitlines() == [
        "lakecompat: interrupted; 12 finished cells are kept in "
        "reports/points/b/runs/20260101-000000; the points measured already are kept (a).",
        "Complete the qualification with: lakecompat qualify --resume out/q",
    ]


def recorded_points(tmp_path: Path) -> Path:
    """The folder of a qualification whose two points' runs are complete (as a qualification
    interrupted while it compared them leaves it), recorded as interrupted."""
    from lakecompat.harness.qualify.record import new_record
    from lakecompat.harness.run.options import RunOptions

    base, cand = pair(tmp_path)
    for run_dir in (base, cand):
        info = json.loads((run_dir / "run.json").read_text())
        (run_dir / "run.json").write_text(json.dumps({**info, "status": "complete"}))
    plan = parse_points(["old:hudi=0.15.0", "new:hudi=1.2.0"])
    options = RunOptions(
        scenarios_dir=ROOT / "scenarios",
        engines=("spark",),
        formats=("hudi",),
        reports_dir=tmp_path / "reports",
    )
    record = new_record(tmp_path / "q", plan, options)
    record.note_runs(["old", "new"], [base, cand])
    record.mark("interrupted")
    return record.folder


def test_resume_keeps_the_points_measured_and_compares_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def never(*_: object, **__: object) -> None:
        raise AssertionError("a point measured already was run again")

    monkeypatch.setattr("lakecompat.harness.qualify.run.Runner", never)
    monkeypatch.setattr("lakecompat.harness.qualify.run.resume", never)
    monkeypatch.setattr("lakecompat.harness.qualify.run.provision_points", lambda *_, **__: None)
    folder = recorded_points(tmp_path)
    assert main(["qualify", "--resume", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "run 1/2: old (hudi 0.15.0, measured already)" in out
    assert "1 newly failing, 1 newly passing" in out
    document = json.loads((folder / "qualify.json").read_text())
    assert (document["baseline"]["name"], document["candidate"]["name"]) == ("old", "new")
    assert json.loads((folder / "qualification.json").read_text())["status"] == "complete"


def test_resume_completes_an_interrupted_point_and_runs_one_never_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Which machinery each point gets (the engines themselves: the integration test)."""
    from lakecompat.harness.qualify.record import load_record
    from lakecompat.harness.qualify.run import run_points

    folder = recorded_points(tmp_path)
    record = load_record(folder)
    old_run = record.runs["old"]
    info = json.loads((old_run / "run.json").read_text())
    (old_run / "run.json").write_text(json.dumps({**info, "status": "interrupted"}))
    record.runs.pop("new")
    calls: list[tuple[str, object]] = []

    class Started:
        def __init__(
            self, options: object, progress: object, sharing: object, on_folders: object
        ) -> None:
            self.options, self.on_folders = options, on_folders

        def run_all(self) -> list[object]:
            calls.append(("run", self.options.releases.format("hudi")))
            self.on_folders([tmp_path / "fresh"])
            return [type("Result", (), {"run_dir": tmp_path / "fresh"})()]

    def resumed(options: object, progress: object) -> None:
        calls.append(("resume", options.resume_dir))

    def resume_options(run_dir: Path, scenarios: Path, reports: Path) -> object:
        assert reports == (tmp_path / "reports" / "points" / "old").resolve()
        return type("Options", (), {"resume_dir": run_dir})

    monkeypatch.setattr("lakecompat.harness.qualify.run.resume_options", resume_options)
    monkeypatch.setattr("lakecompat.harness.qualify.run.Runner", Started)
    monkeypatch.setattr("lakecompat.harness.qualify.run.resume", resumed)
    monkeypatch.setattr("lakecompat.harness.qualify.run.provision_points", lambda *_, **__: None)
    runs = run_points(record.plan, record.options, True, record)
    assert calls == [("resume", old_run), ("run", "1.2.0")]
    assert runs["old"].run_dir == old_run and runs["new"].run_dir == tmp_path / "fresh"
    assert load_record(folder).runs["new"] == tmp_path / "fresh"


def test_resume_needs_a_qualification_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["qualify", "--resume", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert f"{tmp_path}: no qualification.json here" in error
    assert main(["qualify", "--resume", str(tmp_path), "--versions", "v.yaml"]) == 2
    assert "exactly one of" in capsys.readouterr().err


class Fetched(Exception):
    """Something was fetched before every release was checked."""


@pytest.mark.parametrize(
    ("last", "engines", "said"),
    [
        ("hudi=9.9.9", "spark", "version point new: hudi 9.9.9: there is no Hudi release 9.9.9"),
        (
            "iceberg=9.9.9",
            "spark",
            "version point new: iceberg 9.9.9: there is no Iceberg release 9.9.9",
        ),
        ("trino=999", "spark,trino", "version point new: trino 999: there is no trino release 999"),
        (
            "daft=9.9.9",
            "spark,daft",
            "version point new: daft 9.9.9: pip has no daft release 9.9.9 for this Python",
        ),
    ],
)
def test_a_bad_release_in_the_last_point_stops_before_anything_is_fetched(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    last: str,
    engines: str,
    said: str,
) -> None:
    """The first point's 80 MB bundle was downloaded before the next point's release was
    found not to exist. Maven and pip are asked (seconds); nothing may be fetched."""

    def fetching(*_: object, **__: object) -> None:
        raise Fetched

    monkeypatch.setattr("lakecompat.harness.qualify.run.fetch", fetching)
    for name in ("spark", "trino", "daft"):
        monkeypatch.setattr(engine_class(name), "provision", classmethod(fetching))
    points = ["--point", "old:hudi=1.2.0", "--point", f"new:hudi=1.2.0,{last}"]
    reports = tmp_path / "reports"
    args = [*points, "--engines", engines, "--reports", str(reports), "--scenarios", "add_column/*"]
    assert main(["qualify", *args]) == 2
    error = capsys.readouterr().err.splitlines()[-1]
    assert error.startswith(f"lakecompat: error: {said}")
    assert not reports.exists()


def test_the_help_says_how_to_resume_and_what_a_versions_file_may_choose(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["qualify", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "lakecompat qualify --resume reports/qualify" in text
    assert "engines: [spark, presto]" in text and "--engines and --scenarios win" in text
    assert "one that does not exist stops the qualification in one line" in text


def test_a_formats_releases_in_one_map_stand_for_its_fields(tmp_path: Path) -> None:
    """`hudi: {release, table_version, hive}` sets `hudi`, `table_version` and `hive_hudi`, as
    the flat fields do; the point's releases are then those values."""
    from lakecompat.harness.qualify.run import point_options
    from lakecompat.harness.run.options import RunOptions

    path = tmp_path / "versions.yaml"
    path.write_text(
        "points:\n"
        "  - {name: flat, hudi: 1.2.0, table_version: 6, hive_hudi: 0.15.0}\n"
        "  - name: mapped\n"
        "    hudi: {release: 1.2.0, table_version: 6, hive: 0.15.0}\n"
        "    iceberg: {release: 1.12.0, format_version: 3}\n"
    )
    flat, mapped = load_versions(path).points
    assert mapped.releases() == {**flat.releases(), "iceberg": "1.12.0", "format_version": "3"}
    chosen = point_options(RunOptions(), mapped)
    assert chosen.versions == {"hudi": "6", "iceberg": "3"}
    assert chosen.releases.reads_with("hive", "hudi") == "0.15.0"
    assert chosen.releases.reads_with("spark", "hudi") == "1.2.0"
    assert chosen.releases.format("iceberg") == "1.12.0"


@pytest.mark.parametrize(
    ("point", "message"),
    [
        (
            "{name: a, hudi: {relase: 1.2.0}}",
            "points[0]: hudi.relase: not a release of Hudi; a hudi map gives release, "
            "table_version, hive, spark",
        ),
        (
            "{name: a, hudi: {hive: 0.15.0}, hive_hudi: 0.15.0}",
            "points[0]: hudi.hive and hive_hudi set the same release: give one of them",
        ),
    ],
)
def test_a_wrong_format_map_names_the_file_and_the_field(
    tmp_path: Path, point: str, message: str
) -> None:
    path = tmp_path / "versions.yaml"
    path.write_text(f"points:\n  - {point}\n  - {{name: b}}\n")
    with pytest.raises(VersionsError) as raised:
        load_versions(path)
    assert str(raised.value) == f"{path}: {message}"
