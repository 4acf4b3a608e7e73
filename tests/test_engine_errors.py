"""How an engine's error becomes a cell's reason and evidence."""

from __future__ import annotations

from engines.errors import describe_error, error_text
from engines.spark.process import RemoteSparkError

TRACE = """IllegalArgumentException: None

JVM stacktrace:
java.lang.IllegalArgumentException
at org.apache.hudi.common.util.ValidationUtils.checkArgument(ValidationUtils.java:33)
at org.apache.hudi.common.table.timeline.TimelineLayout.getLayout(TimelineLayout.java:50)
at org.apache.spark.sql.Dataset.ofRows(Dataset.scala:1)"""


def test_an_error_without_a_message_names_where_hudi_threw_it() -> None:
    error = RemoteSparkError(TRACE)
    assert describe_error(error) == (
        "IllegalArgumentException (no message) at org.apache.hudi.common.table.timeline."
        "TimelineLayout.getLayout(TimelineLayout.java:50)"
    )
    assert error_text(error, lines=2).splitlines()[1] == "JVM stacktrace:"


def test_a_remote_error_reads_like_the_local_sparks() -> None:
    text = "AnalysisException: [COLUMN_ALREADY_EXISTS] The column `x` already exists.\nmore"
    assert describe_error(RemoteSparkError(text)) == text.splitlines()[0]
    assert describe_error(ValueError("plain")) == "ValueError: plain"
