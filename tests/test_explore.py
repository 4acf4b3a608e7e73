"""Exploration without engines: the generator is valid and deterministic, and failures are
grouped by engine, outcome and reason class."""

from __future__ import annotations

import contextlib
from random import Random

import pytest
from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.errors import NoSuchExample
from support import made_cell

from lakecompat.harness.explore.generate import OPS, sequences
from lakecompat.harness.explore.lab import reason_class, signatures
from lakecompat.harness.results.outcomes import Cell, Outcome
from lakecompat.harness.scenario.model import ScenarioSpec
from lakecompat.harness.scenario.oracle import evolve


def _generated(seed: int, count: int) -> list[dict[str, object]]:
    seen: list[dict[str, object]] = []

    def keep(spec: dict[str, object]) -> bool:
        seen.append(spec)
        return False

    options = settings(
        database=None,
        max_examples=count,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate],
    )
    with contextlib.suppress(NoSuchExample):  # `keep` never accepts: every draw is seen
        find(sequences(), keep, settings=options, random=Random(seed))
    return seen


def test_every_generated_sequence_is_a_valid_scenario() -> None:
    specs = _generated(3, 150)
    assert len(specs) == 150
    ops = set()
    for spec in specs:
        model = ScenarioSpec.model_validate(spec)
        evolve(model)  # the oracle can follow every step
        ops |= {step.op for step in model.steps}
    assert ops == set(OPS)  # every kind of step gets drawn


def test_the_same_seed_generates_the_same_sequences() -> None:
    assert _generated(11, 40) == _generated(11, 40)
    assert _generated(11, 40) != _generated(12, 40)


def _cell(engine: str, outcome: Outcome, reason: str) -> Cell:
    return made_cell(
        scenario="explore/e1", category="explore", engine=engine, outcome=outcome, reason=reason
    )


#: Errors as engines word them, each on two tables (or two files) of one failure: the reason
#: class must be the same for both, and differ between failures.
SAME_FAILURE_ON_TWO_TABLES = [
    (
        "SparkException: Job aborted due to stage failure: Task 0 in stage 31.0 failed 1 times, "
        "most recent failure: Lost task 0.0 in stage 31.0 (TID 57) (127.0.0.1 executor driver): "
        "org.apache.spark.sql.execution.QueryExecutionException: Parquet column cannot be "
        "converted in file file:///tmp/lakecompat/runs/20261201-202619/tables/hudi/"
        "t_explore_e3_cow/8a1f6c1e-54f1-4a8e-9b0c-2f3e4d5a6b7c-0_0-12-34_20261201203015123"
        ".parquet. Column: [c2], Expected: int, Found: BINARY",
        "SparkException: Job aborted due to stage failure: Task 1 in stage 88.0 failed 1 times, "
        "most recent failure: Lost task 1.0 in stage 88.0 (TID 212) (127.0.0.1 executor driver): "
        "org.apache.spark.sql.execution.QueryExecutionException: Parquet column cannot be "
        "converted in file file:///tmp/lakecompat/runs/20261201-211502/tables/hudi/"
        "t_explore_e17_mor/partition=b/f03bc9d2-77aa-4e01-b2c3-d4e5f6a7b8c9-1_1-40-81_"
        "20261201211733450.parquet. Column: [c5], Expected: int, Found: BINARY",
    ),
    (
        "QueryError: java.io.IOException: org.apache.parquet.io.ParquetDecodingException: Can not "
        "read value at 0 in block -1 in file file:/tmp/lakecompat/runs/x/tables/t_explore_e7_mor/"
        "a3b9d2e1-0000-4c1d-9f0e-1a2b3c4d5e6f-0_1-22-33_20261201203015123.parquet",
        "QueryError: java.io.IOException: org.apache.parquet.io.ParquetDecodingException: Can not "
        "read value at 0 in block -1 in file file:/tmp/lakecompat/runs/y/tables/t_explore_e9_cow/"
        "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9-0_0-5-6_20261201204511002.parquet",
    ),
    (
        'QueryError: HUDI_BAD_DATA: Malformed Parquet file. Corrupted statistics for column "c1" '
        'in Parquet file "file:/tmp/runs/a/tables/t_explore_e2_cow/5d2e9a10-1b2c-4d3e-8f9a-'
        '0b1c2d3e4f5a-0_0-1-2_20261201101010101.parquet": [min: 1, max: 5, num_nulls: 0] '
        "(query 20261201_203015_00012_x7yqz)",
        'QueryError: HUDI_BAD_DATA: Malformed Parquet file. Corrupted statistics for column "c4" '
        'in Parquet file "file:/tmp/runs/b/tables/t_explore_e5_mor/9e8d7c6b-5a49-4382-9170-'
        'fedcba987654-0_2-9-9_20261201121212121.parquet": [min: 20, max: 90, num_nulls: 1] '
        "(query 20261201_213344_00107_qk2mv)",
    ),
    (
        "ArrowError: Failed to decode parquet column c3 of .6f1e2d3c-4b5a-4968-8776-5f4e3d2c1b0a-"
        "0_20261201203015123.log.1_0-12-34: failed to fill whole buffer",
        "ArrowError: Failed to decode parquet column c8 of .1a2b3c4d-5e6f-4a8b-9c0d-1e2f3a4b5c6d-"
        "0_20261202081500999.log.2_1-3-5: failed to fill whole buffer",
    ),
    (
        "ValueError: cannot read 00000-0-3c6f2b1a-9d8e-4f7a-b6c5-d4e3f2a1b0c9-00001.parquet "
        "written at 2026-12-01 20:30:15.123 (snapshot 3051729675574597004)",
        "ValueError: cannot read 00003-7-aa01bb02-cc03-4d04-8e05-f0607a8b9c0d-00002.parquet "
        "written at 2026-12-02T08:15:00Z (snapshot 8846259710093451120)",
    ),
]


