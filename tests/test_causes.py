"""Whether a cell fails as its baseline does: the same failure, not only the same outcome, and
the baseline note a run adds to a failing cell's reason."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from test_results_report import cell

from lakecompat.engines.table import TableRef
from lakecompat.harness.results.causes import (
    failure_kind,
    own_reason,
    same_failure,
    unfounded_baseline_notes,
)
from lakecompat.harness.results.outcomes import BASELINE_NOTE, BASELINE_OTHER, Outcome
from lakecompat.harness.run.cells import Baselines, writer_verdict
from lakecompat.harness.writer.base import WriteResult

DELETE_FILES = (
    "UnsupportedOperationException: Delete files are currently not supported in changelog scans"
)
RANGE = (
    "IllegalArgumentException: Starting snapshot (exclusive) 5813 is not a parent ancestor "
    "of end snapshot 5813"
)


def failing(reason: str, outcome: Outcome = Outcome.ERROR, **more: object):
    return cell(outcome=outcome, reason=reason, **more)


def test_errors_of_two_tables_are_the_same_failure_without_their_names_and_numbers() -> None:
    one = failing(
        "HoodieException: cannot read /tmp/a/t_add_column_after_cow/f1-0_20250101.parquet"
    )
    two = failing(
        "HoodieException: cannot read /tmp/b/t_baseline_no_change_cow/x-9_20250102.parquet"
    )
    assert failure_kind(one) == failure_kind(two) == "ERROR: HoodieException: cannot read <path>"
    assert same_failure(one, two)


def test_the_same_outcome_with_another_error_is_not_the_same_failure() -> None:
    assert not same_failure(failing(RANGE), failing(DELETE_FILES))


def test_wrong_answers_are_the_same_failure_on_the_same_columns_only() -> None:
    nulls = "NULLs where values were expected in `ts` (3 of 6 rows)"
    assert same_failure(
        failing(nulls, Outcome.WRONG), failing(nulls.replace("3", "2"), Outcome.WRONG)
    )
    other = "NULLs where values were expected in `name` (3 of 6 rows)"
    assert not same_failure(failing(nulls, Outcome.WRONG), failing(other, Outcome.WRONG))
    more = f"{nulls}; rows missing: 1 of 6"
    assert not same_failure(failing(more, Outcome.WRONG), failing(nulls, Outcome.WRONG))


def test_cells_that_do_not_fail_have_no_failure() -> None:
    assert failure_kind(cell()) is None
    assert not same_failure(cell(), cell())
    assert not same_failure(failing(RANGE), None)


def test_a_reason_without_its_baseline_note_is_its_own() -> None:
    assert own_reason(f"{RANGE}; {BASELINE_NOTE} (baseline: ERROR)") == RANGE
    assert own_reason(f"{RANGE}; {BASELINE_OTHER} (baseline: ERROR: {DELETE_FILES})") == RANGE


def scenario(baseline: bool) -> SimpleNamespace:
    return SimpleNamespace(spec=SimpleNamespace(baseline=baseline))


def test_the_run_notes_a_shared_failure_and_names_another_one() -> None:
    """The note says "fails without any schema change" only where the baseline fails the same
    way; where it fails otherwise, the cell says its own cause first, then the baseline's."""
    baselines = Baselines()
    base = failing(DELETE_FILES, scenario="baseline/no_change", category="baseline")
    baselines.note(scenario(True), base)
    same = baselines.note(scenario(False), failing(DELETE_FILES))
    assert same.reason == f"{DELETE_FILES}; {BASELINE_NOTE} (baseline/no_change: ERROR)"
    other = baselines.note(scenario(False), failing(RANGE))
    assert other.reason == (
        f"{RANGE}; {BASELINE_OTHER} (baseline/no_change: ERROR: {DELETE_FILES})"
    )
    passing = baselines.note(scenario(False), cell())
    assert passing.reason == ""


def test_a_resumed_run_knows_the_baseline_cells_it_has() -> None:
    base = failing(DELETE_FILES, scenario="baseline/no_change", category="baseline")
    resumed = Baselines([base])
    noted = resumed.note(scenario(False), failing(DELETE_FILES))
    assert BASELINE_NOTE in noted.reason


def test_a_failure_shared_with_any_baseline_table_names_that_one() -> None:
    """Several baseline tables carry the column shapes of the catalog: a cell fails without any
    schema change when one of them fails the same way; that some other baseline fails
    otherwise, where another reads right, is no news about the cell."""
    nested = "NULLs where values were expected in `items` (1 of 4 rows)"
    baselines = Baselines()
    plain = cell(scenario="baseline/no_change", category="baseline")
    shapes = failing(nested, Outcome.WRONG, scenario="baseline/nested", category="baseline")
    for base in (plain, shapes):
        baselines.note(scenario(True), base)
    noted = baselines.note(scenario(False), failing(nested, Outcome.WRONG))
    assert noted.reason == f"{nested}; {BASELINE_NOTE} (baseline/nested: WRONG)"
    own = baselines.note(scenario(False), failing(RANGE))
    assert own.reason == RANGE


def test_a_note_that_the_named_baseline_does_not_bear_out_is_found() -> None:
    """Over a whole results file: every cell said to fail without any schema change fails as
    the baseline cell it names does."""
    nested = "NULLs where values were expected in `items` (1 of 4 rows)"
    base = failing(nested, Outcome.WRONG, scenario="baseline/arrays", category="baseline")
    held = failing(f"{nested}; {BASELINE_NOTE} (baseline/arrays: WRONG)", Outcome.WRONG)
    assert unfounded_baseline_notes([base, held]) == []
    other = failing(f"{RANGE}; {BASELINE_NOTE} (baseline/arrays: WRONG)", scenario="add/x")
    gone = failing(f"{nested}; {BASELINE_NOTE} (baseline/maps: WRONG)", scenario="add/y")
    found = unfounded_baseline_notes([base, held, other, gone])
    assert len(found) == 2
    assert (
        "ERROR: IllegalArgumentException" in found[0] and "but baseline/arrays: WRONG" in found[0]
    )
    assert "names baseline/maps, which has no such cell" in found[1]


def test_a_refusal_gives_the_same_reason_in_every_run() -> None:
    """Spark's Iceberg catalog is named after the run's folder; the writer's refusal names it.
    The reason says `lakecompat` instead, so two runs give the same reason; the evidence keeps
    the message as it was."""
    refusal = (
        "AnalysisException: [NOT_SUPPORTED_CHANGE_COLUMN] ALTER TABLE ALTER/CHANGE COLUMN is not "
        "supported for changing `{}`.`tables`.`t_type_change_boolean_to_int_cow`'s column `v`"
    )
    reasons = set()
    for catalog in ("lakecompat_1915bc723d11", "lakecompat_36dd696c6a71"):
        table = TableRef("t_type_change_boolean_to_int_cow", Path("/t"), "cow", "id", "iceberg")
        written = WriteResult(table, "steps[0] (change_type)", refusal.format(catalog), True)
        judged = writer_verdict(cell(format="iceberg"), written)
        assert judged.outcome is Outcome.REJECTED
        assert catalog in (judged.evidence.error or "")
        reasons.add(judged.reason)
    assert reasons == {"the writer refused steps[0] (change_type): " + refusal.format("lakecompat")}
