"""Unit tests of the Presto engine's pure parts: its configuration (every socket on loopback),
the statement protocol against a small HTTP server of the test's own, answers as Arrow, and
the reason it gives on a Hive 4 Metastore (no JVM needed)."""

from __future__ import annotations

import datetime as dt
import http.server
import json
import threading
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pytest

from lakecompat.engines.context import RunContext
from lakecompat.engines.errors import error_text
from lakecompat.engines.presto import runtime as presto_runtime
from lakecompat.engines.presto.answer import parse_type, to_arrow
from lakecompat.engines.presto.client import (
    Answer,
    PrestoClient,
    PrestoQueryError,
    collect,
    failure_reason,
    session_header,
)
from lakecompat.engines.presto.reader import MetastoreUnsupported, PrestoEngine, metastore_problem
from lakecompat.engines.presto.runtime import (
    UNUSED_JMX_PORT,
    asm_dependencies,
    catalogs,
    node_properties,
    ready_queries,
    server_config,
    started,
)
from lakecompat.engines.releases import Releases
from lakecompat.engines.table import TableRef

TABLE = TableRef(
    name="t_rename",
    path=Path("/data/t_rename"),
    table_type="mor",
    key="id",
    columns=(("_hoodie_commit_time", "string"), ("id", "int"), ("product", "string")),
)


def test_the_server_configuration_keeps_every_socket_on_loopback(tmp_path: Path) -> None:
    config = server_config(8123, tmp_path / "plugin", tmp_path / "catalog", tmp_path / "data")
    assert config["http-server.http.port"] == "8123"
    assert config["discovery.uri"] == "http://127.0.0.1:8123"
    # The admin connector would be a second HTTP port on every interface.
    assert config["http-server.admin.enabled"] == "false"
    # The JMX module is told the port PrestoMain gave it; nothing opens it.
    assert config["jmx.rmiregistry.port"] == config["jmx.rmiserver.port"] == UNUSED_JMX_PORT
    assert config["plugin.dir"] == str(tmp_path / "plugin")
    node = node_properties("lakecompat_1", "node-1", tmp_path / "data")
    assert node["node.bind-ip"] == node["node.internal-address"] == "127.0.0.1"
    assert node["node.environment"] == "lakecompat_1"
    # Every class of ours the JVM needs to stay on loopback is among the sources.
    sources = {p.name for p in presto_runtime.SOURCES.rglob("*.java")}
    assert {"PrestoMain.java", "LoopbackBind.java", "DriftPatcher.java"} <= sources
    assert presto_runtime.MAIN_CLASS == "lakecompat.presto.PrestoMain"


def test_the_catalogs_are_the_hudi_and_the_hive_connector_on_the_metastore() -> None:
    files = catalogs("thrift://127.0.0.1:9083")
    assert files["hudi"] == {
        "connector.name": "hudi",
        "hive.metastore.uri": "thrift://127.0.0.1:9083",
    }
    assert files["hive"]["connector.name"] == "hive-hadoop2"
    assert files["hive"]["hive.metastore.uri"] == "thrift://127.0.0.1:9083"


def test_asm_9_7_1_is_asked_for_directly_so_it_wins_over_9_0() -> None:
    asked = {
        (d.artifact.group, d.artifact.artifact, d.artifact.version) for d in asm_dependencies()
    }
    assert asked == {
        ("org.ow2.asm", name, "9.7.1") for name in ("asm", "asm-tree", "asm-analysis", "asm-util")
    }


