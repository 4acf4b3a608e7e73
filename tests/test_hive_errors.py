"""HiveServer2 errors: a failed MapReduce job gets its cause from the server log; a failed read
is told by the innermost causes of its file groups, the same whichever failed first."""

from __future__ import annotations

from pathlib import Path

from lakecompat.engines.hive.failures import (
    causes_line,
    file_groups,
    in_file_group,
    in_rows,
    read_failure,
    root_cause,
    with_job_cause,
)

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

    from lakecompat.engines.errors import QueryError
    from lakecompat.engines.hive.reader import _answered

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


CAST = (
    "java.lang.ClassCastException: class org.apache.hadoop.io.LongWritable cannot be cast to "
    "class org.apache.hadoop.hive.serde2.io.TimestampWritableV2"
)
MODULES = (
    " (org.apache.hadoop.io.LongWritable and org.apache.hadoop.hive.serde2.io."
    "TimestampWritableV2 are in unnamed module of loader lakecompat.hive3.ClasspathLoader "
    "@682a0b20)"
)
WRAPPED = f"java.io.IOException: org.apache.hadoop.hive.ql.metadata.HiveException: {CAST}{MODULES}"
NULLS = "java.lang.UnsupportedOperationException: Cannot inspect org.apache.hadoop.io.NullWritable"


def test_a_read_failure_is_named_by_its_innermost_exception_without_the_jvm_s_modules() -> None:
    trace = "\n".join(
        [
            f"org.apache.hive.service.cli.HiveSQLException: {WRAPPED}",
            "\tat org.apache.hive.service.cli.operation.SQLOperation.getNextRowSet(X.java:465)",
            f"Caused by: {WRAPPED}",
            f"Caused by: org.apache.hadoop.hive.ql.metadata.HiveException: {CAST}{MODULES}",
            f"Caused by: {CAST}{MODULES}",
            "\tat org.apache.hadoop.hive.serde2.objectinspector.X.get(X.java:38)",
        ]
    )
    assert root_cause(WRAPPED, trace) == CAST
    # The same cause thrown one layer deeper reads the same; without a trace, the message's
    # innermost exception.
    assert root_cause(f"java.io.IOException: {CAST}{MODULES}", "") == CAST
    assert root_cause(f"java.io.IOException: java.io.IOException: {NULLS}", "") == NULLS
    assert root_cause(f"{FAILED}; the MapReduce job failed with {CAST}{MODULES}", "") == CAST
    # An exception without a message is named by the Hudi frame that threw it.
    assert root_cause(BARE, TRACE) == (
        f"java.lang.IllegalArgumentException (no message) at {LAYOUT}.<init>"
        "(TimelineLayoutVersion.java:40)"
    )


def test_only_failed_reads_of_files_are_explained_by_their_file_groups() -> None:
    assert read_failure(WRAPPED)
    assert read_failure(f"{FAILED}; the MapReduce job failed with {CAST}")
    assert not read_failure("Error while compiling statement: FAILED: SemanticException x")
    assert not read_failure(
        "Error while processing statement: 'SET hive.fetch.task.conversion=bogus' FAILED in "
        "validation"
    )


def test_the_file_groups_of_a_table_are_those_its_data_files_name(tmp_path: Path) -> None:
    table = tmp_path / "t"
    (table / ".hoodie" / "metadata" / "files").mkdir(parents=True)
    (table / ".hoodie" / "metadata" / "files" / "files-0000-0_0-1-1_00000000000000.hfile").touch()
    (table / "region=eu").mkdir()
    names = {
        table / "b2a1-0_0-13-13_20261201214346391.parquet",
        table / "b2a1-0_0-41-62_20261201214429406.parquet",  # a newer slice of the same group
        table / ".a9-1_20261201214429406.log.1_0-70-99",  # a log file (merge-on-read)
        table / "region=eu" / "c3-0_1-13-14_20261201214346391.parquet",
        table / ".hoodie_partition_metadata",
        table / "region=eu" / ".hoodie_partition_metadata",
    }
    for name in names:
        name.touch()
    assert file_groups(table) == ["a9-1", "b2a1-0", "c3-0"]
    assert file_groups(tmp_path / "missing") == []


def test_a_file_group_is_read_alone_by_the_file_names_of_its_slices() -> None:
    alone = "INPUT__FILE__NAME RLIKE '/[.]?b2a1-0_[^/]*$'"
    assert in_file_group("SELECT * FROM `t`", "b2a1-0") == f"SELECT * FROM `t` WHERE {alone}"
    incremental = "SET hoodie.t.consume.mode=INCREMENTAL;\nSELECT * FROM `t` WHERE a > 1 OR b"
    assert in_file_group(incremental, "b2a1-0") == (
        f"SET hoodie.t.consume.mode=INCREMENTAL;\nSELECT * FROM `t` WHERE (a > 1 OR b) AND {alone}"
    )


def test_the_causes_of_a_read_are_its_distinct_causes_in_sorted_order() -> None:
    assert causes_line(WRAPPED, {(CAST, True)}) == CAST
    # Whichever file group failed first, the line is the same.
    for first in (CAST, NULLS):
        found = [(NULLS, True), (first, True), (CAST, True), (NULLS, True)]
        assert causes_line(first, found) == f"{CAST}; in other file groups: {NULLS}"
    job = f"{FAILED}; the MapReduce job failed with {NULLS}"
    assert causes_line(job, [(NULLS, True)]) == f"the MapReduce job failed with {NULLS}"
    # Long causes are cut so that every one of them shows in a reason (cut at 400).
    many = causes_line(WRAPPED, [("x" * 500, True), ("y" * 500, True), (CAST, True)])
    assert len(f"QueryError: {many}") <= 400
    assert many.startswith(CAST[:100])
    assert "…; in other file groups: xxx" in many
    assert "…; yyy" in many


FIELD = "org.apache.hudi.exception.HoodieException: Field extra not found in log schema."


def test_file_groups_that_cannot_be_opened_are_the_causes_whatever_else_fails() -> None:
    """A file group whose record reader fails stops every read that comes to it, also one of
    another file group's rows alone: the rows of another file group are read only when it comes
    first. So where some cannot be opened, their causes alone are the line."""
    row = f"java.io.IOException: org.apache.hadoop.hive.ql.metadata.HiveException: {CAST}"
    opened = f"java.io.IOException: {FIELD}"
    fetched = "\tat org.apache.hadoop.hive.ql.exec.FetchOperator.getNextRow(FetchOperator.java:602)"
    assert in_rows(row, "") and not in_rows(opened, fetched)
    # A MapReduce task logs the row between its exception and the frames of the operator.
    job = f"{FAILED}; the MapReduce job failed with {CAST}"
    mapped = " ]\n\tat org.apache.hadoop.hive.ql.exec.MapOperator.process(MapOperator.java:570)"
    created = (
        "java.lang.Exception: java.io.IOException: java.lang.IndexOutOfBoundsException\n"
        "\tat org.apache.hadoop.hive.io.HiveIOExceptionHandlerChain."
        "handleRecordReaderCreationException(HiveIOExceptionHandlerChain.java:97)"
    )
    assert in_rows(job, mapped) and not in_rows(job, created)
    found = [(CAST, True), (FIELD, False)]
    assert causes_line(opened, found) == causes_line(row, found[::-1]) == FIELD
