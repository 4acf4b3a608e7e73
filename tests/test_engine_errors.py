"""How an engine's error becomes a cell's reason and evidence: the first line, the cause chain
with the frames that say where it was thrown, and what the engine's log got meanwhile."""

from __future__ import annotations

from pathlib import Path

from lakecompat.engines.errors import (
    ERROR_LIMIT,
    QueryError,
    cause_chain,
    describe_error,
    error_text,
    error_trace,
    log_since,
    log_size,
)
from lakecompat.engines.spark.process import RemoteSparkError

JVM = """java.lang.IllegalArgumentException
at org.apache.hudi.common.util.ValidationUtils.checkArgument(ValidationUtils.java:33)
at org.apache.hudi.common.table.timeline.TimelineLayout.getLayout(TimelineLayout.java:50)
at org.apache.spark.sql.Dataset.ofRows(Dataset.scala:1)"""
TRACE = f"IllegalArgumentException: None\n\nJVM stacktrace:\n{JVM}"

#: A Spark job's failure as the JVM prints it: Spark's wrapper, then Hudi's cause and its own.
CHAINED = """org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 failed
\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2856)
\tat org.apache.spark.scheduler.DAGScheduler.abortStage(DAGScheduler.scala:2792)
\tat org.apache.spark.scheduler.DAGScheduler.abortStage2(DAGScheduler.scala:2791)
\tat org.apache.spark.scheduler.DAGScheduler.abortStage3(DAGScheduler.scala:2790)
Caused by: org.apache.hudi.exception.HoodieException: Exception when reading log file
\tat org.apache.spark.rdd.RDD.iterator(RDD.scala:1)
\tat org.apache.spark.rdd.RDD.compute(RDD.scala:2)
\tat org.apache.spark.rdd.RDD.compute2(RDD.scala:3)
\tat org.apache.hudi.common.table.log.AbstractHoodieLogRecordScanner.scan(Scanner.java:400)
\t... 28 more
Caused by: java.lang.ClassCastException: class java.lang.Integer cannot be cast to Long
\tat org.apache.hudi.avro.HoodieAvroUtils.rewriteRecord(HoodieAvroUtils.java:1021)
\t... 40 more"""


def test_an_error_without_a_message_names_where_hudi_threw_it() -> None:
    error = RemoteSparkError(TRACE, JVM)
    assert describe_error(error) == (
        "IllegalArgumentException (no message) at org.apache.hudi.common.table.timeline."
        "TimelineLayout.getLayout(TimelineLayout.java:50)"
    )
    lines = error_text(error).splitlines()
    assert lines[0] == describe_error(error)
    assert lines[1:3] == [
        "java.lang.IllegalArgumentException",
        "    at org.apache.hudi.common.util.ValidationUtils.checkArgument(ValidationUtils.java:33)",
    ]


def test_a_remote_error_reads_like_the_local_sparks() -> None:
    text = "AnalysisException: [COLUMN_ALREADY_EXISTS] The column `x` already exists.\nmore"
    assert describe_error(RemoteSparkError(text)) == text.splitlines()[0]
    assert describe_error(ValueError("plain")) == "ValueError: plain"
    assert error_text(RemoteSparkError(text)) == text  # no trace: the message alone


def test_the_cause_chain_keeps_every_cause_with_its_first_frames_and_its_hudi_frame() -> None:
    chain = cause_chain(CHAINED).splitlines()
    causes = [line for line in chain if not line.startswith("    ")]
    assert causes == [
        "org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 failed",
        "Caused by: org.apache.hudi.exception.HoodieException: Exception when reading log file",
        "Caused by: java.lang.ClassCastException: class java.lang.Integer cannot be cast to Long",
    ]
    # Three frames under each cause; the Hudi frame below them is kept, after "...".
    assert chain[1:4] == [
        "    at org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages"
        "(DAGScheduler.scala:2856)",
        "    at org.apache.spark.scheduler.DAGScheduler.abortStage(DAGScheduler.scala:2792)",
        "    at org.apache.spark.scheduler.DAGScheduler.abortStage2(DAGScheduler.scala:2791)",
    ]
    assert "abortStage3" not in "\n".join(chain)
    assert chain[8:10] == [
        "    ...",
        "    at org.apache.hudi.common.table.log.AbstractHoodieLogRecordScanner.scan"
        "(Scanner.java:400)",
    ]
    assert (
        chain[-1]
        == "    at org.apache.hudi.avro.HoodieAvroUtils.rewriteRecord(HoodieAvroUtils.java:1021)"
    )
    assert not any("more" in line for line in chain)


