"""Version points of Iceberg tables: the Iceberg release and format version a point sets, the
formats a plan qualifies, and known outcomes scoped to the Iceberg writer (no engine runs)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_results_report import cell

from lakecompat.engines.infra.artifacts import ProvisioningError
from lakecompat.engines.infra.iceberg_jars import ICEBERG_VERSION_ENV, check_format_version
from lakecompat.engines.library.pyiceberg import PyIcebergEngine
from lakecompat.harness.cli import main
from lakecompat.harness.qualify.compare import Point
from lakecompat.harness.qualify.run import point_options, share_groups
from lakecompat.harness.qualify.versions import VersionsError, load_versions, parse_points
from lakecompat.harness.results.expectations import Known
from lakecompat.harness.results.known_draft import draft_known_across, draft_on_top
from lakecompat.harness.results.outcomes import Outcome
from lakecompat.harness.run.options import RunOptions

VERSIONS = Path(__file__).parent.parent / "versions"
V2 = {"spark": "3.5.9", "iceberg": "1.10.0", "format_version": "2"}
V3 = {**V2, "format_version": "3"}


@pytest.mark.parametrize(
    ("points", "formats"),
    [
        (["a:iceberg=1.10.0", "b:iceberg=1.12.0"], ("iceberg",)),
        (["a:format_version=2", "b:format_version=3,trino=483"], ("iceberg",)),
        (["a:pyiceberg=0.11.0", "b:"], ("iceberg",)),  # a reader of Iceberg tables alone
        (["a:hudi=1.1.1", "b:hudi=1.2.0"], ("hudi",)),
        (["a:hive=3.1.3", "b:hive=4.0.1"], ("hudi",)),
        (["a:trino=476", "b:"], ("hudi",)),  # Trino reads both: Hudi's, as before
        (["a:hudi=1.2.0", "b:iceberg=1.12.0"], ("hudi", "iceberg")),
    ],
)
def test_a_plan_qualifies_the_formats_its_fields_concern(
    points: list[str], formats: tuple[str, ...]
) -> None:
    assert parse_points(points).formats() == formats


def test_the_project_iceberg_versions_files_set_iceberg_fields() -> None:
    format_plan = load_versions(VERSIONS / "iceberg-format-2-to-3.yaml")
    assert format_plan.candidate_point().format_version == "3"  # a YAML number, read as text
    assert format_plan.formats() == ("iceberg",)
    release_plan = load_versions(VERSIONS / "iceberg-1.10-to-1.12.yaml")
    assert release_plan.candidate_point().iceberg == "1.12.0"


def test_a_point_sets_the_iceberg_release_and_the_readers_releases_as_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(ICEBERG_VERSION_ENV, raising=False)
    monkeypatch.delenv(PyIcebergEngine.release_env, raising=False)
    point = parse_points(["a:", "b:iceberg=1.12.0,pyiceberg=0.11.0"]).candidate_point()
    releases = point_options(RunOptions(), point).releases
    assert releases.format("iceberg") == "1.12.0"
    assert releases.engine("pyiceberg", PyIcebergEngine.default_release) == "0.11.0"
    assert PyIcebergEngine.package_list("0.11.0")[0] == "pyiceberg==0.11.0"
    # Nothing is put in the environment: the value goes to the engines.
    assert ICEBERG_VERSION_ENV not in os.environ
    assert PyIcebergEngine.release_env not in os.environ
    assert RunOptions().releases.format("iceberg") == "1.10.0"


def test_points_of_another_iceberg_writer_do_not_share_a_run() -> None:
    plan = parse_points(
        ["v2:format_version=2", "v3:format_version=3", "new:iceberg=1.12.0", "same:iceberg=1.10.0"]
    )
    options = RunOptions(formats=("iceberg",))
    groups = share_groups(plan, options)
    assert [[p.name for p in group] for group in groups] == [["v2", "same"], ["v3"], ["new"]]
    assert point_options(options, plan.points[1]).version("iceberg") == "3"
    assert point_options(options, plan.points[0]).reports_dir == Path("reports/points/v2")


def test_only_format_versions_2_and_3_are_written() -> None:
    check_format_version("1.10.0", "3", "format_version 3")  # no error
    with pytest.raises(ProvisioningError, match=r"^--format-version 1: the Iceberg writer"):
        check_format_version("1.10.0", "1", "--format-version 1")


def test_a_bad_format_version_is_refused_before_anything_starts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = main(["run", "--formats", "iceberg", "--format-version", "4", "--quiet"])
    assert status == 2
    assert "--format-version 4: the Iceberg writer creates tables in format version 2 or 3" in (
        capsys.readouterr().err
    )


def test_known_outcomes_match_on_the_iceberg_writer() -> None:
    entry = Known(
        engine="daft",
        format="iceberg",
        scenario="*",
        format_version=">=3",
        outcome=Outcome.ERROR,
        reason="Daft reads a deletion vector's Puffin file as Parquet",
    )
    assert entry.matches(cell(engine="daft", format="iceberg", writer=V3))
    assert not entry.matches(cell(engine="daft", format="iceberg", writer=V2))
    newer = Known.model_validate(
        {**entry.model_dump(), "releases": {"iceberg": {"release": ">=1.12"}}}
    )
    assert not newer.matches(cell(engine="daft", format="iceberg", writer=V3))
    assert newer.matches(cell(engine="daft", format="iceberg", writer={**V3, "iceberg": "1.12.0"}))


def test_entries_drafted_across_format_versions_are_scoped_to_theirs() -> None:
    def run(writer: dict[str, str], daft: Outcome) -> list:
        return [
            cell(engine="spark", format="iceberg", writer=writer),
            cell(engine="daft", format="iceberg", writer=writer, outcome=daft, reason="x"),
            cell(engine="polars", format="iceberg", writer=writer, outcome=Outcome.WRONG),
        ]

    entries = draft_known_across([run(V2, Outcome.PASS), run(V3, Outcome.ERROR)])
    daft = [e for e in entries if e.engine == "daft"]
    assert [(e.outcome, e.bound("format_version"), e.bound("iceberg")) for e in daft] == [
        (Outcome.ERROR, "==3", "")
    ]
    polars = [e for e in entries if e.engine == "polars"]
    assert [(e.outcome, e.bound("format_version")) for e in polars] == [(Outcome.WRONG, "")]
    # On top of reviewed entries, a run's additions name its Iceberg writer.
    (added,) = draft_on_top(run(V3, Outcome.ERROR), [*polars])
    assert (added.engine, added.bound("iceberg"), added.bound("format_version")) == (
        "daft",
        "==1.10.0",
        "==3",
    )


def test_a_point_names_each_formats_writer() -> None:
    info = {"writer": {"hudi": "1.2.0"}, "writers": {"hudi": {"hudi": "1.2.0"}, "iceberg": V3}}
    label = Point.of_run("p", info, []).label()
    assert "hudi writer hudi 1.2.0" in label
    assert "iceberg writer format_version 3" in label
    assert Point.of_run("p", {"writer": {"hudi": "1.2.0"}}, []).label() == "p (writer hudi 1.2.0)"


def test_a_format_version_the_writer_cannot_write_is_refused_with_file_and_field(
    tmp_path: Path,
) -> None:
    path = tmp_path / "versions.yaml"
    path.write_text("points:\n  - {name: a}\n  - {name: b, format_version: 1}\n")
    with pytest.raises(VersionsError) as raised:
        load_versions(path)
    assert str(raised.value) == (
        f"{path}: points[1].format_version: '1' is not a format version the Iceberg writer "
        "writes (2 or 3)"
    )
