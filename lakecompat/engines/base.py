"""The engine contract: what every reader implements, and the shared run context."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa

from lakecompat.engines.context import RunContext
from lakecompat.engines.errors import QueryError, log_tail
from lakecompat.engines.infra.artifacts import MavenArtifact, check_release
from lakecompat.engines.infra.containers.service import where_services_ran
from lakecompat.engines.reading import Reading, Variant
from lakecompat.engines.releases import Releases
from lakecompat.engines.settings import SettingsScope
from lakecompat.engines.shape import ALL, Dialect, Shape, shape_sql
from lakecompat.engines.table import TableRef

__all__ = ["Engine", "MetastoreReader", "Reading", "Variant"]


class Engine(ABC):
    """A query engine that reads the writer's tables; subclasses override only what differs."""

    #: Registry name, also the engine column of every cell.
    name: ClassVar[str]
    #: How the engine reads each table format it reads (`engines.reading.Reading`): its
    #: query types, variants and filter controls there. A run reads a table only with the
    #: engines that read its format.
    readings: ClassVar[tuple[type[Reading], ...]]
    #: The formats of `readings`, in their order (set from them).
    formats: ClassVar[tuple[str, ...]] = ()
    #: Whether answers list partition columns after the data columns (the Hive table layout).
    partition_columns_last: ClassVar[bool] = False
    #: The engine's name as its project spells it, for bug reports ("": `name`).
    display_name: ClassVar[str] = ""
    #: The GitHub repositories (owner/name) where the engine's own defects are filed; a known
    #: outcome of the engine links an issue there, or one of the table format's.
    trackers: ClassVar[tuple[str, ...]] = ()
    #: How the engine's SQL quotes names and spells literals, which shaped reads (a projection,
    #: a filter, a count) are written in; None: the engine writes them itself (`shaped_sql`).
    dialect: ClassVar[Dialect | None] = None
    #: Whether the engine reads the query shapes at all (False: `SELECT *` only, for an
    #: engine whose shaped reads lakecompat does not write yet).
    reads_shapes: ClassVar[bool] = True
    #: Whether `--set` can give the engine settings (an engine without any refuses them).
    takes_settings: ClassVar[bool] = True
    #: What `--set` keys the engine takes and how they are checked, for `lakecompat run`'s
    #: help ("": the engine takes none, or says nothing).
    settings_help: ClassVar[str] = ""
    #: Whether the engine runs in the writer's process (Spark): its reads then take turns with
    #: the writes; the other engines read one table while the writer writes the next.
    shares_writer: ClassVar[bool] = False
    #: Whether a large run (one that reads in `lanes`) gives an engine that shares the writer's
    #: process a process of its own instead, so that its reads no longer wait for the writes.
    apart_in_lanes: ClassVar[bool] = False
    #: How many instances of the engine a large run starts to read a table's variants at
    #: once (each instance a process of its own reading some of the variants, so that a
    #: timeout's kill ends only its own queries). 1: one instance reads every variant.
    lanes: ClassVar[int] = 1

    #: Folders of the run folder (globs) that hold the engine's service state: a resumed run
    #: deletes them and starts the engine afresh.
    state_folders: ClassVar[tuple[str, ...]] = ()
    #: Folders (globs) of scratch data that a completed run deletes; configuration and logs stay.
    scratch_folders: ClassVar[tuple[str, ...]] = ()
    #: The environment variable that names the engine's release for a run, for engines whose
    #: release a version point can set (`trino: 476` in a versions file); None: the installed
    #: one. Read once, when the run's releases are chosen (`engines.releases`).
    release_env: ClassVar[str | None] = None
    #: The engine's release where a run names none ("": the engine has no choice of release).
    default_release: ClassVar[str] = ""
    #: What a version point's `<name>` field sets, for `lakecompat qualify`'s help and errors.
    release_help: ClassVar[str] = ""
    #: Maven group and name of an artifact every release of the engine publishes, to check a
    #: release a run names before anything starts; None: not checked.
    release_artifact: ClassVar[tuple[str, str] | None] = None
    #: The table formats whose jars the engine carries itself, which may be another release
    #: than the writer's (version skew), each with what `--<name>-<format>-version` and a
    #: version point's `<name>_<format>` field set.
    carries: ClassVar[dict[str, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "readings" in cls.__dict__:
            cls.formats = tuple(r.format for r in cls.readings)

    @classmethod
    def check_settings(cls, settings: dict[str, str], scope: SettingsScope) -> dict[str, str]:
        """Refuse with a `SettingError` a key `--set` gives the engine that it does not take,
        checked before anything starts against the keys its jars define; return the keys it
        takes unchecked (only the running engine knows them), each with why. By default every
        key is taken unchecked."""
        return dict.fromkeys(settings, f"{cls.name}'s keys are not known before it starts")

    @classmethod
    def check_release(cls, release: str, setting: str) -> None:
        """`ProvisioningError` in one sentence that starts with `setting` (how the user chose
        the release) when the engine has no release `release`, asked before anything is
        fetched: by default Maven's list of `release_artifact`'s releases; not checked without
        one."""
        if cls.release_artifact:
            check_release(MavenArtifact(*cls.release_artifact, release), setting, cls.name)

    @classmethod  # noqa: B027 - most engines need nothing beyond what they start with
    def provision(cls, releases: Releases) -> None:
        """Fetch what the engine needs to read the tables of a run with `releases` (its own
        release, the writer's format releases, those it carries itself), before the run
        starts; `ProvisioningError` when it cannot be had here. By default: nothing."""

    def __init__(
        self,
        context: RunContext,
        carried: Mapping[str, str] | None = None,
        label: str | None = None,
    ) -> None:
        self.context = context
        #: The release of each table format this instance reads with where it carries the
        #: format's jars (`carries`) and they are not the writer's (version skew), by format.
        self.carried = dict(carried or {})
        #: Names the engine's own files (logs, scratch folder); it differs from `name` when a
        #: run reads with two instances of one engine (two Hudi releases).
        self.label = label or self.name
        #: The engine's first instance, when this one is a further lane of it (`lanes`): it
        #: reads the tables that instance registers, in the same catalog.
        self.lane_of: Engine | None = None
        #: Whether this instance reads in a process of its own rather than the writer's
        #: (`apart_in_lanes`, set by the run).
        self.apart = False
        #: The variants this instance reads each format under: its readings' own, unless the
        #: run narrowed them (`narrow`) or added settings to them (`add_settings`).
        self._variants = {r.format: r.variants for r in self.readings}

    @property
    @abstractmethod
    def version(self) -> str:
        """The engine's version, recorded in every cell."""

    #: The names (or name prefixes) of the services this engine reads through, started by the
    #: supervisor: `runs_in` says whether they ran in containers (`--containers`).
    services: ClassVar[tuple[str, ...]] = ()

    def runs_in(self, table_format: str = "") -> str:
        """Where the engine read (`table_format`'s tables: "" for any): `process`, or
        `container <image> (<runtime>)` for an engine whose services ran in a container
        (`--containers`); recorded in every cell."""
        return where_services_ran(self.services)

    def version_reading(self, table_format: str) -> str:
        """The engine's version that reads `table_format`'s tables, recorded in their cells:
        `version`, unless the format's jars run on another release of the engine (Spark 4
        for Delta 4)."""
        return self.version

    @property
    def release(self) -> str:
        """The engine's release in this run ("": the engine has no choice of release)."""
        return self.context.releases.engine(self.name, self.default_release)

    def reads_with(self, table_format: str) -> str:
        """The release of `table_format`'s library this instance reads with: its own where it
        carries one apart from the writer's, else the writer's."""
        return self.carried.get(table_format) or self.context.releases.format(table_format)

    def carried_release(self, table_format: str) -> str:
        """What a cell records as the format release the reader read with: `reads_with` for a
        format whose jars the engine carries (`carries`), "" for the others."""
        return self.reads_with(table_format) if table_format in self.carries else ""

    @property
    def java(self) -> str:
        """The JVM the engine runs on, for bug reports (`Jdk.describe`); "": not known."""
        return ""

    @abstractmethod
    def start(self) -> None:
        """Start (or connect to) the engine; raise with a helpful message if it cannot."""

    def stop(self) -> None:  # noqa: B027 - engines without a process of their own do nothing
        """Stop whatever start() started."""

    def register(self, table: TableRef) -> None:  # noqa: B027 - only catalog-based engines register
        """Make `table` visible to the engine (for example in a metastore)."""

    @abstractmethod
    def read_sql(self, table: TableRef, query_type: str) -> str:
        """The SQL that reads the whole table with this query type."""

    def control_variant(self) -> Variant:
        """The variant the run's control check reads its plain Parquet table under (before
        any cell counts): by default the first of the format the engine lists first."""
        return self._variants[self.formats[0]][0]

    @classmethod
    def shape_unsupported(cls, shape: Shape) -> str | None:
        """Why the engine cannot run a read in `shape` (None: it can)."""
        if shape == ALL or cls.dialect is not None:
            return None
        return f"{cls.name} cannot read a table in the shape {shape.name!r}"

    def variant_unsupported(self, variant: Variant) -> str | None:
        """Why this engine, as started or attached, cannot read under `variant` (None: it
        can)."""
        return None

    def shaped_sql(self, table: TableRef, query_type: str, shape: Shape) -> str:
        """The SQL that reads the table with this query type in `shape` (`engines.shape`): by
        default `read_sql` with the shape's select list and WHERE clause in `dialect`."""
        sql = self.read_sql(table, query_type)
        if shape == ALL:
            return sql
        if self.dialect is None:
            raise QueryError(self.shape_unsupported(shape) or shape.name)
        return shape_sql(sql, shape, self.dialect)

    @abstractmethod
    def query(self, sql: str, variant: Variant) -> pa.Table:
        """Run `sql` under `variant` and return the answer as an Arrow table."""

    def query_table(self, table: TableRef, sql: str, variant: Variant) -> pa.Table:
        """`query` for a read of `table`: an engine that reads each table format in a process
        of its own chooses the process here. By default, `query`."""
        return self.query(sql, variant)

    def evidence_sql(
        self, table: TableRef, query_type: str, variant: Variant, shape: Shape = ALL
    ) -> str:
        """What a cell ran, written so that a user can run it: the variant's settings as
        `SET key=value;` statements, then the read (`read_sql`). Engines whose settings take
        another form override it."""
        sets = "".join(f"SET {key}={value};\n" for key, value in variant.settings.items())
        return f"{sets}{self.shaped_sql(table, query_type, shape)};"

    @property
    def log_path(self) -> Path | None:
        """The engine's own log, which a failed query's evidence quotes; None: it has none."""
        return None

    def log_excerpt(self) -> str:
        """The end of the engine's log, kept as evidence when the engine fails."""
        return log_tail(self.log_path) if self.log_path is not None else ""

    def reproduction(
        self, table: TableRef, query_type: str, variant: Variant, shape: Shape = ALL
    ) -> dict[str, str]:
        """Files that let someone run this read without lakecompat (file name → text): the
        table's registration where the engine needs one, the settings, and the SQL."""
        settings = "".join(f"-- setting: {k} = {v}\n" for k, v in variant.settings.items())
        header = f"-- {self.name} {self.version}, variant {variant.name}\n"
        return {"reader.sql": f"{header}{settings}{self.shaped_sql(table, query_type, shape)};\n"}

    def reproduction_query(self, files: dict[str, str]) -> tuple[str, Variant]:
        """The query and settings written in `reproduction`'s files, read back from the text,
        so that what a reproduction says can be run as it says it."""
        settings = {}
        statement = []
        for line in files["reader.sql"].splitlines():
            if line.startswith("-- setting: "):
                key, _, value = line.removeprefix("-- setting: ").partition(" = ")
                settings[key] = value
            elif not line.startswith("--"):
                statement.append(line)
        return "\n".join(statement).removesuffix(";"), Variant("reproduction", settings)

    @property
    def attached(self) -> bool:
        """Whether the engine is a service someone else runs: never restarted or killed."""
        return False

    def alive(self) -> bool:
        """Whether every process the engine needs still runs (False after a crash)."""
        return True

    def responsive(self) -> bool:
        """Whether the engine still answers (checked after a failed query); by default, alive."""
        return self.alive()

    def kill(self) -> None:
        """Kill the engine's own processes at once (a hung query); `restart` brings it back."""
        self.stop()

    def restart(self) -> None:
        """Start the engine again after a crash or a kill (and the Metastore, if it died)."""
        self.stop()
        if not self.context.metastore_running():
            self.context.restart_metastore()
        self.start()

    @classmethod
    def reading(cls, table_format: str) -> type[Reading]:
        """How the engine reads `table_format`; KeyError when it does not."""
        for found in cls.readings:
            if found.format == table_format:
                return found
        raise KeyError(f"{cls.name} does not read {table_format} tables")

    @classmethod
    def default_variant_name(cls, table_format: str) -> str:
        """The name of the variant with the engine's own defaults on `table_format`."""
        return cls.reading(table_format).default_variant_name()

    @classmethod
    def default_variant_names(cls) -> tuple[str, ...]:
        """The default variant's name of each format the engine reads (once each)."""
        return tuple(dict.fromkeys(r.default_variant_name() for r in cls.readings))

    @classmethod
    def variant_names(cls) -> tuple[str, ...]:
        """The names of every variant of every format the engine reads (once each)."""
        return tuple(dict.fromkeys(v.name for r in cls.readings for v in r.variants))

    def variants_of(self, table_format: str) -> tuple[Variant, ...]:
        """The variants this engine reads `table_format` under (the run may have narrowed
        them or added settings to them: `harness.run.fleet`)."""
        return self._variants.get(table_format, ())

    def narrow(self, names: tuple[str, ...]) -> None:
        """Read only the variants called `names` (of any format): one lane's share, or each
        format's default variant."""
        self._variants = {
            f: tuple(v for v in variants if v.name in names)
            for f, variants in self._variants.items()
        }

    def add_settings(self, extra: dict[str, str]) -> None:
        """Read every variant of every format with `extra` (`--set`) added to its settings."""
        self._variants = {
            f: tuple(Variant(v.name, {**v.settings, **extra}) for v in variants)
            for f, variants in self._variants.items()
        }

    @classmethod
    def reads_format(cls, table_format: str) -> bool:
        return table_format in cls.formats

    @classmethod
    def supports(cls, table_type: str, query_type: str, table_format: str) -> bool:
        """Whether the engine runs `query_type` on `table_format`'s `table_type` tables."""
        return cls.reads_format(table_format) and cls.reading(table_format).supports(
            table_type, query_type
        )

    @classmethod
    def unsupported_reason(cls, table_type: str, query_type: str, table_format: str) -> str:
        """The reason of an UNSUPPORTED cell."""
        return cls.reading(table_format).unsupported_reason(cls.name, table_type, query_type)


class MetastoreReader(Engine):
    """An engine with a server process of its own that reads tables through the Metastore.

    It is alive while its process runs and the Metastore it was started with does; after the
    Metastore restarted, the engine restarts too (its sessions knew the old one).
    """

    _generation = 0

    @abstractmethod
    def _process(self) -> Any:
        """The engine's own service (with `running` and `kill()`), or None when stopped."""

    def _remember_metastore(self) -> None:
        """Call from start(): which Metastore generation this start talks to."""
        self._generation = self.context.metastore_generation

    def alive(self) -> bool:
        process = self._process()
        return (
            process is not None
            and process.running
            and self.context.metastore_running()
            and self._generation == self.context.metastore_generation
        )

    def kill(self) -> None:
        process = self._process()
        if process is not None:
            process.kill()
