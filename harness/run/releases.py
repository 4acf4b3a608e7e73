"""The releases a run reads with where an environment variable selects them (each engine's
`Engine.release_env`, Iceberg's Spark runtime): what `run.json` recorded, and how to put them
back in force, so that the cells a resumed run adds come from the same engines as the rest."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from engines import engine_class, known_engines
from engines.infra.iceberg_jars import ICEBERG_VERSION_ENV, iceberg_version
from harness.run.folder import run_attachments


def recorded_releases(info: Mapping[str, Any]) -> dict[str, str]:
    """Variable → release for what the run in `info` (its `run.json`) started with: each
    engine lakecompat started whose release a variable selects, and the Iceberg runtime of
    its Iceberg writer. An engine the run attached to is left out: its service says its own."""
    attachments, _ = run_attachments(dict(info))
    found: dict[str, str] = {}
    for name, release in dict(info.get("engines") or {}).items():
        if name not in known_engines() or attachments.attaches(name) or not release:
            continue
        variable = engine_class(name).release_env
        if variable:
            found[variable] = str(release)
    iceberg = dict(dict(info.get("writers") or {}).get("iceberg") or {}).get("iceberg")
    if iceberg:
        found[ICEBERG_VERSION_ENV] = str(iceberg)
    return found


def differences(releases: Mapping[str, str]) -> list[str]:
    """`VARIABLE=release (here: other)` for each recorded release that differs from what this
    shell's environment selects, for the user to see which releases a resume puts back."""
    engines = map(engine_class, known_engines())
    now = {cls.release_env: cls.release() for cls in engines if cls.release_env}
    now[ICEBERG_VERSION_ENV] = iceberg_version()
    return [
        f"{variable}={release} (here: {now.get(variable) or 'unset'})"
        for variable, release in releases.items()
        if now.get(variable) != release
    ]


@contextmanager
def in_force(variables: Mapping[str, str]) -> Iterator[None]:
    """Run the block with `variables` set in the environment, then restore what was there."""
    saved = {key: os.environ.get(key) for key in variables}
    try:
        os.environ.update(variables)
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
