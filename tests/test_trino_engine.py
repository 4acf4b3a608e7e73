"""Unit tests of the Trino engine's pure parts: provisioning layout, JDK choice, answer types."""

from __future__ import annotations

import datetime as dt
import zipfile
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

from lakecompat.engines.context import RunContext
from lakecompat.engines.infra.artifacts import MavenArtifact, ProvisioningError, _pom
from lakecompat.engines.infra.jdk import Jdk
from lakecompat.engines.metastore.tables import PARQUET_INPUT_FORMAT, input_format, serde_parameters
from lakecompat.engines.table import TableRef
from lakecompat.engines.trino import runtime as trino_runtime
from lakecompat.engines.trino.answers import error_message, to_arrow, trino_arrow_type
from lakecompat.engines.trino.reader import TrinoEngine, catalogs


def fake_trino_main(folder: Path, java_release: int) -> Path:
    """A jar with a Server.class header of the given Java release (class version = release+44)."""
    jar = folder / "trino-main-999.jar"
    header = b"\xca\xfe\xba\xbe\x00\x00" + (java_release + 44).to_bytes(2, "big")
    with zipfile.ZipFile(jar, "w") as archive:
        archive.writestr("io/trino/server/Server.class", header + b"\x00" * 8)
    return jar


def test_required_java_comes_from_the_class_file_version(tmp_path: Path) -> None:
    assert trino_runtime.required_java([tmp_path / "x.jar", fake_trino_main(tmp_path, 25)]) == 25
    with pytest.raises(ProvisioningError, match="no trino-main jar"):
        trino_runtime.required_java([tmp_path / "other.jar"])


def test_a_jdk_too_old_gets_an_error_that_says_what_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = Jdk(Path("/usr/lib/jvm/java-17"), 17)
    monkeypatch.setattr(trino_runtime, "installed_jdks", lambda: [old])
    with pytest.raises(ProvisioningError) as caught:
        trino_runtime.trino_jdk("999", [fake_trino_main(tmp_path, 25)])
    message = str(caught.value)
    assert "Java 25 or newer" in message and "jdk.incubator.vector" in message
    assert "/usr/lib/jvm/java-17 (Java 17)" in message and "LAKECOMPAT_TRINO_VERSION" in message


def test_a_jdk_without_the_vector_module_is_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slim, full = Jdk(Path("/slim"), 25), Jdk(Path("/full"), 26)
    monkeypatch.setattr(trino_runtime, "installed_jdks", lambda: [full, slim])
    monkeypatch.setattr(trino_runtime, "_has_module", lambda jdk, module: jdk is full)
    assert trino_runtime.trino_jdk("999", [fake_trino_main(tmp_path, 25)]) is full


def test_plugin_folders_link_jars_and_carry_the_services_file(tmp_path: Path) -> None:
    m2 = tmp_path / "m2"
    m2.mkdir()
    jars = {name: m2 / f"{name}.jar" for name in ("hudi-a", "hive-a", "hdfs-a")}
    for jar in jars.values():
        jar.write_bytes(b"jar")
    home = tmp_path / "trino"
    plugins = {"hudi": [jars["hudi-a"]], "hive": [jars["hive-a"]]}
    plugin_dir = trino_runtime._link_plugins(home, "999", plugins, [jars["hdfs-a"]])
    assert sorted(p.name for p in plugin_dir.iterdir()) == ["hive", "hudi"]
    hudi = plugin_dir / "hudi"
    assert (hudi / "hudi-a.jar").resolve() == jars["hudi-a"]
    assert (hudi / "hdfs" / "hdfs-a.jar").resolve() == jars["hdfs-a"]
    with zipfile.ZipFile(hudi / "trino-hudi-999-services.jar") as services:
        entry = services.read("META-INF/services/io.trino.spi.Plugin").decode()
    assert entry.strip() == "io.trino.plugin.hudi.HudiPlugin"
    # The same layout again is left as it is; a changed one is rebuilt.
    stamp = (home / "layout.txt").stat().st_mtime_ns
    trino_runtime._link_plugins(home, "999", plugins, [jars["hdfs-a"]])
    assert (home / "layout.txt").stat().st_mtime_ns == stamp
    trino_runtime._link_plugins(home, "999", {"hudi": [jars["hudi-a"]]}, [])
    assert sorted(p.name for p in plugin_dir.iterdir()) == ["hudi"]


