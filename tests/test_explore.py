"""Exploration without engines: the generator is valid and deterministic, and failures are
grouped by engine, outcome and reason class."""

from __future__ import annotations

import contextlib
from random import Random

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.errors import NoSuchExample
from support import made_cell

from harness.explore.generate import OPS, sequences
from harness.explore.lab import reason_class, signatures
from harness.results.outcomes import Cell, Outcome
from harness.scenario.model import ScenarioSpec
from harness.scenario.oracle import evolve


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
