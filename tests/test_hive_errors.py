"""HiveServer2 errors: a failed MapReduce job gets its cause from the server log."""

from __future__ import annotations

from pathlib import Path

from engines.hive import _with_job_cause

FAILED = "Error while compiling statement: FAILED: Execution Error, return code 2 from MapRedTask"


def test_a_failed_job_names_the_innermost_cause_the_query_logged(tmp_path: Path) -> None:
    log = tmp_path / "hiveserver2.log"
    log.write_text("Caused by: java.lang.Error: an earlier query\n")
    start = log.stat().st_size
    with log.open("a") as handle:
        handle.write("ERROR Task: Failed with exception\n")
        handle.write("Caused by: java.lang.RuntimeException: wrapped\n")
        handle.write("Caused by: java.lang.UnsupportedOperationException: Cannot inspect X\n")
    assert _with_job_cause(FAILED, log, start) == (
        f"{FAILED}; the MapReduce job failed with "
        "java.lang.UnsupportedOperationException: Cannot inspect X"
    )


def test_other_errors_and_a_silent_log_keep_the_message(tmp_path: Path) -> None:
    log = tmp_path / "hiveserver2.log"
    log.write_text("Caused by: java.lang.Error: an earlier query\n")
    assert _with_job_cause("SemanticException: no such table", log, 0) == (
        "SemanticException: no such table"
    )
    assert _with_job_cause(FAILED, log, log.stat().st_size) == FAILED
    assert _with_job_cause(FAILED, tmp_path / "missing.log", 0) == FAILED
