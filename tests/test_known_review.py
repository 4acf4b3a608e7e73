"""Known outcomes checked against runs: stale and too-wide entries (known_review.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_results_report import INFO, cell, write_run

from lakecompat.harness.cli import main
from lakecompat.harness.results.expectations import load_expectations
from lakecompat.harness.results.known_review import failure_class, render, review
from lakecompat.harness.results.outcomes import Evidence, Outcome

FILE = """\
known:
- {engine: hive, scenario: a/one, outcome: ERROR, reason: one cause}
- {engine: hive, scenario: a/gone, outcome: ERROR, reason: fixed long ago}
- {engine: hive, scenario: b/two, outcome: ERROR, reason: two causes under one reason}
- {engine: spark, scenario: a/one, outcome: WRONG, reason: wrong by kind}
- {engine: trino, scenario: a/one, outcome: ERROR, reason: another point, versions: '<400'}
- {engine: hive, scenario: c/not_read, outcome: ERROR, reason: a scenario the run did not read}
"""


def error(message: str, **overrides: object) -> object:
    return cell(outcome=Outcome.ERROR, reason=message, **overrides)


def run_cells() -> list[object]:
    cast = "QueryError: java.lang.ClassCastException: class a.B cannot be cast to class c.D"
    return [
        # one cause, told with the table's own names: one way
        error(cast, engine="hive", scenario="a/one", variant="x"),
        error(cast.replace("a.B", "e.F"), engine="hive", scenario="a/one", variant="y"),
        # two causes in one scenario
        error(cast, engine="hive", scenario="b/two", variant="x"),
        error(
            "QueryError: org.apache.hudi.exception.HoodieException: Field extra not found",
            engine="hive",
            scenario="b/two",
            variant="y",
        ),
        # WRONG: the kinds, without columns and counts, the same
        cell(
            outcome=Outcome.WRONG,
            reason="wrong values in `qty` (3 of 4 rows)",
            engine="spark",
            scenario="a/one",
            variant="x",
        ),
        cell(
            outcome=Outcome.WRONG,
            reason="wrong values in `v` (1 of 3 rows)",
            engine="spark",
            scenario="a/one",
            variant="y",
        ),
        cell(engine="trino", engine_version="483", scenario="a/one"),
        # the failure is gone: the cell passes
        cell(engine="hive", scenario="a/gone"),
    ]


def test_failure_classes_leave_out_what_belongs_to_one_table() -> None:
    [one, other, _, hoodie, qty, v, _, _] = run_cells()
    assert failure_class(one) == failure_class(other) == "ERROR: java.lang.ClassCastException"
    assert failure_class(hoodie) == "ERROR: org.apache.hudi.exception.HoodieException"
    assert failure_class(qty) == failure_class(v) == "WRONG: wrong values in"
    trino = error("QueryError: NOT_SUPPORTED: Unsupported Trino column type (varchar)")
    assert failure_class(trino) == "ERROR: NOT_SUPPORTED"
    arrow = error("QueryError: ArrowInvalid: the record batches hudi-rs returned differ")
    assert failure_class(arrow) == "ERROR: ArrowInvalid"
    order = cell(outcome=Outcome.WRONG, reason="column order differs: got b, a; expected a, b")
    assert failure_class(order) == "WRONG: column order differs"
    # The wrappers differ with the path the query took; the cause they carry does not.
    fetched = error("QueryError: java.io.IOException: java.lang.ClassCastException: class a.B")
    compiled = error(
        "QueryError: Error while compiling statement: org.apache.hadoop.hive.ql.metadata."
        "HiveException: java.lang.ClassCastException: class a.C cannot be cast to class a.D"
    )
    cast = "ERROR: java.lang.ClassCastException"
    assert failure_class(fetched) == failure_class(compiled) == cast
    hive4 = error(
        "QueryError: Error while compiling statement: 'java.util.ArrayList org.apache.hadoop."
        "hive.serde2.typeinfo.StructTypeInfo.getAllStructFieldTypeInfos()'"
    )
    mapreduce = error("QueryError: java.lang.NoSuchMethodError: 'java.util.ArrayList a.B.c()'")
    assert failure_class(hive4) == failure_class(mapreduce) == "ERROR: java.lang.NoSuchMethodError"
    # Spark's wrapper of a failed file read names no cause; its evidence's chain does.
    nested = "java.lang.IllegalArgumentException: Nested types with type changes"
    inline = error(f"org.apache.spark.SparkException: Job aborted: Lost task 1.0: {nested}")
    wrapped = error(
        "org.apache.spark.SparkException: Job aborted: Lost task 0.0: org.apache.spark."
        "SparkException: Encountered error while reading file file:/t/a.parquet",
        evidence=Evidence(
            error="org.apache.spark.SparkException: Job aborted\n    at a.B.c(B.scala:1)\n"
            "Caused by: org.apache.spark.SparkException: Encountered error while reading file\n"
            f"Caused by: {nested}\n    at a.B.d(B.scala:2)"
        ),
    )
    assert failure_class(inline) == failure_class(wrapped) == "ERROR: " + nested.split(":")[0]
    assert failure_class(error("QueryError: java.lang.IllegalArgumentException: x")) != (
        failure_class(error("QueryError: java.io.IOException: java.lang.ClassCastException: y"))
    )


def test_an_engines_error_code_gives_way_to_the_exception_under_it() -> None:
    """Presto reports one cause under HUDI_CURSOR_ERROR, HIVE_CURSOR_ERROR or
    GENERIC_INTERNAL_ERROR by the path a query took: the root of its failure trace is the
    class; a code whose trace holds only Presto's own exception stays the class."""
    cast = "class org.apache.hadoop.io.IntWritable cannot be cast to class HiveDecimalWritable"
    trace = "com.facebook.presto.spi.PrestoException: {0}\n    at a.B.c(B.java:1)\n"
    cursor = error(
        f"PrestoQueryError: HUDI_CURSOR_ERROR: {cast}",
        evidence=Evidence(
            error=f"PrestoQueryError: HUDI_CURSOR_ERROR: {cast}\n"
            + trace.format(cast)
            + f"Caused by: java.lang.ClassCastException: {cast}"
        ),
    )
    internal = error(
        f"PrestoQueryError: GENERIC_INTERNAL_ERROR: {cast}",
        evidence=Evidence(
            error=f"PrestoQueryError: GENERIC_INTERNAL_ERROR: {cast}\n"
            f"java.lang.ClassCastException: {cast}\n    at a.B.c(B.java:1)"
        ),
    )
    assert failure_class(cursor) == failure_class(internal) == "ERROR: java.lang.ClassCastException"
    mismatch = "HIVE_PARTITION_SCHEMA_MISMATCH: The column v is declared as type string"
    own = error(
        f"PrestoQueryError: {mismatch}",
        evidence=Evidence(error=f"PrestoQueryError: {mismatch}\n" + trace.format("The column")),
    )
    assert failure_class(own) == "ERROR: HIVE_PARTITION_SCHEMA_MISMATCH"
    assert failure_class(error(f"PrestoQueryError: {mismatch}")) == (
        "ERROR: HIVE_PARTITION_SCHEMA_MISMATCH"
    )


