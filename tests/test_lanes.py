"""Lanes: a large run reads an engine's variants in several instances of it at once."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from lakecompat.engines.attached import Attachments
from lakecompat.engines.hive.reader import HiveEngine
from lakecompat.engines.releases import Releases
from lakecompat.engines.table import TableRef
from lakecompat.harness.run.fleet import EngineState, Fleet
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.outlets import plan_engines, plan_lanes
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.writer.base import WriteResult

HIVE_VARIANTS = tuple(v.name for v in HiveEngine.reading("hudi").variants)


def test_hive_is_split_into_two_lanes_that_read_about_half_the_variants_each() -> None:
    specs, routes = plan_engines([RunOptions(engines=("spark", "hive", "trino"))])
    specs, routes = plan_lanes(specs, routes, True, Attachments())
    assert (
        [(s.label, s.variants, s.lane_of, s.apart) for s in specs]
        == [
            ("spark", None, None, True),  # a Spark of its own, beside the writer
            # five variants: three in the first lane, two in the second
            ("hive", HIVE_VARIANTS[:3], None, False),
            ("hive-lane2", HIVE_VARIANTS[3:], "hive", False),
            ("trino", None, None, False),
        ]
    )
    assert routes == [[0, 1, 2, 3]]


def test_without_lanes_or_with_an_attached_hiveserver2_hive_keeps_one_instance() -> None:
    planned = plan_engines([RunOptions(engines=("hive", "trino"))])
    assert plan_lanes(*planned, False, Attachments()) == planned
    attached = Attachments(hiveserver2="127.0.0.1:10000", metastore="thrift://127.0.0.1:9083")
    assert plan_lanes(*planned, True, attached) == planned


def test_spark_reads_in_the_writers_session_without_lanes_or_on_an_attached_cluster() -> None:
    planned = plan_engines([RunOptions(engines=("spark", "trino"))])
    assert plan_lanes(*planned, False, Attachments()) == planned
    cluster = Attachments(spark_master="spark://127.0.0.1:7077")
    assert plan_lanes(*planned, True, cluster) == planned


def test_each_point_of_a_shared_run_reads_with_both_lanes_of_its_hive() -> None:
    current = RunOptions(engines=("hive", "trino"))
    lagging = RunOptions(
        engines=current.engines, releases=Releases(carried={"hive": {"hudi": "0.15.0"}})
    )
    specs, routes = plan_lanes(*plan_engines([current, lagging]), True, Attachments())
    assert [(s.label, s.lane_of) for s in specs] == [
        ("hive", None),
        ("hive-lane2", "hive"),
        ("hive-hudi-0.15.0", None),
        ("hive-hudi-0.15.0-lane2", "hive-hudi-0.15.0"),
        ("trino", None),
    ]
    assert routes == [[0, 1, 4], [2, 3, 4]]


@dataclass
class Recorder:
    """Stands in for an engine: records the tables it is asked to register."""

    name: str
    fails: str | None = None
    lane_of: Recorder | None = None
    registered: list[str] = field(default_factory=list)

    def register(self, table: TableRef) -> None:
        self.registered.append(table.name)
        if self.fails:
            raise RuntimeError(self.fails)

    def alive(self) -> bool:
        return True

    def kill(self) -> None:
        raise AssertionError("nothing here runs long enough to be killed")


def _written() -> WriteResult:
    return WriteResult(
        table=TableRef(name="t_x", path=Path("/nowhere"), table_type="cow", key="id")
    )


def test_a_further_lane_reads_the_first_lanes_registration_and_shares_its_error() -> None:
    fleet = Fleet(Progress(quiet=True), 300, threading.Event())
    first = Recorder("hive", fails="no such database")
    second = Recorder("hive", lane_of=first)
    other = Recorder("trino")
    states = [EngineState(first), EngineState(second), EngineState(other)]  # type: ignore[arg-type]
    registered = fleet.register_each(states, _written())
    assert first.registered == ["t_x"] and second.registered == [] and other.registered == ["t_x"]
    errors = [error for _, error in registered]
    assert errors[0] == errors[1] and "no such database" in (errors[0] or "")
    assert errors[2] is None
    # A first lane that has failed reads nothing: the further lane registers for itself.
    states[0].failure = "could not start"
    fleet.register_each(states, _written())
    assert second.registered == ["t_x"]


def test_a_run_of_default_variants_reads_each_engine_once_per_query() -> None:
    """`--variants default`: one variant per engine, so Hive needs no second lane, and every
    part of the run that counts a table's cells (plan, resume, merge) counts the same reads."""
    from dataclasses import replace

    from lakecompat.engines.formats.hudi import HUDI
    from lakecompat.engines.shape import base_variant
    from lakecompat.engines.spark.reader import SparkEngine
    from lakecompat.harness.run.reads import table_reads
    from lakecompat.harness.scenario.load import load_scenario

    specs, routes = plan_engines([RunOptions(engines=("hive",))])
    default = HiveEngine.default_variant_name("hudi")
    only = [replace(s, variants=(default,)) for s in specs]
    assert plan_lanes(only, routes, True, Attachments()) == (only, routes)
    scenario = load_scenario(Path("scenarios/type_change/float_to_double.yaml"), Path("scenarios"))
    every = table_reads(SparkEngine, scenario, "cow")
    reads = table_reads(SparkEngine, scenario, "cow", variants="default")
    plain = [r for r in reads if r.shape.name == "all"]
    default = SparkEngine.default_variant_name("hudi")
    assert [(r.query_type, r.variant.name) for r in plain] == [
        (query_type, default) for query_type in HUDI.query_types["cow"]
    ]
    assert len(SparkEngine.reading("hudi").variants) > 1 and len(every) > len(reads)
    # The shaped reads are those under the default variant and its controls, without those
    # under the variants that match columns otherwise (`Reading.matching_variants`).
    assert [r for r in reads if r.shape.name != "all"] == [
        r
        for r in every
        if r.shape.name != "all"
        and base_variant(r.variant.name) not in SparkEngine.reading("hudi").matching_variants
    ]