def test_generated_pom_imports_the_bom() -> None:
    bom = MavenArtifact("io.trino", "trino-root", "999", packaging="pom")
    pom = _pom("x", [], bom)
    assert "<artifactId>trino-root</artifactId><version>999</version>" in pom
    assert "<scope>import</scope>" in pom
    assert "dependencyManagement" not in _pom("x", [])


def test_catalogs_share_the_metastore_and_redirect_hudi_tables() -> None:
    files = catalogs("thrift://127.0.0.1:9083")
    assert files["hudi"]["connector.name"] == "hudi"
    assert files["hive"]["hive.hudi-catalog-name"] == "hudi"
    for settings in files.values():
        assert settings["hive.metastore.uri"] == "thrift://127.0.0.1:9083"
        assert settings["fs.hadoop.enabled"] == "true"


def test_variants_are_data_and_name_the_catalog() -> None:
    names = [v.name for v in TrinoEngine.reading("hudi").variants]
    assert names == ["column_names", "column_positions", "hive_catalog"]
    assert all("catalog" in v.settings for v in TrinoEngine.reading("hudi").variants)
    assert TrinoEngine.supports("mor", "read_optimized", "hudi")
    assert not TrinoEngine.supports("mor", "snapshot", "hudi")
    assert ("mor", "snapshot") in TrinoEngine.reading("hudi").probe_only


def test_read_sql_uses_the_session_catalog_except_for_plain_parquet(tmp_path: Path) -> None:
    engine = TrinoEngine(RunContext(tmp_path, spark=None))  # type: ignore[arg-type]
    mor = TableRef("t_x_mor", Path("/d"), "mor", "id")
    assert engine.read_sql(mor, "read_optimized") == 'SELECT * FROM "t_x_mor_ro"'
    assert engine.read_sql(mor, "snapshot") == 'SELECT * FROM "t_x_mor_rt"'
    control = TableRef("control", Path("/c"), "cow", "id", format="parquet")
    assert engine.read_sql(control, "snapshot") == 'SELECT * FROM hive.default."control"'
    # A run on shared services reads its own database (the session's schema for Hudi tables).
    shared = RunContext(tmp_path, spark=None, database="lakecompat_r1")  # type: ignore[arg-type]
    engine = TrinoEngine(shared)
    assert engine.read_sql(control, "snapshot") == 'SELECT * FROM hive.lakecompat_r1."control"'


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("integer", pa.int32()),
        ("bigint", pa.int64()),
        ("real", pa.float32()),
        ("varchar", pa.string()),
        ("varchar(12)", pa.string()),
        ("decimal(10,2)", pa.decimal128(10, 2)),
        ("date", pa.date32()),
        ("timestamp(6)", pa.timestamp("us")),
        ("timestamp(3)", pa.timestamp("us")),
        ("timestamp(6) with time zone", pa.timestamp("us", tz="UTC")),
        ("varbinary", pa.binary()),
        ("boolean", pa.bool_()),
        ("row(a integer)", pa.string()),
    ],
)
def test_trino_types_map_to_arrow(name: str, expected: pa.DataType) -> None:
    assert trino_arrow_type(name) == expected


