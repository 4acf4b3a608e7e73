"""The engines that read the writers' tables, one folder each, and their shared pieces. Engines are
registered by name here, in one place; nothing here imports the harness."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from lakecompat.engines.base import Engine

_REGISTRY = {
    "daft": "lakecompat.engines.library.daft:DaftEngine",
    "deltalake": "lakecompat.engines.library.deltalake:DeltaLakeEngine",
    "duckdb": "lakecompat.engines.library.duckdb:DuckDbEngine",
    "flink": "lakecompat.engines.flink.reader:FlinkEngine",
    "hive": "lakecompat.engines.hive.reader:HiveEngine",
    "hudi-rs": "lakecompat.engines.library.hudi_rs:HudiRsEngine",
    "polars": "lakecompat.engines.library.polars:PolarsEngine",
    "presto": "lakecompat.engines.presto.reader:PrestoEngine",
    "pyiceberg": "lakecompat.engines.library.pyiceberg:PyIcebergEngine",
    "spark": "lakecompat.engines.spark.reader:SparkEngine",
    "trino": "lakecompat.engines.trino.reader:TrinoEngine",
}


class UnknownEngineError(ValueError):
    """An engine name that is not registered."""


def known_engines() -> list[str]:
    return sorted(_REGISTRY)


def carriers() -> list[tuple[str, str]]:
    """(engine, format) for each table format whose jars an engine carries itself, which may
    be another release than the writer's (version skew): `Engine.carries`."""
    return [(name, fmt) for name in known_engines() for fmt in engine_class(name).carries]


def carried_field(engine: str, table_format: str) -> str:
    """The field that names the release of `table_format` that `engine` carries, in version
    points and run records: `hive_hudi`."""
    return f"{engine.replace('-', '_')}_{table_format}"


def carried_releases(named: Callable[[str], str | None]) -> dict[str, dict[str, str]]:
    """The format releases engines carry apart from the writer's, by engine and format, from
    `named(field)`: the release a source (a version point, a run record, the command line)
    gives each `carried_field` (None or "": none)."""
    found: dict[str, dict[str, str]] = {}
    for engine, table_format in carriers():
        release = named(carried_field(engine, table_format))
        if release:
            found.setdefault(engine, {})[table_format] = str(release)
    return found


def engine_class(name: str) -> type[Engine]:
    """The engine class registered as `name`; UnknownEngineError lists the known names."""
    try:
        module_name, class_name = _REGISTRY[name].split(":")
    except KeyError:
        known = ", ".join(known_engines())
        raise UnknownEngineError(f"unknown engine {name!r}; known engines: {known}") from None
    return getattr(importlib.import_module(module_name), class_name)


def image_services() -> dict[str, tuple[str, ...]]:
    """What `--image NAME=IMAGE` may name: each engine whose services a run starts (its
    `services`), and `metastore`; NAME → the names (or name prefixes) of those services."""
    from lakecompat.engines.metastore.service import METASTORE_SERVICE

    found = {name: engine_class(name).services for name in known_engines()}
    return {**{n: s for n, s in found.items() if s}, "metastore": (METASTORE_SERVICE,)}
