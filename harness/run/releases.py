"""The releases a run writes and reads with: whether each exists (asked before anything is
fetched), and, where an environment variable selects them (each engine's `Engine.release_env`,
Iceberg's Spark runtime), what `run.json` recorded and how to put them back in force, so that
the cells a resumed run adds come from the same engines as the rest."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from engines import engine_class, known_engines
from engines.infra.artifacts import check_release
from engines.infra.hudi_jars import (
    HUDI_VERSION_ENV,
    check_hudi_release,
    check_table_version,
    hudi_version,
)
from engines.infra.iceberg_jars import (
    ICEBERG_VERSION_ENV,
    check_format_version,
    iceberg_spark_runtime,
    iceberg_version,
)
from harness.run.folder import run_attachments
from harness.run.options import RunOptions


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


def check_releases(options: RunOptions, named: Mapping[str, str] | None = None) -> None:
    """Every release the run names exists, before any engine starts or any run folder is made:
    a `ProvisioningError` of one sentence naming the option (or variable) and the releases.

    `named`: how a release was chosen where it was not by `run`'s options or a variable, by
    field (a version point's: `{"hudi": "version point new: hudi 9.9.9"}`); the fields are a
    version point's (`hudi`, `table_version`, `<engine>_hudi`, `iceberg`, `format_version`,
    an engine's name with `_` for `-`)."""
    said = dict(named or {})
    writer = options.hudi_version or os.environ.get(HUDI_VERSION_ENV)
    if writer:
        given = (
            f"--hudi-version {writer}" if options.hudi_version else f"{HUDI_VERSION_ENV}={writer}"
        )
        check_hudi_release(writer, said.get("hudi", given))
    for name, release in options.reader_hudi_versions.items():
        given = f"--{name}-hudi-version {release}"
        check_hudi_release(release, said.get(f"{name.replace('-', '_')}_hudi", given))
    if options.table_version:
        given = f"--table-version {options.table_version}"
        check_table_version(
            writer or hudi_version(), options.table_version, said.get("table_version", given)
        )
    if options.format_version:
        given = f"--format-version {options.format_version}"
        check_format_version(options.format_version, said.get("format_version", given))
    iceberg = os.environ.get(ICEBERG_VERSION_ENV)
    if iceberg and "iceberg" in options.formats:
        given = said.get("iceberg", f"{ICEBERG_VERSION_ENV}={iceberg}")
        check_release(iceberg_spark_runtime(iceberg), given, "Iceberg")
    for name in options.engines:
        cls = engine_class(name)
        chosen = os.environ.get(cls.release_env) if cls.release_env else None
        if chosen:
            cls.check_release(
                chosen, said.get(name.replace("-", "_"), f"{cls.release_env}={chosen}")
            )