def test_plugin_folders_link_the_jars_and_are_rebuilt_when_they_change(tmp_path: Path) -> None:
    m2 = tmp_path / "m2"
    m2.mkdir()
    jars = {name: m2 / f"{name}.jar" for name in ("hudi-a", "hive-a", "asm")}
    for jar in jars.values():
        jar.write_bytes(b"jar")
    plugin_dir = tmp_path / "presto" / "plugin"
    plugins = {"hudi": [jars["hudi-a"], jars["asm"]], "hive-hadoop2": [jars["hive-a"]]}
    presto_runtime.link_plugins(plugin_dir, plugins)
    assert sorted(p.name for p in plugin_dir.iterdir()) == ["hive-hadoop2", "hudi"]
    assert (plugin_dir / "hudi" / "asm.jar").resolve() == jars["asm"]
    stamp = plugin_dir.with_name("layout.txt")
    before = stamp.stat().st_mtime_ns
    presto_runtime.link_plugins(plugin_dir, plugins)
    assert stamp.stat().st_mtime_ns == before
    presto_runtime.link_plugins(plugin_dir, {"hudi": [jars["hudi-a"]]})
    assert sorted(p.name for p in plugin_dir.iterdir()) == ["hudi"]
    assert sorted(p.name for p in (plugin_dir / "hudi").iterdir()) == ["hudi-a.jar"]


def test_readiness_needs_our_node_started_and_a_query_in_every_catalog() -> None:
    assert started(b'{"environment": "lakecompat_7", "starting": false}', "lakecompat_7")
    assert not started(b'{"environment": "lakecompat_7", "starting": true}', "lakecompat_7")
    assert not started(b'{"environment": "other", "starting": false}', "lakecompat_7")
    assert not started(b"not json", "lakecompat_7")
    assert ready_queries(["hudi", "hive"]) == [
        "SELECT count(*) FROM hudi.information_schema.schemata",
        "SELECT count(*) FROM hive.information_schema.schemata",
    ]
    assert ready_queries([]) == ["SELECT 1"]


def test_on_a_hive_4_metastore_presto_says_why_it_cannot_start(tmp_path: Path) -> None:
    reason = metastore_problem("4.0.1", attached=False)
    assert reason is not None
    assert "get_table" in reason and "Hive 4" in reason and "4.0.1" in reason
    assert "LAKECOMPAT_HIVE_VERSION=3.1.3" in reason
    assert metastore_problem("3.1.3", attached=False) is None
    # An attached Metastore's release is not known: Presto tries it.
    assert metastore_problem("4.0.1", attached=True) is None


def test_start_fails_before_anything_starts_on_hive_4(
    tmp_path: Path,
) -> None:
    releases = Releases(engines={"hive": "4.0.1"})
    context = RunContext(tmp_path, spark=None, releases=releases)  # type: ignore[arg-type]
    engine = PrestoEngine(context)
    with pytest.raises(MetastoreUnsupported, match="get_table"):
        engine.start()
    assert context._metastore is None  # no Metastore was started for it
    assert not (tmp_path / "presto").exists()


def test_the_evidence_is_for_prestos_cli_and_reads_back(tmp_path: Path) -> None:
    engine = PrestoEngine(RunContext(tmp_path, spark=None))  # type: ignore[arg-type]
    hive = next(v for v in engine.variants_of("hudi") if v.name == "hive_catalog")
    assert engine.read_sql(TABLE, "snapshot") == 'SELECT * FROM "t_rename_rt"'
    assert engine.read_sql(TABLE, "read_optimized") == 'SELECT * FROM "t_rename_ro"'
    shown = engine.evidence_sql(TABLE, "snapshot", hive)
    assert shown.startswith("-- Presto 0.287\n-- etc/catalog/hive.properties:\n")
    assert "--   connector.name=hive-hadoop2" in shown
    assert shown.endswith('USE hive.default;\nSELECT * FROM "t_rename_rt";')
    files = engine.reproduction(TABLE, "snapshot", hive)
    assert set(files) == {
        "etc/catalog/hudi.properties",
        "etc/catalog/hive.properties",
        "reader.sql",
        "register.hql",
    }
    query, variant = engine.reproduction_query(files)
    assert query == 'SELECT * FROM "t_rename_rt"'
    assert variant.settings == {"catalog": "hive"}


def test_a_session_is_sent_as_url_encoded_pairs() -> None:
    assert session_header({"a": "true", "b": "x,y=z"}) == "a=true,b=x%2Cy%3Dz"


