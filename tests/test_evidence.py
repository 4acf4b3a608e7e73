"""What a cell's evidence says ran: every engine's settings with its query, written so that a
user can run it; and the log excerpt a failed query's cell keeps."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakecompat.engines.attached import Attachments
from lakecompat.engines.base import Engine, Variant
from lakecompat.engines.context import RunContext
from lakecompat.engines.errors import QueryError, logged_trace
from lakecompat.engines.flink.reader import FlinkEngine
from lakecompat.engines.hive.reader import HiveEngine, _sent_trace
from lakecompat.engines.library.daft import DaftEngine
from lakecompat.engines.library.hudi_rs import HudiRsEngine
from lakecompat.engines.spark.reader import SparkEngine
from lakecompat.engines.spark.runtime import SparkRuntime
from lakecompat.engines.table import TableRef
from lakecompat.engines.trino.answers import failure_trace
from lakecompat.engines.trino.reader import TrinoEngine, catalogs
from lakecompat.harness.run.cells import failure_log

TABLE = TableRef(
    name="t_add",
    path=Path("/data/t_add"),
    table_type="cow",
    key="id",
    columns=(("_hoodie_commit_time", "string"), ("id", "int"), ("v", "string")),
    reference_instant=("20240102030405678", "20240102030406000"),
)


@pytest.fixture
def context(tmp_path: Path) -> RunContext:
    return RunContext(tmp_path, spark=SparkRuntime(tmp_path / "logs", hudi="1.2.0"))


def variant(engine: type[Engine], name: str) -> Variant:
    return next(v for v in engine.reading("hudi").variants if v.name == name)


def test_trino_evidence_names_the_catalog_its_properties_and_the_session(
    context: RunContext,
) -> None:
    engine = TrinoEngine(context)
    engine._catalogs = catalogs("thrift://127.0.0.1:9083")
    names = engine.evidence_sql(TABLE, "snapshot", variant(TrinoEngine, "column_names"))
    hive = engine.evidence_sql(TABLE, "snapshot", variant(TrinoEngine, "hive_catalog"))
    assert names != hive
    assert "-- etc/catalog/hudi.properties:\n--   connector.name=hudi\n" in names
    assert "--   hive.metastore.uri=thrift://127.0.0.1:9083\n" in names
    assert "hudi.parquet.use-column-names" in names
    assert names.endswith(
        "USE hudi.default;\n"
        "SET SESSION hudi.use_parquet_column_names = true;\n"
        'SELECT * FROM "t_add";'
    )
    # Through the hive catalog: its redirection, then the hudi catalog it hands tables to.
    assert "-- etc/catalog/hive.properties:\n--   connector.name=hive\n" in hive
    assert "--   hive.hudi-catalog-name=hudi\n" in hive
    assert "-- which hands Hudi tables to catalog hudi:\n-- etc/catalog/hudi.properties:" in hive
    assert hive.endswith('USE hive.default;\nSELECT * FROM "t_add";')
    assert "SET SESSION" not in hive
    positions = engine.evidence_sql(TABLE, "snapshot", variant(TrinoEngine, "column_positions"))
    assert "SET SESSION hudi.use_parquet_column_names = false;" in positions
    # Every line is a comment or a statement: the text runs in the Trino CLI as it is.
    assert all(line.startswith("--") or line.endswith(";") for line in names.splitlines())


def test_an_attached_trinos_evidence_says_its_catalogs_are_not_known(
    context: RunContext,
) -> None:
    context.attachments = Attachments(trino="http://127.0.0.1:8080")
    text = TrinoEngine(context).evidence_sql(
        TABLE, "snapshot", variant(TrinoEngine, "hive_catalog")
    )
    assert "not lakecompat's" in text and "USE hive.default;" in text


def test_a_trino_failure_becomes_a_java_trace_with_its_causes() -> None:
    info = {
        "type": "io.trino.spi.TrinoException",
        "message": "Error opening Hudi split",
        "stack": [
            "io.trino.plugin.hudi.HudiPageSourceProvider.create(HudiPageSourceProvider.java:10)"
        ],
        "cause": {
            "type": "java.lang.UnsupportedOperationException",
            "message": "Unsupported type",
            "stack": ["org.apache.parquet.X.y(X.java:1)"],
        },
    }
    assert failure_trace(info).splitlines() == [
        "io.trino.spi.TrinoException: Error opening Hudi split",
        "\tat io.trino.plugin.hudi.HudiPageSourceProvider.create(HudiPageSourceProvider.java:10)",
        "Caused by: java.lang.UnsupportedOperationException: Unsupported type",
        "\tat org.apache.parquet.X.y(X.java:1)",
    ]
    assert failure_trace({}) == ""


def test_hive_evidence_sets_what_the_session_had_then_queries(context: RunContext) -> None:
    engine = HiveEngine(context)
    text = engine.evidence_sql(TABLE, "incremental", variant(HiveEngine, "schema_evolution_off"))
    lines = text.splitlines()
    assert lines[0].startswith(f"-- HiveServer2 {engine.version} with hudi-spark3.5-bundle 1.2.0")
    assert lines[1:5] == [
        "SET hive.input.format=org.apache.hadoop.hive.ql.io.HiveInputFormat;",
        "SET hive.vectorized.execution.enabled=false;",
        "SET hive.resultset.use.unique.column.names=false;",
        "SET hive.exec.schema.evolution=false;",
    ]
    assert "SET hoodie.t_add.consume.mode=INCREMENTAL;" in lines
    assert lines[-1] == "SELECT * FROM `t_add` WHERE `_hoodie_commit_time` > '20240102030405678';"
    # The reproduction's reader file is the same text.
    files = engine.reproduction(TABLE, "incremental", variant(HiveEngine, "schema_evolution_off"))
    assert files["reader.hql"] == text + "\n"


def test_hives_sent_and_logged_traces_read_as_java_traces() -> None:
    sent = [
        "*org.apache.hive.service.cli.HiveSQLException:Error while compiling: boom:12:11",
        "org.apache.hive.service.cli.operation.Operation:toSQLException:Operation.java:376",
        "*java.lang.RuntimeException:boom: with a colon:3:2",
        "org.apache.hudi.X:read:X.java:5",
    ]
    assert _sent_trace(sent).splitlines() == [
        "org.apache.hive.service.cli.HiveSQLException: Error while compiling: boom",
        "\tat org.apache.hive.service.cli.operation.Operation.toSQLException(Operation.java:376)",
        "Caused by: java.lang.RuntimeException: boom: with a colon",
        "\tat org.apache.hudi.X.read(X.java:5)",
    ]
    logged = [
        "INFO something",
        "org.apache.hive.service.cli.HiveSQLException: short",
        "\tat a.B.c(B.java:1)",
        "INFO between",
        "org.apache.hadoop.hive.ql.metadata.HiveException: java.lang.X: y",
        "\tat a.B.d(B.java:2)",
        "Caused by: java.lang.X: y",
        "\tat a.B.e(B.java:3)",
        "\t... 28 more",
        "INFO after",
    ]
    # The trace with the causes wins over the shorter one before it.
    assert logged_trace(logged).splitlines() == logged[4:9]
    assert logged_trace(logged[:4]) == "\n".join(logged[1:3])
    assert logged_trace(["INFO only"]) == ""


def test_spark_evidence_has_the_session_command_line_and_the_variants_sets(
    context: RunContext,
) -> None:
    text = SparkEngine(context).evidence_sql(
        TABLE, "snapshot", variant(SparkEngine, "schema_on_read")
    )
    lines = text.splitlines()
    assert lines[0].startswith("-- Spark ")
    assert "--packages org.apache.hudi:hudi-spark3.5-bundle_2.12:1.2.0" in lines[0]
    assert (
        "--conf spark.sql.extensions=org.apache.spark.sql.hudi.HoodieSparkSessionExtension"
        in lines[0]
    )
    assert lines[1] == "SET hoodie.schema.on.read.enable=true;"
    assert lines[2].startswith("CREATE OR REPLACE TEMPORARY VIEW `t_add_snapshot` USING hudi")
    assert lines[-1] == "SELECT * FROM `t_add_snapshot`;"


def test_library_evidence_is_python_that_defines_its_settings(context: RunContext) -> None:
    text = HudiRsEngine(context).evidence_sql(
        TABLE, "snapshot", variant(HudiRsEngine, "file_group_reader_v1")
    )
    assert text.splitlines()[:2] == [
        "# hudi-rs 0.5.0: pip install hudi==0.5.0",
        "settings = {'hoodie.read.file.group.reader.version': '1'}",
    ]
    compile(text, "<evidence>", "exec")  # runnable Python as it stands
    daft = DaftEngine(context).evidence_sql(TABLE, "snapshot", Variant("default"))
    assert "settings" not in daft and "daft.read_hudi('/data/t_add')" in daft
    compile(daft, "<evidence>", "exec")


def test_flink_evidence_runs_in_batch_mode_with_the_variants_table_hint(
    context: RunContext,
) -> None:
    text = FlinkEngine(context).evidence_sql(
        TABLE, "snapshot", variant(FlinkEngine, "schema_on_read")
    )
    lines = text.splitlines()
    assert lines[1] == "SET 'execution.runtime-mode' = 'batch';"
    assert lines[-1] == (
        "SELECT * FROM `t_add` /*+ OPTIONS('hoodie.schema.on.read.enable'='true') */;"
    )
    plain = FlinkEngine(context).evidence_sql(TABLE, "snapshot", Variant("default"))
    assert plain.splitlines()[-1] == "SELECT * FROM `t_add`;"


def test_a_failed_querys_log_is_what_it_wrote_or_else_the_end_saying_so(
    context: RunContext,
) -> None:
    engine = HudiRsEngine(context)
    log = engine.log_path
    log.write_text("".join(f"INFO {n}\n" for n in range(30)))
    start = log.stat().st_size
    assert failure_log(engine, start) == (
        "hudi-rs.log: nothing written during the query; its last lines:\n"
        + "\n".join(f"INFO {n}" for n in range(15, 30))
    )
    with log.open("a") as handle:
        handle.write("Traceback (most recent call last):\nValueError: x\n")
    assert failure_log(engine, start) == (
        "hudi-rs.log, written during the query:\nTraceback (most recent call last):\nValueError: x"
    )
    # An engine that read more after the failed query (to explain it) says where the query's
    # part ends: what it wrote later is not the query's evidence.
    end = log.stat().st_size
    with log.open("a") as handle:
        handle.write("ERROR a later read\n")
    assert failure_log(engine, start, QueryError("x", log_end=end)) == (
        "hudi-rs.log, written during the query:\nTraceback (most recent call last):\nValueError: x"
    )
    assert failure_log(engine, start, QueryError("x")).endswith("ERROR a later read")
    log.unlink()
    assert failure_log(engine, 0) is None
