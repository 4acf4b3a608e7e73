"""The table format as an axis of the run: which engines read which format, the reads and keys
of a format's cells, known outcomes per format, the run's checks, and the code PyIceberg runs."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pytest
from support import SCENARIOS

from lakecompat.engines import engine_class
from lakecompat.engines.attached import Attachments
from lakecompat.engines.errors import QueryError
from lakecompat.engines.library.daft import DaftEngine
from lakecompat.engines.library.polars import PolarsEngine
from lakecompat.engines.library.pyiceberg import PyIcebergEngine
from lakecompat.engines.shape import ALL, Predicate, Shape
from lakecompat.engines.spark.iceberg import SparkIceberg
from lakecompat.engines.table import TableRef, iceberg_metadata, reference_time_ms
from lakecompat.engines.trino.reader import TrinoEngine
from lakecompat.harness.cli import main
from lakecompat.harness.report.junit import case_id
from lakecompat.harness.results.expectations import ExpectationError, Known, load_expectations
from lakecompat.harness.results.outcomes import Cell, Outcome
from lakecompat.harness.run.command import tables_line
from lakecompat.harness.run.options import RunOptions, default_engines
from lakecompat.harness.run.plan import check_formats, select_scenarios
from lakecompat.harness.run.reads import table_reads
from lakecompat.harness.scenario.load import load_scenarios
from lakecompat.harness.scenario.model import Scenario
from lakecompat.harness.scenario.shapes import SHAPES


def scenario(name: str) -> Scenario:
    return next(s for s in load_scenarios(SCENARIOS) if s.id == name)


def cell(**given: object) -> Cell:
    fields: dict[str, object] = {
        "scenario": "rename_column/rename",
        "category": "rename_column",
        "title": "t",
        "table_type": "mor",
        "query_type": "snapshot",
        "engine": "spark",
        "engine_version": "3.5.9",
        "variant": "default",
        "settings": {},
        "writer": {"spark": "3.5.9", "iceberg": "1.10.0"},
        "outcome": Outcome.WRONG,
        "format": "iceberg",
    }
    fields.update(given)
    return Cell(**fields)  # type: ignore[arg-type]


def test_each_engine_reads_the_formats_it_declares() -> None:
    assert engine_class("spark").formats == ("hudi", "iceberg", "delta")
    assert engine_class("deltalake").formats == ("delta",)
    assert engine_class("polars").formats == ("iceberg", "delta")
    assert engine_class("pyiceberg").formats == ("iceberg",)
    assert engine_class("hive").formats == ("hudi",)
    assert default_engines(("hudi",)) == ("spark", "hive", "trino", "hudi-rs", "daft")
    assert default_engines(("iceberg",)) == ("spark", "trino", "pyiceberg", "daft", "polars")
    assert default_engines(("hudi", "iceberg"))[-2:] == ("pyiceberg", "polars")


def test_a_run_writes_every_format_one_of_its_engines_reads_unless_told() -> None:
    assert RunOptions().formats == ("hudi", "iceberg", "delta")
    assert RunOptions().engines == default_engines(("hudi", "iceberg", "delta"))
    assert RunOptions(engines=("hive", "hudi-rs")).formats == ("hudi",)
    assert RunOptions(engines=("polars",)).formats == ("iceberg", "delta")
    assert RunOptions(engines=("pyiceberg",)).formats == ("iceberg",)
    assert RunOptions(engines=("duckdb",)).formats == ("delta",)
    assert RunOptions(engines=("hive", "polars")).formats == ("hudi", "iceberg", "delta")
    assert RunOptions(engines=("spark",), formats=("hudi",)).formats == ("hudi",)
    attached = Attachments(trino="http://127.0.0.1:8080")
    assert RunOptions(attachments=attached).formats == ("hudi",)


def test_an_iceberg_table_is_read_with_its_own_query_types_and_variants() -> None:
    spark, rename = engine_class("spark"), scenario("rename_column/rename")
    hudi = table_reads(spark, rename, "mor", SHAPES)
    iceberg = table_reads(spark, rename, "mor", SHAPES, table_format="iceberg")
    assert {r.query_type for r in hudi if r.shape == ALL} == {
        "snapshot",
        "read_optimized",
        "incremental",
        "time_travel",
    }
    assert {r.query_type for r in iceberg if r.shape == ALL} == {
        "snapshot",
        "incremental",
        "time_travel",
        "time_travel_timestamp",
        "changelog",
    }
    assert {r.variant.name for r in iceberg} == {"default"}  # no hoodie.* variants
    # Hudi's pushdown settings are not Iceberg's: no `+pushdown_off` read of an Iceberg table.
    assert not [r for r in iceberg if "pushdown" in r.variant.name]
    assert [r for r in hudi if "pushdown" in r.variant.name]
    # An engine that does not read the format has no reads of its tables.
    assert table_reads(engine_class("hive"), rename, "cow", SHAPES, table_format="iceberg") == []
    assert table_reads(engine_class("pyiceberg"), rename, "cow", SHAPES) == []
    read = iceberg[0]
    assert read.key("spark", "mor", rename.id, "iceberg")[-1] == "iceberg"


def test_a_cell_s_format_is_part_of_its_key_and_its_id() -> None:
    iceberg, hudi = cell(), cell(format="hudi", writer={"hudi": "1.2.0"})
    assert iceberg.key != hudi.key
    assert case_id(hudi) == "spark.mor.snapshot.rename_column/rename[default]"
    assert case_id(iceberg) == "spark.iceberg.mor.snapshot.rename_column/rename[default]"
    # A results file from before formats existed holds Hudi cells.
    old = cell().to_dict()
    del old["format"]
    assert Cell.from_dict(old).format == "hudi"


def test_a_known_outcome_speaks_for_hudi_cells_unless_it_names_another_format() -> None:
    entry = Known(engine="spark", scenario="rename_column/*", outcome=Outcome.WRONG, reason="r")
    assert entry.matches(cell(format="hudi", writer={"hudi": "1.2.0"}))
    assert not entry.matches(cell())
    named = Known(
        engine="spark",
        format="iceberg",
        scenario="rename_column/*",
        outcome=Outcome.WRONG,
        reason="r",
    )
    assert named.matches(cell())
    assert not named.matches(cell(format="hudi"))
    either = Known(engine="*", format="*", scenario="*", outcome=Outcome.WRONG, reason="r")
    assert either.matches(cell()) and either.matches(cell(format="hudi"))


def test_an_unknown_format_in_a_known_outcome_names_the_file_and_field(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text(
        "known:\n- engine: spark\n  format: paimon\n  scenario: '*'\n"
        "  outcome: WRONG\n  reason: r\n"
    )
    with pytest.raises(ExpectationError) as caught:
        load_expectations(tmp_path)
    message = str(caught.value)
    assert "x.yaml" in message and "known[0].format" in message
    assert "unknown table format 'paimon'" in message


def test_a_run_refuses_an_engine_that_reads_none_of_its_formats() -> None:
    with pytest.raises(ValueError, match="--engines names hive, which reads hudi tables"):
        check_formats(RunOptions(engines=("spark", "hive"), formats=("iceberg",)))
    with pytest.raises(ValueError, match="--engines names pyiceberg, which reads iceberg"):
        check_formats(RunOptions(engines=("pyiceberg",), formats=("hudi",)))
    check_formats(RunOptions(engines=("spark", "pyiceberg"), formats=("hudi", "iceberg")))
    with pytest.raises(ValueError, match="--formats names iceberg, whose tables none of the"):
        check_formats(RunOptions(engines=("hive",), formats=("hudi", "iceberg")))


@pytest.mark.parametrize(
    ("formats", "message"),
    [("paimon", "unknown table format 'paimon' in --formats"), ("", "no table format")],
)
def test_an_unknown_format_is_refused_before_anything_starts(
    formats: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    assert main(["run", "--formats", formats, "--reports", str(reports)]) == 2
    assert message in capsys.readouterr().err
    assert not reports.exists()


def write_metadata(table: Path, version: int) -> None:
    (table / "metadata").mkdir(parents=True)
    (table / "metadata" / "version-hint.text").write_text(f"{version}\n")
    (table / "metadata" / f"v{version}.metadata.json").write_text(json.dumps({}))


def test_pyiceberg_reads_the_current_metadata_file_and_the_reference_snapshot(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tables" / "t"
    write_metadata(path, 3)
    assert iceberg_metadata(path) == path / "metadata" / "v3.metadata.json"
    table = TableRef("t", path, "mor", "id", "iceberg", reference_instant=("000002", "4711"))
    engine = PyIcebergEngine.__new__(PyIcebergEngine)
    snapshot = engine.shaped_sql(table, "snapshot", ALL)
    assert f"StaticTable.from_metadata({str(path / 'metadata' / 'v3.metadata.json')!r})" in (
        snapshot
    )
    assert "answer = table.scan().to_arrow()" in snapshot
    assert "table.scan(snapshot_id=4711).to_arrow()" in engine.shaped_sql(table, "time_travel", ALL)


def test_iceberg_readers_spell_incremental_reads_and_time_travel_by_timestamp(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tables" / "t"
    write_metadata(path, 2)
    metadata = repr(str(path / "metadata" / "v2.metadata.json"))
    table = TableRef(
        "t",
        path,
        "cow",
        "id",
        "iceberg",
        reference_instant=("000001", "4711"),
        reference_time="2026-11-18 11:06:40.500",
        appended=(2,),
    )
    assert reference_time_ms(table) == 1_795_000_000_500
    pyiceberg = PyIcebergEngine.__new__(PyIcebergEngine)
    code = pyiceberg.shaped_sql(table, "incremental", ALL)
    assert "table.incremental_append_scan(from_snapshot_id_exclusive=4711).to_arrow()" in code
    code = pyiceberg.shaped_sql(table, "time_travel_timestamp", ALL)
    assert "as_of = table.snapshot_as_of_timestamp(1795000000500)" in code
    assert "table.scan(snapshot_id=as_of.snapshot_id).to_arrow()" in code
    polars = PolarsEngine.__new__(PolarsEngine)
    assert f"pl.scan_iceberg({metadata}, from_snapshot_id_exclusive=4711)" in (
        polars.shaped_sql(table, "incremental", ALL)
    )
    spark = SparkIceberg.read_sql(table, "incremental")
    assert "USING iceberg OPTIONS ('path' '" in spark and "'start-snapshot-id' '4711'" in spark
    assert spark.endswith("SELECT * FROM `t_incremental`")
    assert SparkIceberg.read_sql(table, "time_travel_timestamp").endswith(
        "TIMESTAMP AS OF '2026-11-18 11:06:40.500'"
    )
    # What an engine lacks is said per format, with the reason a user can act on.
    assert not PolarsEngine.supports("cow", "time_travel_timestamp", "iceberg")
    assert "by its id only" in PolarsEngine.unsupported_reason(
        "cow", "time_travel_timestamp", "iceberg"
    )
    assert not TrinoEngine.supports("mor", "incremental", "iceberg")
    assert "no incremental read" in TrinoEngine.unsupported_reason("mor", "incremental", "iceberg")
    assert TrinoEngine.unsupported_reason("mor", "incremental", "hudi").startswith(
        "Trino's Hudi connector"
    )
    assert "by its id only" in DaftEngine.unsupported_reason(
        "cow", "time_travel_timestamp", "iceberg"
    )
    without = TableRef("t", path, "cow", "id", "iceberg")
    with pytest.raises(QueryError, match="no commit time of the reference snapshot"):
        pyiceberg.shaped_sql(without, "time_travel_timestamp", ALL)


def test_a_changelog_read_goes_from_the_reference_snapshot_to_the_current_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "warehouse" / "tables" / "t"
    write_metadata(path, 3)
    (path / "metadata" / "v3.metadata.json").write_text(json.dumps({"current-snapshot-id": 99}))
    table = TableRef("t", path, "mor", "id", "iceberg", reference_instant=("000001", "4711"))
    spark = SparkIceberg.read_sql(table, "changelog")
    assert ".system.create_changelog_view(table => 'tables.t', options => " in spark
    assert "map('start-snapshot-id', '4711'), changelog_view => 't_changes');" in spark
    assert spark.endswith("SELECT * FROM `t_changes`")
    trino = TrinoEngine.__new__(TrinoEngine)
    trino.context = type("Context", (), {"database": "default"})()
    sql = trino.read_sql(table, "changelog")
    assert sql == (
        "SELECT * FROM TABLE(iceberg.system.table_changes(schema_name => 'default_iceberg', "
        "table_name => 't', start_snapshot_id => 4711, end_snapshot_id => 99))"
    )
    (path / "metadata" / "v3.metadata.json").write_text(json.dumps({"current-snapshot-id": -1}))
    with pytest.raises(QueryError, match="has no current snapshot"):
        trino.read_sql(table, "changelog")
    for lacking in (PyIcebergEngine, PolarsEngine, DaftEngine):
        assert not lacking.supports("cow", "changelog", "iceberg")
        assert "no changelog read" in lacking.unsupported_reason("cow", "changelog", "iceberg")


def test_pyiceberg_gives_a_shape_to_its_scan(tmp_path: Path) -> None:
    path = tmp_path / "tables" / "t"
    write_metadata(path, 1)
    table = TableRef("t", path, "cow", "id", "iceberg")
    engine = PyIcebergEngine.__new__(PyIcebergEngine)
    day = dt.date(2024, 1, 2)
    on_day = Shape("filter", predicate=Predicate("d", "date", "=", (day,)))
    code = engine.shaped_sql(table, "snapshot", on_day)
    assert "import datetime\nfrom pyiceberg.expressions import EqualTo\n" in code
    assert "table.scan(row_filter=EqualTo('d', datetime.date(2024, 1, 2))).to_arrow()" in code
    cheap = Decimal("1.50")
    between = Shape(
        "range", ("id", "p"), Predicate("p", "decimal(10,2)", "between", (cheap, cheap))
    )
    code = engine.shaped_sql(table, "snapshot", between)
    assert "from decimal import Decimal" in code
    assert (
        "row_filter=And(GreaterThanOrEqual('p', Decimal('1.50')), "
        "LessThanOrEqual('p', Decimal('1.50'))), selected_fields=('id', 'p')"
    ) in code
    count = engine.shaped_sql(
        table, "snapshot", Shape("count", predicate=Predicate("c", "string", "is null"))
    )
    assert "row_filter=IsNull('c')" in count
    assert "answer = pa.table({'count': pa.array([answer.num_rows], pa.int64())})" in count


def test_polars_and_daft_scan_the_current_metadata_file_with_the_shape(tmp_path: Path) -> None:
    path = tmp_path / "tables" / "t"
    write_metadata(path, 2)
    metadata = repr(str(path / "metadata" / "v2.metadata.json"))
    table = TableRef("t", path, "cow", "id", "iceberg", reference_instant=("000001", "99"))
    polars = PolarsEngine.__new__(PolarsEngine)
    daft = DaftEngine.__new__(DaftEngine)
    assert f"scan = pl.scan_iceberg({metadata}, snapshot_id=99)" in polars.shaped_sql(
        table, "time_travel", ALL
    )
    assert f"daft.read_iceberg({metadata}, snapshot_id=99)" in daft.shaped_sql(
        table, "time_travel", ALL
    )
    day = dt.date(2024, 1, 2)
    nested = Shape("range", ("id", "p"), Predicate("p.x", "date", "between", (day, day)))
    code = polars.shaped_sql(table, "snapshot", nested)
    assert code.startswith("import datetime\nimport polars as pl\n")
    within = "pl.col('p').struct.field('x').is_between(datetime.date(2024, 1, 2), "
    assert f"scan = scan.filter({within}datetime.date(2024, 1, 2)))" in code
    assert "scan = scan.select('id', 'p')" in code
    counted = Shape("count", predicate=Predicate("c", "string", "is null"))
    code = polars.shaped_sql(table, "snapshot", counted)
    assert "scan = scan.filter(pl.col('c').is_null())" in code
    assert "scan.select(pl.len().cast(pl.Int64).alias('count'))" in code
    three = Shape("filter", predicate=Predicate("n", "int", "=", (3,)))
    code = daft.shaped_sql(table, "snapshot", three)
    assert f"df = daft.read_iceberg({metadata})\ndf = df.where(daft.col('n') == 3)" in code


def test_pyiceberg_has_no_such_table_without_metadata(tmp_path: Path) -> None:
    table = TableRef("t", tmp_path / "t", "cow", "id", "iceberg")
    engine = PyIcebergEngine.__new__(PyIcebergEngine)
    with pytest.raises(Exception, match="no Iceberg metadata found"):
        engine.shaped_sql(table, "snapshot", ALL)


def test_the_tables_line_counts_each_format_s_tables() -> None:
    cells = [
        cell(format="hudi", table_from="written"),
        cell(format="hudi", table_from="written", engine="hive"),
        cell(table_from="cache"),
    ]
    assert tables_line(cells) == (
        "tables: 1 of 2 read from the table cache, 1 written (--no-table-cache writes every one)"
    )
    assert tables_line(cells[:2]) == ""


def test_a_choice_of_scenarios_with_no_table_in_the_run_s_formats_is_refused(
    tmp_path: Path,
) -> None:
    reports = tmp_path / "r"
    chosen = ["run", "--scenarios", "keys_partitions/partition_evolution_*", "--engines", "hive"]
    assert main([*chosen, "--reports", str(reports)]) == 2
    assert not reports.exists()  # refused before a run folder is made
    options = RunOptions(
        scenarios_dir=SCENARIOS, pattern="keys_partitions/partition_evolution_*", formats=("hudi",)
    )
    with pytest.raises(ValueError, match="Iceberg's partition evolution"):
        select_scenarios(options)
    both = RunOptions(scenarios_dir=SCENARIOS, pattern="keys_partitions/partition_evolution_*")
    assert [s.id for s in select_scenarios(both) if not s.spec.baseline] == [
        "keys_partitions/partition_evolution_add_field",
        "keys_partitions/partition_evolution_replace_field",
    ]


def test_sparks_filter_controls_each_turn_one_path_off() -> None:
    """Spark's filter is read under two controls, Parquet filter pushdown off and Hudi's data
    skipping off, each alone, so that the one that reads right names the path that lost the
    rows; Trino and Hive have one control (pushdown off)."""
    rename = scenario("rename_column/rename")
    spark = [
        r for r in table_reads(engine_class("spark"), rename, "cow") if r.shape.name == "filter"
    ]
    default = "schema_on_read_off"
    assert {r.variant.name: r.variant.settings for r in spark} == {
        default: {"hoodie.schema.on.read.enable": "false"},
        "schema_on_read": {"hoodie.schema.on.read.enable": "true"},  # a matching variant
        "schema_on_read+pushdown_off": {
            "hoodie.schema.on.read.enable": "true",
            "spark.sql.parquet.filterPushdown": "false",
        },
        "schema_on_read+data_skipping_off": {
            "hoodie.schema.on.read.enable": "true",
            "hoodie.enable.data.skipping": "false",
        },
        f"{default}+pushdown_off": {
            "hoodie.schema.on.read.enable": "false",
            "spark.sql.parquet.filterPushdown": "false",
        },
        f"{default}+data_skipping_off": {
            "hoodie.schema.on.read.enable": "false",
            "hoodie.enable.data.skipping": "false",
        },
    }
    for name in ("trino", "hive"):
        reads = table_reads(engine_class(name), rename, "cow")
        controls = [
            r for r in reads if r.shape.name == "filter" and "pushdown_off" in r.variant.name
        ]
        # One for the default variant, one for each that matches columns otherwise.
        assert len(controls) == 1 + len(engine_class(name).reading("hudi").matching_variants), name


@pytest.mark.parametrize("name", ["spark", "trino", "hive"])
def test_filters_and_projections_are_read_in_every_variant_that_matches_columns_otherwise(
    name: str,
) -> None:
    """Where a variant changes how old files' columns are matched to the table's (Trino by
    position, Spark with Hudi's schema on read, Hive through Hudi 0.x's reader or with schema
    on read), the query shapes are read under it too, not only under the default (Hive:
    filters only, see lakecompat/engines/hive/reader.py); on the formats whose reading has
    such variants (Hudi's here), and not when the run reads the default variant alone."""
    engine = engine_class(name)
    hudi = engine.reading("hudi")
    names = [v.name for v in hudi.variants]
    assert hudi.matching_variants and set(hudi.matching_variants) <= set(names)
    rename = scenario("rename_column/rename")
    reads = table_reads(engine, rename, "cow")
    for shape in ("filter", "project"):
        shaped = {r.variant.name for r in reads if r.shape.name == shape}
        if hudi.matching_shapes is None or shape in hudi.matching_shapes:
            assert set(hudi.matching_variants) | {hudi.default_variant_name()} <= shaped
        else:
            assert shaped == {hudi.default_variant_name()}
    # A filter under each of them is read with its controls too (pushdown off, ...).
    for name in hudi.matching_variants:
        variant = next(v for v in hudi.variants if v.name == name)
        controls = {c.name for c in hudi.filter_controls(variant)}
        assert controls and controls <= {r.variant.name for r in reads if r.shape.name == "filter"}
    alone = table_reads(engine, rename, "cow", variants="default")
    assert {r.variant.name for r in alone if r.shape.name != "all"}.isdisjoint(
        hudi.matching_variants
    )
    if "iceberg" in engine.formats:
        iceberg = table_reads(engine, rename, "cow", table_format="iceberg")
        assert {r.variant.name for r in iceberg} == {"default"}