def test_stale_and_too_wide_entries_are_found_and_named(tmp_path: Path) -> None:
    folder = tmp_path / "expectations"
    folder.mkdir()
    (folder / "known.yaml").write_text(FILE)
    known = load_expectations(folder)
    found = review(known, [run_cells()])
    assert [e.reason for e in found.stale] == ["fixed long ago"]
    assert [e.reason for e, _ in found.too_wide] == ["two causes under one reason"]
    # Trino 483 is outside `<400`, and the run read no c/not_read: not checked, not stale.
    assert [e.reason for e in found.unchecked] == [
        "another point",
        "a scenario the run did not read",
    ]
    text = render(found, folder)
    assert text.startswith("6 entries: 1 stale, 1 too wide, 2 not checked")
    assert "- known.yaml#known[1]: ERROR, fixed long ago" in text
    assert "1 cell(s): ERROR: org.apache.hudi.exception.HoodieException" in text
    assert "(e.g. hive.cow.snapshot.b/two[y])" in text


def test_the_command_exits_1_on_findings_and_0_without(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "expectations"
    folder.mkdir()
    (folder / "known.yaml").write_text(FILE)
    run_dir = write_run(tmp_path / "run", run_cells(), INFO)
    assert main(["known", str(run_dir), "--check", str(folder)]) == 1
    assert "1 stale, 1 too wide" in capsys.readouterr().out
    kept = [line for line in FILE.splitlines() if "gone" not in line and "b/two" not in line]
    (folder / "known.yaml").write_text("\n".join(kept) + "\n")
    assert main(["known", str(run_dir), "--check", str(folder)]) == 0
    assert capsys.readouterr().out.startswith("4 entries: 0 stale, 0 too wide, 2 not checked")
