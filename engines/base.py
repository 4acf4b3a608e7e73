"""The engine contract: what every reader implements, and the shared run context."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa

from engines.context import RunContext
from engines.errors import QueryError, log_tail
from engines.formats import format_named
from engines.infra.artifacts import MavenArtifact, check_release
from engines.settings import SettingsScope
from engines.shape import ALL, Dialect, Shape, shape_sql
from engines.table import TableRef


@dataclass(frozen=True)
class Variant:
    """A reader configuration that changes behaviour; each variant is its own matrix cell."""

    name: str
    settings: dict[str, str] = field(default_factory=dict)


class Engine(ABC):
    """A query engine that reads the writer's tables; subclasses override only what differs."""

    #: Registry name, also the engine column of every cell.
    name: ClassVar[str]
    #: The table formats the engine reads (`engines.table.FORMAT_QUERY_TYPES`), the first the
    #: one `query_types` and `variants` speak for; a run reads a table only with the engines
    #: that read its format.
    formats: ClassVar[tuple[str, ...]] = ("hudi",)
    #: Query types the engine can run on its first format, per table type (`cow`, `mor`).
    query_types: ClassVar[dict[str, tuple[str, ...]]]
    #: Query types per table type of each further format the engine reads.
    format_query_types: ClassVar[dict[str, dict[str, tuple[str, ...]]]] = {}
    #: Query types the engine lacks but whose table it can still read, with the reason; such
    #: cells are UNSUPPORTED, and in the default variant the evidence shows what reading the
    #: table anyway returns (the other variants' cells say where to look).
    probe_only: ClassVar[dict[tuple[str, str], str]] = {}
    #: Whether answers list partition columns after the data columns (the Hive table layout).
    partition_columns_last: ClassVar[bool] = False
    #: Why the engine lacks a query type, where there is more to say than "it has none".
    unsupported: ClassVar[dict[str, str]] = {}
    #: The same for each further format the engine reads.
    format_unsupported: ClassVar[dict[str, dict[str, str]]] = {}
    #: The engine's name as its project spells it, for bug reports ("": `name`).
    display_name: ClassVar[str] = ""
    #: The GitHub repositories (owner/name) where the engine's own defects are filed; a known
    #: outcome of the engine links an issue there, or one of the table format's.
    trackers: ClassVar[tuple[str, ...]] = ()
    #: Reader configurations to run every cell of the first format under.
    variants: ClassVar[tuple[Variant, ...]] = (Variant("default"),)
    #: Reader configurations of each further format (a format left out: one `default`).
    format_variants: ClassVar[dict[str, tuple[Variant, ...]]] = {}
    #: The variant that keeps the engine's own defaults (what a user gets who sets nothing):
    #: the reports' overview speaks for it. None: the first variant.
    default_variant: ClassVar[str | None] = None
    #: The variants (of the first format, by name) that change how the engine matches a data
    #: file's columns to the table's (by position rather than by name, by Hudi's field ids,
    #: through another reader): filters and projections are read under each of them too,
    #: since a filter can lose rows silently under one way of matching and not another.
    matching_variants: ClassVar[tuple[str, ...]] = ()
    #: The query shapes read under `matching_variants` (None: every shape the run reads).
    matching_shapes: ClassVar[tuple[str, ...] | None] = None
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
    #: The environment variable that selects the engine's release, for engines whose release a
    #: version point can set (`trino: 476` in a versions file); None: the installed one.
    release_env: ClassVar[str | None] = None
    #: What a version point's `<name>` field sets, for `lakecompat qualify`'s help and errors.
    release_help: ClassVar[str] = ""
    #: Maven group and name of an artifact every release of the engine publishes, to check a
    #: release named in `release_env` before anything starts; None: not checked.
    release_artifact: ClassVar[tuple[str, str] | None] = None
    #: What `--<name>-hudi-version` and a version point's `<name>_hudi` set, for engines that
    #: carry Hudi jars of their own that may differ from the writer's (version skew); "": the
    #: engine carries none.
    reader_hudi_help: ClassVar[str] = ""

    @classmethod
    def release(cls) -> str:
        """The release `release_env` selects now (its default when unset); "" without one."""
        return ""

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
    def provision(cls, hudi: str, reader_hudi: str | None = None) -> None:
        """Fetch what the engine needs to read tables written by Hudi `hudi` (with its own Hudi
        jars `reader_hudi` where it carries them), at the release `release_env` selects, before
        a run starts; `ProvisioningError` when it cannot be had here. By default: nothing."""

    def __init__(
        self, context: RunContext, reader_hudi: str | None = None, label: str | None = None
    ) -> None:
        self.context = context
        #: The Hudi release this reader reads with, where it carries Hudi's jars and they are
        #: not the writer's (version skew); None: the writer's release.
        self.reader_hudi = reader_hudi
        #: Names the engine's own files (logs, scratch folder); it differs from `name` when a
        #: run reads with two instances of one engine (two Hudi releases).
        self.label = label or self.name
        #: The engine's first instance, when this one is a further lane of it (`lanes`): it
        #: reads the tables that instance registers, in the same catalog.
        self.lane_of: Engine | None = None
        #: Whether this instance reads in a process of its own rather than the writer's
        #: (`apart_in_lanes`, set by the run).
        self.apart = False

    @property
    @abstractmethod
    def version(self) -> str:
        """The engine's version, recorded in every cell."""

    @property
    def hudi_version(self) -> str:
        """The Hudi release the engine reads with, where it carries Hudi's jars ("": none)."""
        return ""

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

    @classmethod
    def pushdown_off(cls, variant: Variant) -> Variant | None:
        """`variant` with the engine's filter pushdown turned off (Parquet statistics,
        dictionaries, bloom filters, data skipping), so that a filter's cell can be told apart
        from the same query on the plain read path; None: the engine has no such setting."""
        return None

    def control_variant(self) -> Variant:
        """The variant the run's control check reads its plain Parquet table under (before
        any cell counts): by default the engine's first."""
        return self.variants[0]

    @classmethod
    def filter_controls(cls, variant: Variant) -> list[Variant]:
        """The variants a filter is read in besides `variant`, each turning one of the
        engine's paths for filters off, so that a failure can be put down to the path whose
        control reads right (by default `pushdown_off`, where the engine has it)."""
        quiet = cls.pushdown_off(variant)
        return [quiet] if quiet is not None else []

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
    def default_variant_name(cls, table_format: str | None = None) -> str:
        """The name of the variant with the engine's own defaults (on `table_format`; None:
        the engine's first format)."""
        if table_format in (None, cls.formats[0]):
            return cls.default_variant or cls.variants[0].name
        return cls.format_variants.get(table_format, (Variant("default"),))[0].name

    def variants_of(self, table_format: str) -> tuple[Variant, ...]:
        """The variants this engine reads `table_format` under (the run may have narrowed
        them or added settings to them: `harness.run.fleet`)."""
        if table_format == self.formats[0]:
            return self.variants
        return self.format_variants.get(table_format, (Variant("default"),))

    @classmethod
    def reads_format(cls, table_format: str) -> bool:
        return table_format in cls.formats

    @classmethod
    def supports(cls, table_type: str, query_type: str, table_format: str | None = None) -> bool:
        if table_format in (None, cls.formats[0]):
            return query_type in cls.query_types.get(table_type, ())
        types = cls.format_query_types.get(table_format, {})
        return query_type in types.get(table_type, ())

    @classmethod
    def unsupported_reason(
        cls, table_type: str, query_type: str, table_format: str | None = None
    ) -> str:
        """The reason of an UNSUPPORTED cell."""
        kind = format_named(table_format or cls.formats[0]).kind(table_type)
        default = f"{cls.name} has no {query_type} query for {kind} tables"
        if table_format not in (None, cls.formats[0]):
            return cls.format_unsupported.get(table_format, {}).get(query_type, default)
        return cls.unsupported.get(query_type, default)


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