@pytest.mark.parametrize(("one", "other"), SAME_FAILURE_ON_TWO_TABLES)
def test_one_failure_on_two_tables_or_files_is_one_signature(one: str, other: str) -> None:
    assert reason_class(one) == reason_class(other)
    for part in ("t_explore", "/tmp/", "2026", "-0_", ".log."):
        assert part not in reason_class(one), reason_class(one)
    others = {reason_class(a) for a, _ in SAME_FAILURE_ON_TWO_TABLES if a != one}
    assert reason_class(one) not in others
    assert (
        len(signatures([_cell("hive", Outcome.ERROR, one), _cell("hive", Outcome.ERROR, other)]))
        == 1
    )


def test_what_tells_failures_apart_stays_in_the_signature() -> None:
    spark = SAME_FAILURE_ON_TWO_TABLES[0][0]
    assert reason_class(spark) != reason_class(spark.replace("Expected: int", "Expected: bigint"))
    assert "Expected: int, Found: BINARY" in reason_class(spark)


def test_failures_are_grouped_by_engine_outcome_and_reason_class() -> None:
    assert reason_class("NULLs where values were expected in `r4` (3 of 3 rows)") == (
        "NULLs where values were expected in `?` (N of N rows)"
    )
    assert reason_class("QueryError: Cannot cast 'c2' to INT32 at col c3") == (
        "QueryError: Cannot cast '?' to INTN at col ?"
    )
    assert reason_class(
        "NULLs where values were expected in `r5` (1 of 1 rows); "
        "NULLs where values were expected in `r6` (1 of 1 rows)"
    ) == reason_class("NULLs where values were expected in `name` (3 of 3 rows)")
    assert reason_class("column order differs: got id, c2, c1, ts; expected id, c1, c2, ts") == (
        reason_class("column order differs: got id, qty, name; expected id, name, qty")
    )
    cells = [
        _cell("trino", Outcome.WRONG, "NULLs where values were expected in `r4` (1 of 1 rows)"),
        _cell("trino", Outcome.WRONG, "NULLs where values were expected in `r7` (2 of 3 rows)"),
        _cell("hive", Outcome.WRONG, "NULLs where values were expected in `r4` (1 of 1 rows)"),
        _cell("hive", Outcome.ERROR, "the writer failed at steps[0] (upsert): boom 1"),
        _cell("spark", Outcome.ERROR, "the table does not hold what explore/e1 is about: x"),
        _cell("spark", Outcome.PASS, ""),
        _cell("daft", Outcome.REJECTED, "the writer refused steps[0]"),
    ]
    found = signatures(cells)
    assert set(found) == {
        ("trino", "WRONG", "NULLs where values were expected in `?` (N of N rows)"),
        ("hive", "WRONG", "NULLs where values were expected in `?` (N of N rows)"),
        ("writer", "ERROR", "the writer failed at steps[N] (upsert): boom N"),
    }