def test_answers_become_arrow_tables_with_nested_values_as_json() -> None:
    from trino.types import NamedRowTuple

    description = [
        ("id", "integer"),
        ("amount", "decimal(10,2)"),
        ("day", "date"),
        ("r", "row(n integer, a varchar)"),
        ("m", "map(varchar, array(integer))"),
    ]
    point = NamedRowTuple([1, "x"], ["n", "a"], ["integer", "varchar"])
    rows = [
        [1, Decimal("1.50"), dt.date(2024, 1, 2), point, {"k": [1, 2]}],
        [2, None, None, None, None],
    ]
    table = to_arrow(description, rows)
    assert table.schema.field("amount").type == pa.decimal128(10, 2)
    assert table.column("day").to_pylist() == [dt.date(2024, 1, 2), None]
    assert table.column("r").to_pylist() == ['{"a":"x","n":1}', None]
    assert table.column("m").to_pylist() == ['{"k":[1,2]}', None]


def test_metastore_layout_for_plain_parquet_and_hudi() -> None:
    control = TableRef("control", Path("/c"), "cow", "id", format="parquet")
    assert input_format(control, "snapshot") == PARQUET_INPUT_FORMAT
    assert serde_parameters(control, "snapshot") == {}
    mor = TableRef("t", Path("/d"), "mor", "id")
    assert serde_parameters(mor, "read_optimized") == {
        "hoodie.query.as.ro.table": "true",
        "path": "file:///d",
    }


def test_timestamps_and_binary_become_arrow_values() -> None:
    from zoneinfo import ZoneInfo

    description = [
        ("t", "timestamp(6)"),
        ("z", "timestamp(6) with time zone"),
        ("b", "varbinary"),
    ]
    stamp = dt.datetime(2024, 1, 2, 3, 4, 5, 123456)
    zoned = stamp.replace(tzinfo=ZoneInfo("Europe/Paris"))
    table = to_arrow(description, [[stamp, zoned, b"abc"], [None, None, None]])
    assert table.column("t").to_pylist() == [stamp, None]
    assert table.column("z").to_pylist() == [zoned.astimezone(dt.UTC), None]
    assert table.column("b").to_pylist() == [b"abc", None]


def test_an_error_naming_the_first_split_to_fail_gets_a_stable_first_line() -> None:
    """Which old file's column Trino names depends on which split it read first."""
    message = (
        "Unsupported Trino column type (bigint) for Parquet column "
        "([region] optional binary region (STRING))"
    )
    text = error_message("NOT_SUPPORTED", message)
    first, rest = text.split("\n")
    assert first == (
        "NOT_SUPPORTED: Unsupported Trino column type for a column of an old Parquet file "
        "(Trino's message names the first that failed)"
    )
    assert rest == f"NOT_SUPPORTED: {message}"
    assert error_message("NOT_SUPPORTED", "versioned tables") == "NOT_SUPPORTED: versioned tables"


def test_an_attached_trino_without_the_pushdown_off_catalog_does_not_read_with_it(
    tmp_path: Path,
) -> None:
    from lakecompat.engines.trino.hudi import NO_PUSHDOWN, TrinoHudi
    from lakecompat.engines.trino.reader import AttachedTrino

    engine = TrinoEngine(RunContext(tmp_path, spark=None))  # type: ignore[arg-type]
    default = TrinoEngine.reading("hudi").variants[0]
    quiet = TrinoHudi.pushdown_off(default)
    assert quiet is not None and quiet.settings["catalog"] == NO_PUSHDOWN
    # lakecompat's own coordinator has the catalog (not started here: nothing to ask).
    assert engine.variant_unsupported(quiet) is None
    attached = AttachedTrino("http://127.0.0.1:1")
    attached.catalogs = {"hudi", "hive"}
    engine._server = attached
    reason = engine.variant_unsupported(quiet)
    assert reason is not None and NO_PUSHDOWN in reason and "parquet.ignore-statistics" in reason
    assert engine.variant_unsupported(default) is None
    attached.catalogs.add(NO_PUSHDOWN)
    assert engine.variant_unsupported(quiet) is None
