"""HiveServer2 errors: a failed MapReduce job gets its cause from the server log."""

from __future__ import annotations

from pathlib import Path

from engines.hive.failures import with_job_cause

FAILED = "Error while compiling statement: FAILED: Execution Error, return code 2 from MapRedTask"


def test_a_failed_job_names_the_innermost_cause_the_query_logged(tmp_path: Path) -> None:
    log = tmp_path / "hiveserver2.log"
    log.write_text("Caused by: java.lang.Error: an earlier query\n")
    start = log.stat().st_size
    with log.open("a") as handle:
        handle.write("ERROR Task: Failed with exception\n")
        handle.write("Caused by: java.lang.RuntimeException: wrapped\n")
        handle.write("Caused by: java.lang.UnsupportedOperationException: Cannot inspect X\n")
    assert with_job_cause(FAILED, log, start) == (
        f"{FAILED}; the MapReduce job failed with "
        "java.lang.UnsupportedOperationException: Cannot inspect X"
    )


def test_other_errors_and_a_silent_log_keep_the_message(tmp_path: Path) -> None:
    log = tmp_path / "hiveserver2.log"
    log.write_text("Caused by: java.lang.Error: an earlier query\n")
    assert with_job_cause("SemanticException: no such table", log, 0) == (
        "SemanticException: no such table"
    )
    assert with_job_cause(FAILED, log, log.stat().st_size) == FAILED
    assert with_job_cause(FAILED, tmp_path / "missing.log", 0) == FAILED


BARE = "Error while compiling statement: java.io.IOException: java.lang.IllegalArgumentException"
LAYOUT = "org.apache.hudi.common.table.timeline.versioning.TimelineLayoutVersion"
TRACE = "\n".join(
    [
        "java.io.IOException: java.lang.IllegalArgumentException",
        "\tat org.apache.hadoop.hive.ql.exec.FetchOperator.getNextRow(FetchOperator.java:628)",
        "Caused by: java.lang.IllegalArgumentException",
        "\tat org.apache.hudi.common.util.ValidationUtils.checkArgument(ValidationUtils.java:33)",
        f"\tat {LAYOUT}.<init>(TimelineLayoutVersion.java:40)",
        "\tat org.apache.hudi.common.table.HoodieTableConfig.getTimelineLayoutVersion(X.java:5)",
    ]
)


def test_an_exception_without_a_message_names_the_hudi_frame_that_threw_it(
    tmp_path: Path,
) -> None:
    log = tmp_path / "hiveserver2.log"
    log.write_text(TRACE)
    assert with_job_cause(BARE, log, 0) == (
        f"{BARE} (no message) at {LAYOUT}.<init>(TimelineLayoutVersion.java:40)"
    )
    # Only what the query wrote counts; without its trace the message stays as it is.
    assert with_job_cause(BARE, log, log.stat().st_size) == BARE
    job = f"{FAILED}. java.lang.IllegalArgumentException"
    assert with_job_cause(job, log, 0).endswith("TimelineLayoutVersion.java:40)")


def test_an_error_hive_3_sends_while_rows_are_fetched_is_hive_s_own_message() -> None:
    """Hive 3 reads a fetch task's rows when the client fetches them: the error then comes
    from `fetchall`, as PyHive's OperationalError around HiveServer2's status."""
    import pytest
    from pyhive.exc import OperationalError
    from TCLIService.ttypes import TStatus

    from engines.errors import QueryError
    from engines.hive.reader import _answered

    status = TStatus(
        statusCode=3,
        errorMessage="java.io.IOException: java.lang.UnsupportedOperationException: Cannot "
        "inspect org.apache.hadoop.io.NullWritable",
        infoMessages=[
            "*java.io.IOException:java.lang.UnsupportedOperationException: Cannot inspect "
            "org.apache.hadoop.io.NullWritable:14:13",
            "org.apache.hive.service.cli.operation.SQLOperation:getNextRowSet:SQLOperation.java:465",
        ],
    )

    class Response:
        def __init__(self) -> None:
            self.status = status

    def fetch() -> list[tuple[int]]:
        raise OperationalError(Response())

    with pytest.raises(QueryError) as raised:
        _answered(fetch)
    assert str(raised.value).endswith("Cannot inspect org.apache.hadoop.io.NullWritable")
    assert "SQLOperation.getNextRowSet(SQLOperation.java:465)" in raised.value.trace
    assert _answered(lambda: [(1,)]) == [(1,)]