def test_answer_documents_are_collected_until_there_is_no_next_uri() -> None:
    answer = Answer()
    first = {"nextUri": "http://127.0.0.1/next", "stats": {"state": "QUEUED"}}
    assert collect(answer, first) == "http://127.0.0.1/next"
    columns = [{"name": "id", "type": "integer", "typeSignature": {"rawType": "integer"}}]
    assert collect(answer, {"columns": columns, "data": [[1]], "nextUri": "u2"}) == "u2"
    assert collect(answer, {"columns": columns, "data": [[2]]}) is None
    assert answer.columns == [{"name": "id", "type": "integer"}]
    assert answer.rows == [[1], [2]]


#: How Presto 0.287 reported a table of table version 9 (shortened).
FAILED = {
    "id": "q1",
    "error": {
        "message": "Internal error",
        "errorCode": 65536,
        "errorName": "GENERIC_INTERNAL_ERROR",
        "errorType": "INTERNAL_ERROR",
        "failureInfo": {
            "type": "com.facebook.presto.spi.PrestoException",
            "message": "Internal error",
            "stack": ["com.facebook.presto.hudi.HudiMetadata.getTableHandle(HudiMetadata.java:90)"],
            "cause": {
                "type": "java.lang.IllegalArgumentException",
                "stack": [
                    "org.apache.hudi.common.util.ValidationUtils.checkArgument(ValidationUtils.java:33)",
                    "org.apache.hudi.common.table.timeline.TimelineLayoutVersion.<init>("
                    "TimelineLayoutVersion.java:40)",
                ],
            },
        },
    },
}


def test_a_failed_query_is_a_query_error_with_presto_s_name_and_trace() -> None:
    with pytest.raises(PrestoQueryError) as caught:
        collect(Answer(), FAILED)
    error = caught.value
    # Presto's message says nothing; the root cause and where it was thrown do.
    assert str(error) == (
        "GENERIC_INTERNAL_ERROR: Internal error; caused by java.lang.IllegalArgumentException "
        "(no message) at org.apache.hudi.common.table.timeline.TimelineLayoutVersion.<init>("
        "TimelineLayoutVersion.java:40)"
    )
    assert error.error_name == "GENERIC_INTERNAL_ERROR"
    assert "Caused by: java.lang.IllegalArgumentException" in error.trace
    assert "TimelineLayoutVersion.<init>" in error_text(error)


def test_a_reason_names_no_file_where_presto_names_the_first_that_failed() -> None:
    message = (
        "The column color of table default.t is declared as type string, but the Parquet file "
        "(file:/runs/1/tables/t/a-0_0.parquet) declares the column as type DOUBLE"
    )
    reason = failure_reason("HIVE_PARTITION_SCHEMA_MISMATCH", message, {})
    first, second = reason.split("\n")
    assert first == (
        "HIVE_PARTITION_SCHEMA_MISMATCH: The column color of table default.t is declared as "
        "type string, but a Parquet file declares the column as type DOUBLE (Presto's message "
        "names the first file that failed)"
    )
    assert second == f"HIVE_PARTITION_SCHEMA_MISMATCH: {message}"
    # A message that says what failed keeps it, without a cause that repeats it.
    info = {"type": "X", "cause": {"type": "java.io.IOException", "message": "disk"}}
    assert failure_reason("E", "read failed: disk", info) == "E: read failed: disk"
    assert failure_reason("E", "read failed", info) == (
        "E: read failed; caused by java.io.IOException: disk"
    )