def test_a_long_chain_keeps_the_top_and_the_root_causes_within_its_limit() -> None:
    causes = [
        f"Caused by: java.lang.RuntimeException: level {n}\n\tat a.B.c(B.java:{n})"
        for n in range(200)
    ]
    trace = "\n".join(["org.example.Top: top", "\tat a.B.top(B.java:1)", *causes])
    chain = cause_chain(trace, limit=1000)
    assert len(chain) <= 1000
    lines = chain.splitlines()
    assert lines[0] == "org.example.Top: top"
    assert lines[-2:] == [
        "Caused by: java.lang.RuntimeException: level 199",
        "    at a.B.c(B.java:199)",
    ]
    assert any(line.startswith("... (") and "more causes left out" in line for line in lines)


def test_a_python_traceback_keeps_each_exception_with_its_last_frames() -> None:
    trace = """Traceback (most recent call last):
  File "/lib/daft/table.py", line 10, in open
    raise KeyError("version")
KeyError: 'version'

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "<read>", line 3, in <module>
  File "/lib/daft/a.py", line 1, in a
    a()
  File "/lib/daft/b.py", line 2, in b
    b()
  File "/lib/daft/c.py", line 3, in c
    c()
UnsupportedException: Only support table version 5 and 6
"""
    assert cause_chain(trace).splitlines() == [
        '    File "/lib/daft/table.py", line 10, in open',
        "KeyError: 'version'",
        "The above exception was the direct cause of the following exception:",
        '    File "/lib/daft/a.py", line 1, in a',
        '    File "/lib/daft/b.py", line 2, in b',
        '    File "/lib/daft/c.py", line 3, in c',
        "UnsupportedException: Only support table version 5 and 6",
    ]


def test_a_query_errors_text_is_its_message_then_its_chain_and_stays_bounded() -> None:
    error = QueryError("HUDI_BAD_DATA: cannot read\nmore of the message", CHAINED)
    text = error_text(error)
    assert text.splitlines()[:3] == [
        "QueryError: HUDI_BAD_DATA: cannot read",
        "more of the message",
        "org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 failed",
    ]
    assert "Caused by: java.lang.ClassCastException" in text
    huge = QueryError("x" * 50_000, "\n".join([CHAINED] * 200))
    assert len(error_text(huge)) <= ERROR_LIMIT


class Py4JLike(Exception):
    """What a Py4J error offers: a Java object behind it, and its trace as its text."""

    java_exception = object()

    def __str__(self) -> str:
        return "An error occurred while calling o42.collectToPython.\n: " + CHAINED


def test_a_py4j_errors_trace_is_the_one_the_jvm_prints_without_py4js_call() -> None:
    assert error_trace(Py4JLike()) == CHAINED
    assert error_trace(ValueError("x")) == ""


def test_the_log_excerpt_is_what_the_query_wrote_from_just_before_its_first_error(
    tmp_path: Path,
) -> None:
    log = tmp_path / "engine.log"
    log.write_text("ERROR an earlier query failed\n")
    start = log_size(log)
    frames = "".join(f"\tat org.x.Y.f{n}(Y.java:{n})\n" for n in range(30))
    with log.open("a") as handle:
        handle.write("".join(f"INFO step {n}\n" for n in range(10)))
        handle.write(f"ERROR Task: Failed with exception\njava.io.IOException: boom\n{frames}")
        handle.write("INFO after\n")
    excerpt = log_since(log, start).splitlines()
    assert excerpt[:5] == [
        "INFO step 7",
        "INFO step 8",
        "INFO step 9",
        "ERROR Task: Failed with exception",
        "java.io.IOException: boom",
    ]
    assert excerpt[5:10] == [f"\tat org.x.Y.f{n}(Y.java:{n})" for n in range(4)] + ["\t..."]
    assert excerpt[-1] == "INFO after"
    assert "earlier" not in "\n".join(excerpt)
    # Nothing written: nothing to quote; no error named: the last lines.
    assert log_since(log, log_size(log)) == ""
    quiet = tmp_path / "quiet.log"
    quiet.write_text("".join(f"INFO {n}\n" for n in range(100)))
    assert log_since(quiet, 0, lines=3).splitlines() == ["INFO 97", "INFO 98", "INFO 99"]
    assert log_since(tmp_path / "missing.log", 0) == "" and log_size(None) == 0
