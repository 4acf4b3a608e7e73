"""Query engines and their provisioning. Engines are registered by name here, in one place."""

from __future__ import annotations

import importlib

from engines.base import Engine

_REGISTRY = {
    "daft": "engines.daft:DaftEngine",
    "flink": "engines.flink:FlinkEngine",
    "hive": "engines.hive:HiveEngine",
    "hudi-rs": "engines.hudi_rs:HudiRsEngine",
    "spark": "engines.spark:SparkEngine",
    "trino": "engines.trino:TrinoEngine",
}


class UnknownEngineError(ValueError):
    """An engine name that is not registered."""


def known_engines() -> list[str]:
    return sorted(_REGISTRY)


def engine_class(name: str) -> type[Engine]:
    """The engine class registered as `name`; UnknownEngineError lists the known names."""
    try:
        module_name, class_name = _REGISTRY[name].split(":")
    except KeyError:
        known = ", ".join(known_engines())
        raise UnknownEngineError(f"unknown engine {name!r}; known engines: {known}") from None
    return getattr(importlib.import_module(module_name), class_name)
