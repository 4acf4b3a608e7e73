"""The results store and the reports rendered from it alone."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from lakecompat.harness.report.render import REPORT_FILES, write_reports
from lakecompat.harness.results.outcomes import Cell, Evidence, Outcome, summary_line
from lakecompat.harness.results.store import (
    RESULTS_FILE,
    SCHEMA_VERSION,
    ResultsError,
    ResultsWriter,
    load_run,
    write_run_info,
)

INFO = {
    "run_id": "20250101-000000",
    "writer": {"spark": "3.5.9", "hudi": "0.15.0"},
    "engines": {"spark": "3.5.9"},
}
VERDICT_KEYS = {"expected", "verdict", "known"}
WRONG_SQL = "SELECT * FROM add_column_after_mor_ro"
WRONG_SAMPLE = [{"id": 1, "column": "color", "expected": None, "actual": "apple"}]


def cell(**overrides: Any) -> Cell:
    """A PASS cell of the add-column scenario with `overrides` applied."""
    fields: dict[str, Any] = {
        "scenario": "add_column/after",
        "category": "add_column",
        "title": "Add a column in the middle (AFTER)",
        "table_type": "cow",
        "query_type": "snapshot",
        "engine": "spark",
        "engine_version": "3.5.9",
        "variant": "default",
        "settings": {"spark.sql.parquet.enableVectorizedReader": "true"},
        "writer": {"spark": "3.5.9", "hudi": "0.15.0"},
        "outcome": Outcome.PASS,
        "evidence": Evidence(sql="SELECT * FROM t"),
        "seconds": 0.25,
    }
    return Cell(**{**fields, **overrides})


def wrong(**overrides: Any) -> Cell:
    evidence = Evidence(sql=WRONG_SQL, sample=WRONG_SAMPLE)
    return cell(
        outcome=Outcome.WRONG, reason="`name` read by position", evidence=evidence, **overrides
    )


CELLS = [
    cell(),
    cell(query_type="read_optimized"),
    cell(table_type="mor"),
    wrong(table_type="mor", query_type="read_optimized"),
    cell(variant="no-vectorized", settings={}),
    cell(scenario="baseline/no_change", category="baseline", title="No | change"),
]


def write_run(run_dir: Path, cells: list[Cell], info: dict[str, Any] | None = None) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    writer = ResultsWriter(run_dir)
    for one in cells:
        writer.append(one)
    writer.close()
    if info is not None:
        write_run_info(run_dir, info)
    return run_dir


def render(tmp_path: Path, cells: list[Cell] = CELLS) -> str:
    run_dir = write_run(tmp_path / "run", cells, INFO)
    write_reports(run_dir, [tmp_path / "out"])
    return (tmp_path / "out" / "matrix.md").read_text()


def test_writer_appends_one_line_per_cell(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path, CELLS[:2])
    write_run(tmp_path, CELLS[2:])  # a second writer appends, it does not truncate
    lines = (tmp_path / RESULTS_FILE).read_text().splitlines()
    assert [json.loads(line) for line in lines] == [c.to_dict() for c in CELLS]
    assert load_run(run_dir) == ({}, CELLS)


def test_load_run_reads_info_and_skips_blank_lines(tmp_path: Path) -> None:
    write_run(tmp_path, CELLS[:1], INFO)
    with (tmp_path / RESULTS_FILE).open("a") as results:
        results.write("\n")
    info, cells = load_run(tmp_path)
    assert info == INFO
    assert cells == CELLS[:1]
    assert cells[0].outcome is Outcome.PASS
    assert isinstance(cells[0].evidence, Evidence)


def test_cell_round_trips_through_dict() -> None:
    data = wrong().to_dict()
    assert type(data["outcome"]) is str
    assert Cell.from_dict(json.loads(json.dumps(data))) == wrong()


def test_cell_key_ignores_versions() -> None:
    assert cell().key == cell(engine_version="4.0.0", writer={}).key
    assert cell().key != cell(variant="other").key


def test_folder_without_results_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "not-a-run"
    folder.mkdir()
    with pytest.raises(ResultsError, match=rf"no {re.escape(RESULTS_FILE)} here") as caught:
        load_run(folder)
    assert str(folder) in str(caught.value)


def test_line_cut_short_is_named_with_its_number(tmp_path: Path) -> None:
    write_run(tmp_path, CELLS[:2])
    with (tmp_path / RESULTS_FILE).open("a") as results:
        results.write(json.dumps(cell().to_dict())[:40])
    with pytest.raises(ResultsError, match=rf"{RESULTS_FILE}:3: unreadable cell"):
        load_run(tmp_path)


def test_reports_are_rendered_from_results_alone(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "run", CELLS, INFO)
    outs = [tmp_path / "a", tmp_path / "b" / "nested"]
    write_reports(run_dir, outs)
    for out in outs:
        document = json.loads((out / "results.json").read_text())
        assert document["schema_version"] == SCHEMA_VERSION
        assert document["run"] == INFO
        cells = [{k: v for k, v in c.items() if k not in VERDICT_KEYS} for c in document["cells"]]
        assert cells == [c.to_dict() for c in CELLS]
        # no known outcomes recorded: every cell is expected to pass, the WRONG one regressed
        assert [c["verdict"] for c in document["cells"]].count("regression") == 1
        assert document["totals"]["outcomes"]["WRONG"] == 1
        assert (out / "matrix.md").read_text().startswith("# lakecompat compatibility matrix")
        assert sorted(p.name for p in out.iterdir()) == sorted(REPORT_FILES)


def test_rendering_twice_gives_identical_files(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "run", CELLS, INFO)
    write_reports(run_dir, [tmp_path / "first"])
    write_reports(run_dir, [tmp_path / "second"])
    for name in ("matrix.md", "results.json"):
        assert (tmp_path / "first" / name).read_bytes() == (tmp_path / "second" / name).read_bytes()


def test_matrix_header_names_run_and_versions(tmp_path: Path) -> None:
    matrix = render(tmp_path)
    assert "Run `20250101-000000` · writer: Spark 3.5.9 + Hudi 0.15.0 · spark 3.5.9" in matrix
    assert f"**{summary_line(CELLS)}**" in matrix
    assert all(f"- `{o.value}`: " in matrix for o in Outcome)


def test_the_headers_name_every_setting_and_each_unchecked_key(tmp_path: Path) -> None:
    info = {
        **INFO,
        "engine_settings": {
            "spark": {"hoodie.schema.on.read.enable": "true", "parquet.page.size": "1024"},
            "hudi-rs": {"hoodie.read.use.read_optimized.mode": "false"},
        },
        "unchecked_settings": {
            "spark": {"parquet.page.size": "Spark hands it on unchecked"},
            "hudi-rs": {"hoodie.read.use.read_optimized.mode": "hudi-rs's keys are not known"},
        },
    }
    write_reports(write_run(tmp_path / "run", CELLS, info), [tmp_path / "out"])
    spark = (
        "- Setting: spark read with `hoodie.schema.on.read.enable=true`, `parquet.page.size=1024`"
        " (`--set`, added to every variant); `parquet.page.size` was not checked before the "
        "run: Spark hands it on unchecked"
    )
    hudi_rs = (
        "- Setting: hudi-rs read with `hoodie.read.use.read_optimized.mode=false` (`--set`, "
        "added to every variant); `hoodie.read.use.read_optimized.mode` was not checked before "
        "the run: hudi-rs's keys are not known"
    )
    for report in ("summary.md", "matrix.md"):
        lines = (tmp_path / "out" / report).read_text().splitlines()
        # Right below the line that names the writer and the readers, before anything else.
        names = next(i for i, line in enumerate(lines) if line.startswith(("Writer ", "Run `")))
        assert lines[names + 1 : names + 3] == [hudi_rs, spark], report


def test_a_run_without_settings_says_none(tmp_path: Path) -> None:
    render(tmp_path)
    for report in ("summary.md", "matrix.md"):
        assert "Setting:" not in (tmp_path / "out" / report).read_text()


def test_matrix_has_one_section_per_engine_table_type_and_variant(tmp_path: Path) -> None:
    headings = [line for line in render(tmp_path).splitlines() if line.startswith("## spark")]
    assert headings == [
        "## spark 3.5.9 · copy-on-write · `default`",
        "## spark 3.5.9 · merge-on-read · `default`",
        "## spark 3.5.9 · copy-on-write · `no-vectorized`",
    ]


def test_matrix_has_query_types_as_columns_and_reasons(tmp_path: Path) -> None:
    matrix = render(tmp_path, list(reversed(CELLS)))
    # Query types come in their canonical order, whatever order the cells were written in.
    assert matrix.count("| operation | snapshot | read_optimized | reason |") == 2
    assert "| operation | snapshot | reason |" in matrix  # only the query types present
    assert (
        "| Add a column in the middle (AFTER) (`add_column/after`) | PASS | WRONG "
        "| read_optimized: `name` read by position |"
    ) in matrix
    assert "| No \\| change (`baseline/no_change`) | PASS |  |" in matrix


def test_reason_shared_by_every_query_type_is_given_once(tmp_path: Path) -> None:
    cells = [wrong(), wrong(query_type="read_optimized")]
    assert "| WRONG | WRONG | `name` read by position |" in render(tmp_path, cells)


def test_evidence_section_lists_non_pass_cells(tmp_path: Path) -> None:
    matrix = render(tmp_path)
    evidence = matrix.split("## Evidence for every read that is not PASS", 1)[1]
    assert "### spark · mor · read_optimized · `add_column/after` [default]" in evidence
    assert "**WRONG** (regression): `name` read by position" in evidence
    assert f"```sql\n{WRONG_SQL}\n```" in evidence
    assert json.dumps(WRONG_SAMPLE[0], sort_keys=True) in evidence
    assert evidence.count("### ") == 1


def test_evidence_includes_engine_log(tmp_path: Path) -> None:
    failed = cell(
        outcome=Outcome.ENGINE_FAILED,
        reason="could not start",
        evidence=Evidence(log="java.lang.OutOfMemoryError"),
    )
    assert "Engine log (last lines):\n\n```\njava.lang.OutOfMemoryError\n```" in render(
        tmp_path, [failed]
    )


def test_no_evidence_section_when_everything_passes(tmp_path: Path) -> None:
    assert "## Evidence" not in render(tmp_path, [cell()])


def test_write_reports_names_a_folder_without_results(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match=str(tmp_path)):
        write_reports(tmp_path, [tmp_path / "out"])
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("outcomes", "line"),
    [
        ([], "0 reads: 0 pass, 0 wrong, 0 error, 0 unsupported, 0 engine failed · 0 of 0 tables"),
        (
            [Outcome.PASS, Outcome.PASS, Outcome.WRONG, Outcome.ENGINE_FAILED, Outcome.REJECTED],
            "4 reads: 2 pass, 1 wrong, 0 error, 0 unsupported, 1 engine failed · 1 of 1 table",
        ),
        (
            list(Outcome),
            "5 reads: 1 pass, 1 wrong, 1 error, 1 unsupported, 1 engine failed · 1 of 1 table",
        ),
    ],
)
def test_summary_line_counts(outcomes: list[Outcome], line: str) -> None:
    refused = " refused by the writer"
    assert summary_line([cell(outcome=o) for o in outcomes]) == line + refused


def test_a_table_the_writer_refused_is_counted_once_not_once_per_reader_cell() -> None:
    """A refused table gives a REJECTED cell to every reader, query type, variant and shape:
    the totals count the table once, and the cells that read apart from it."""
    refused = [
        cell(
            scenario=f"type_change/r{n}", table_type=t, engine=e, shape=s, outcome=Outcome.REJECTED
        )
        for n in (1, 2)
        for t in ("cow", "mor")
        for e in ("spark", "hive", "trino")
        for s in ("all", "project", "filter")
    ]
    read = [cell(), cell(engine="hive", outcome=Outcome.WRONG), cell(table_type="mor")]
    assert summary_line(refused + read) == (
        "3 reads: 2 pass, 1 wrong, 0 error, 0 unsupported, 0 engine failed · "
        "4 of 6 tables refused by the writer"
    )