def test_an_engines_lanes_read_together_every_read_the_engine_reads_alone(tmp_path: Path) -> None:
    """Split into lanes, Hive reads what one Hive reads: the shapes under the variants that
    match columns otherwise too, in the lane that has them without the default variant."""
    from lakecompat.engines.context import RunContext
    from lakecompat.harness.run.reads import table_reads
    from lakecompat.harness.scenario.load import load_scenarios

    specs, _ = plan_lanes(*plan_engines([RunOptions(engines=("hive",))]), True, Attachments())
    context = RunContext(tmp_path, spark=None)  # type: ignore[arg-type]
    lanes = []
    for spec in specs:
        engine = spec.cls(context, dict(spec.carried), spec.label)
        engine.narrow(spec.variants or ())
        lanes.append(engine)
    assert len(lanes) == 2
    assert "schema_on_read" not in [v.name for v in lanes[0].variants_of("hudi")]

    def key(read: object) -> tuple[str, str, str]:
        return (read.query_type, read.variant.name, read.shape.name)  # type: ignore[attr-defined]

    scenarios = load_scenarios(
        Path("scenarios"), "add_column/table_with_timestamps,rename_column/*"
    )
    for scenario in scenarios:
        for table_type in ("cow", "mor"):
            alone = sorted(map(key, table_reads(HiveEngine, scenario, table_type)))
            split = sorted(key(r) for e in lanes for r in table_reads(e, scenario, table_type))
            assert split == alone, scenario.id
    shaped = [key(r) for r in table_reads(lanes[1], scenarios[0], "cow") if r.shape.name != "all"]
    assert ("snapshot", "schema_on_read", "filter") in shaped
