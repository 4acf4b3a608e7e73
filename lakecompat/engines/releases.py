"""The releases one run writes and reads with, as one value (`Releases`).

A run's releases are chosen once, before it starts: from its options (`--hudi-version`,
`--hive-hudi-version`), a version point's fields, the record of the run it resumes, or the
environment variables that name them (`TableFormat.release_env`, `Engine.release_env`), in
that order; what none of them names is its default. The value is then handed to everything
that needs a release: the writers, the engines (through the run's `RunContext`) and their
provisioning. Nothing reads a release from the environment after that.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from lakecompat.engines.formats import format_named


@dataclass(frozen=True)
class Releases:
    """The releases of one run: of each table format's library the writer writes with, of
    each engine whose release can be chosen, and of the format jars an engine carries where
    they are not the writer's (version skew). Whatever is left out is its default."""

    #: The release of each table format's library the writer writes with (and the readers
    #: that load the format's jars read with, unless `carried` says otherwise), by format:
    #: `{"hudi": "1.2.0", "iceberg": "1.10.0"}`.
    formats: Mapping[str, str] = field(default_factory=dict)
    #: The release of each engine whose release can be chosen (`Engine.release_env`), by
    #: engine name: `{"trino": "476"}`.
    engines: Mapping[str, str] = field(default_factory=dict)
    #: The format releases an engine reads with where it carries the format's jars itself and
    #: they are not the writer's, by engine and format: `{"hive": {"hudi": "0.15.0"}}`.
    carried: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def format(self, name: str) -> str:
        """The release of format `name`'s library the writer writes with."""
        return self.formats.get(name) or format_named(name).default_release

    def engine(self, name: str, default: str) -> str:
        """Engine `name`'s release: the chosen one, else `default` (the engine's own)."""
        return self.engines.get(name) or default

    def carried_by(self, engine: str) -> dict[str, str]:
        """The format releases `engine` carries apart from the writer's, by format."""
        return {
            fmt: release
            for fmt, release in dict(self.carried.get(engine) or {}).items()
            if release and release != self.format(fmt)
        }

    def reads_with(self, engine: str, table_format: str) -> str:
        """The release of `table_format`'s library `engine` reads with: the one it carries
        apart from the writer's, else the writer's."""
        return self.carried_by(engine).get(table_format) or self.format(table_format)

    def over(self, other: Releases) -> Releases:
        """These releases, and `other`'s where these name none."""
        carried = {
            name: {**dict(other.carried.get(name) or {}), **dict(self.carried.get(name) or {})}
            for name in {*other.carried, *self.carried}
        }
        return Releases(
            {**other.formats, **self.formats}, {**other.engines, **self.engines}, carried
        )

    def given(self) -> dict[str, str]:
        """Every release named here as `field: release` (a version point's fields: `hudi`,
        `trino`, `hive_hudi`), for messages."""
        named = {**self.formats, **{n.replace("-", "_"): r for n, r in self.engines.items()}}
        for engine, formats in self.carried.items():
            for fmt, release in formats.items():
                named[f"{engine.replace('-', '_')}_{fmt}"] = release
        return named