class _Coordinator(http.server.BaseHTTPRequestHandler):
    """Answers a statement in two documents, the way Presto does, and records what it got."""

    seen: ClassVar[list[tuple[str, str, dict[str, str], str]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"])).decode()
        self._record(body)
        port = self.server.server_address[1]
        self._send({"id": "q", "nextUri": f"http://127.0.0.1:{port}/v1/statement/q/1"})

    def do_GET(self) -> None:
        self._record("")
        row = '[ 1, "2024-01-02 03:04:05.123" ]'
        self._send(
            {
                "id": "q",
                "columns": [
                    {"name": "id", "type": "integer"},
                    {"name": "point", "type": "row(x integer,t timestamp)"},
                ],
                "data": [[7, row]],
            }
        )

    def _record(self, body: str) -> None:
        headers = {k: v for k, v in self.headers.items() if k.startswith("X-Presto-")}
        self.seen.append((self.command, self.path, headers, body))

    def _send(self, document: dict[str, Any]) -> None:
        payload = json.dumps(document).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def coordinator() -> Iterator[str]:
    _Coordinator.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Coordinator)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_client_posts_the_statement_and_follows_next_uri(coordinator: str) -> None:
    client = PrestoClient(coordinator, request_timeout_s=5)
    answer = client.execute('SELECT * FROM "t"', "hive", "default", {"k": "v"})
    (post, get) = _Coordinator.seen
    assert post[:2] == ("POST", "/v1/statement") and post[3] == 'SELECT * FROM "t"'
    assert post[2]["X-Presto-User"] == "lakecompat"
    assert post[2]["X-Presto-Catalog"] == "hive"
    assert post[2]["X-Presto-Schema"] == "default"
    assert post[2]["X-Presto-Session"] == "k=v"
    assert post[2]["X-Presto-Time-Zone"] == "UTC"
    assert get[:2] == ("GET", "/v1/statement/q/1")
    table = to_arrow(answer.columns, answer.rows)
    assert table.to_pylist() == [{"id": 7, "point": '{"t":"2024-01-02 03:04:05.123","x":1}'}]


def test_row_types_with_quoted_and_nested_fields_are_parsed() -> None:
    kind = parse_type('row(x integer,"y z" array(decimal(10,2)),m map(varchar(1),double))')
    assert kind.base == "row" and kind.names == ("x", "y z", "m")
    assert kind.parameters[1].parameters[0].numbers == (10, 2)
    assert kind.parameters[2].base == "map"
    assert [p.base for p in kind.parameters[2].parameters] == ["varchar", "double"]
    assert parse_type("timestamp with time zone").base == "timestamp with time zone"
    assert parse_type('row("a""b" integer)').names == ('a"b',)


def test_answers_become_arrow_in_the_types_presto_reads() -> None:
    """Values as Presto 0.287 sent them for the same types (observed)."""
    columns = [
        {"name": "id", "type": "integer"},
        {"name": "price", "type": "decimal(10,2)"},
        {"name": "ratio", "type": "double"},
        {"name": "raw", "type": "varbinary"},
        {"name": "day", "type": "date"},
        {"name": "at", "type": "timestamp"},
        {"name": "zoned", "type": "timestamp with time zone"},
        {"name": "name", "type": "varchar(5)"},
        {"name": "amounts", "type": "map(varchar(1),decimal(10,2))"},
    ]
    rows = [
        [
            1,
            "1.50",
            "NaN",
            "YWJj",
            "2024-01-01",
            "2024-01-02 03:04:05.123",
            "2024-01-02 03:04:05.123 UTC",
            "apple",
            '{\n  "a" : "1.50"\n}',
        ],
        [2, None, 0.5, None, None, None, None, None, None],
    ]
    table = to_arrow(columns, rows)
    assert table.schema.types == [
        pa.int32(),
        pa.decimal128(10, 2),
        pa.float64(),
        pa.binary(),
        pa.date32(),
        # Presto 0.287's timestamps have millisecond precision.
        pa.timestamp("ms"),
        pa.timestamp("ms", tz="UTC"),
        pa.string(),
        pa.string(),
    ]
    first = table.to_pylist()[0]
    assert first["price"] == Decimal("1.50")
    assert first["raw"] == b"abc"
    assert first["day"] == dt.date(2024, 1, 1)
    assert first["at"] == dt.datetime(2024, 1, 2, 3, 4, 5, 123000)
    assert first["zoned"] == dt.datetime(2024, 1, 2, 3, 4, 5, 123000, tzinfo=dt.UTC)
    assert first["amounts"] == '{"a":"1.50"}'
    assert table.column("ratio").to_pylist()[0] != table.column("ratio").to_pylist()[0]  # NaN
