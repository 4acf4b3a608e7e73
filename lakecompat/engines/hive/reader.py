"""Hive as a reader: HiveServer2 in local mode over the shared Metastore, queried with PyHive.

Tables are registered with DDL over HiveServer2, laid out the way Hudi's hive sync does it
(copy-on-write as one table; merge-on-read as `<table>_ro` and `<table>_rt`). Hudi's own hive
sync cannot be used: Spark 3.5 carries a Hive 2.3 client whose `get_table` call the Hive 4
Metastore no longer has.

The Hudi input formats come from the writer's Hudi Spark bundle (the `hudi-hadoop-mr-bundle`
is not published for Hudi 1.2), plus the unshaded Kryo it expects. With those jars on the
classpath Hive needs two settings: `HiveInputFormat`, because the default
`CombineHiveInputFormat` lists files itself and returns every file version, and no
vectorized execution, because Hudi's record readers do not produce vectorized batches.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, TypeVar
from zoneinfo import ZoneInfo

import pyarrow as pa

from lakecompat.engines.answers import arrow_type, canonical_json
from lakecompat.engines.attached import DEFAULT_DATABASE, AttachError, host_port
from lakecompat.engines.base import MetastoreReader, Reading, Variant
from lakecompat.engines.context import RunContext
from lakecompat.engines.errors import QueryError, describe_error, log_size, log_tail, logged_trace
from lakecompat.engines.formats.hudi import HUDI
from lakecompat.engines.hive.failures import (
    cause_of,
    causes_line,
    file_groups,
    in_file_group,
    read_failure,
    with_job_cause,
    written_since,
)
from lakecompat.engines.hive.probes import FileGroupCauses
from lakecompat.engines.hive.runtime import HIVE3_OPENS, OPENS, AttachedHive, hiveserver2_classpath
from lakecompat.engines.hive.settings import HELP, check_hive_settings
from lakecompat.engines.infra.artifacts import cache_dir
from lakecompat.engines.infra.class_archive import NO_ARCHIVE, class_archive
from lakecompat.engines.infra.containers.service import engine_service
from lakecompat.engines.infra.hadoop_conf import LOG4J2_CONSOLE, site_xml, write_conf
from lakecompat.engines.infra.jdk import QUICK_JIT, find_jdk, huge_pages
from lakecompat.engines.infra.local_fs import LOCAL_FS_CLASS, LOCAL_FS_KEY
from lakecompat.engines.infra.ports import service_port
from lakecompat.engines.infra.supervisor import AllOf, PortOpen, Probe, Service, java_tmpdir
from lakecompat.engines.metastore.ddl import quote, registration_ddl
from lakecompat.engines.metastore.hive3 import hive3_launch, is_hive3
from lakecompat.engines.metastore.service import (
    DEFAULT_HIVE_VERSION,
    HIVE_JAVA_VERSIONS,
    HIVE_VERSION_ENV,
    metastore_classpath,
)
from lakecompat.engines.metastore.tables import table_for
from lakecompat.engines.releases import Releases
from lakecompat.engines.settings import SettingsScope
from lakecompat.engines.shape import ALL, HIVE, PUSHDOWN_OFF, Shape
from lakecompat.engines.table import TableRef, reference_instant

#: What Hudi's input formats need from Hive: its own input format, because the default
#: `CombineHiveInputFormat` lists files itself and returns every file version, and no
#: vectorized execution, because Hudi's record readers do not produce vectorized batches.
READ_SETTINGS = {
    "hive.input.format": "org.apache.hadoop.hive.ql.io.HiveInputFormat",
    "hive.vectorized.execution.enabled": "false",
}
#: What every session lakecompat opens sets: result columns named without their table's name.
SESSION_SETTINGS = {"hive.resultset.use.unique.column.names": "false"}


def hive_arrow_type(type_code: str, precision: int | None, scale: int | None) -> pa.DataType:
    """The Arrow type of a HiveServer2 result column (`INT_TYPE`, `DECIMAL_TYPE`, ...).

    Hive's TIMESTAMP is a date and time without a zone (TIMESTAMP WITH LOCAL TIME ZONE is the
    instant type).
    """
    name = type_code.removesuffix("_TYPE").lower()
    if name == "decimal" and precision is not None:
        return pa.decimal128(precision, scale or 0)
    if name in _TIMESTAMPS:
        return _TIMESTAMPS[name]
    mapped = arrow_type({"varchar": "string", "char": "string"}.get(name, name))
    return mapped or pa.string()


_TIMESTAMPS = {"timestamp": pa.timestamp("us"), "timestamplocaltz": pa.timestamp("us", tz="UTC")}
#: The result column types HiveServer2 sends as JSON text. It describes them with a primitive
#: type entry of these codes (not with the array, map or struct entries of its Thrift types),
#: so the entry's code says which columns hold JSON.
NESTED_TYPE_CODES = ("ARRAY_TYPE", "MAP_TYPE", "STRUCT_TYPE", "UNION_TYPE")


def to_arrow(
    columns: list[tuple[str, pa.DataType]],
    rows: list[tuple[Any, ...]],
    nested: frozenset[str] = frozenset(),
) -> pa.Table:
    """Build the answer table; HiveServer2 sends dates and timestamps as text, complex values
    as JSON.

    The JSON of `nested` columns is rewritten in the canonical form nested values compare in.
    """
    arrays = []
    for index, (name, kind) in enumerate(columns):
        values = [row[index] for row in rows]
        if name in nested:
            values = [None if v is None else canonical_json(json.loads(v)) for v in values]
        elif kind == pa.date32():
            values = [None if v is None else dt.date.fromisoformat(v) for v in values]
        elif pa.types.is_timestamp(kind):
            values = [_timestamp(v) for v in values]
        elif kind == pa.binary():
            values = [v.encode("utf-8") if isinstance(v, str) else v for v in values]
        elif kind == pa.string():
            values = [None if v is None else str(v) for v in values]
        arrays.append(pa.array(values, type=kind))
    return pa.Table.from_arrays(arrays, schema=pa.schema(columns))


def _timestamp(value: Any) -> dt.datetime | None:
    """A timestamp HiveServer2 sent as text: `2024-01-02 03:04:05.1`, for TIMESTAMP WITH LOCAL
    TIME ZONE followed by the zone's name."""
    if value is None or isinstance(value, dt.datetime):
        return value
    day, clock, *zone = str(value).split(" ")
    parsed = dt.datetime.fromisoformat(f"{day} {clock}")
    return parsed.replace(tzinfo=ZoneInfo(zone[0])) if zone else parsed


class HiveHudi(Reading):
    """Hudi's Hive input formats, through the tables Hudi's hive sync registers."""

    format = "hudi"
    query_types: ClassVar[dict[str, tuple[str, ...]]] = {
        "cow": ("snapshot", "incremental"),
        "mor": ("snapshot", "read_optimized", "incremental"),
    }
    _NO_TIME_TRAVEL = (
        "Hudi documents no time travel for Hive; the Hive input formats read "
        "`hoodie.<table>.consume.commit`, tried here"
    )
    probe_only: ClassVar[dict[tuple[str, str], str]] = {
        ("cow", "time_travel"): _NO_TIME_TRAVEL,
        ("mor", "time_travel"): _NO_TIME_TRAVEL,
    }
    variants = (
        Variant("schema_evolution_on", {"hive.exec.schema.evolution": "true"}),
        Variant("schema_evolution_off", {"hive.exec.schema.evolution": "false"}),
        # Hudi 1.x reads through its file-group reader; this is the reader of Hudi 0.x.
        Variant("legacy_reader", {"hoodie.file.group.reader.enabled": "false"}),
        # By default `SELECT *` runs as a fetch task inside HiveServer2; this forces MapReduce.
        Variant("mapreduce", {"hive.fetch.task.conversion": "none"}),
        # What Hudi's own Hive tests set in the job configuration to read evolved tables
        # (TestHiveTableSchemaEvolution): Hudi's schema-on-read in its Hive input formats.
        Variant("schema_on_read", {"hoodie.schema.on.read.enable": "true"}),
    )
    # Hudi 0.x's reader (legacy_reader) and Hudi's schema on read match old files otherwise
    # than the default file-group reader. Filters only: a projection of a merge-on-read
    # snapshot under them fails or reads right depending on the order of the table's file
    # groups, that is on the random ids the writer gave them (HoodieException: The size of
    # hive.io.file.readcolumn.ids ... is not equal to projection columns), so two writes of
    # one scenario would not give one outcome (docs/research/hive.md).
    matching_variants = ("legacy_reader", "schema_on_read")
    matching_shapes = ("filter", "range", "partition", "count")

    @classmethod
    def pushdown_off(cls, variant: Variant) -> Variant | None:
        """No filter handed to the Parquet reader (`hive.optimize.index.filter`, on by default
        in Hive 4), which then prunes no row groups by their statistics."""
        settings = {**variant.settings, "hive.optimize.index.filter": "false"}
        return Variant(variant.name + PUSHDOWN_OFF, settings)


class HiveEngine(MetastoreReader):
    """HiveServer2 (MapReduce local mode) on 127.0.0.1, NOSASL, reading through the Metastore."""

    name = "hive"
    services = ("hiveserver2",)
    dialect = HIVE
    display_name = "Hive"
    trackers = ("apache/hive", "apache/hudi")
    release_env = HIVE_VERSION_ENV
    release_help = "the Hive release (Metastore and HiveServer2)"
    release_artifact = ("org.apache.hive", "hive-service")
    default_release = DEFAULT_HIVE_VERSION
    carries: ClassVar[dict[str, str]] = {
        HUDI.name: "the Hudi release whose jars HiveServer2 reads with, when it is not the "
        "writer's (version skew: e.g. the writer on 1.2.0, Hive still on 0.15.0)"
    }
    # A HiveServer2 with a second Hudi release has a folder `hiveserver2-hudi-<release>`.
    # A large run reads half the variants in a second HiveServer2: one HiveServer2's queries
    # run one after another, and they are most of a run's reading time once tables are cached.
    lanes = 2
    state_folders = ("hiveserver2*",)
    scratch_folders = ("hiveserver2*/scratch",)
    partition_columns_last = True
    readings = (HiveHudi,)

    @classmethod
    def provision(cls, releases: Releases) -> None:
        hive = releases.engine(cls.name, cls.default_release)
        metastore_classpath(hive)
        hiveserver2_classpath(hive, releases.reads_with(cls.name, HUDI.name))

    settings_help = HELP

    @classmethod
    def check_settings(cls, settings: dict[str, str], scope: SettingsScope) -> dict[str, str]:
        return check_hive_settings(settings, scope, scope.release(cls.default_release))

    def __init__(
        self,
        context: RunContext,
        carried: Mapping[str, str] | None = None,
        label: str | None = None,
    ) -> None:
        super().__init__(context, carried, label)
        #: HiveServer2's folder and log name (`hiveserver2.log`, or with the label's suffix).
        self.service_name = "hiveserver2" + self.label.removeprefix(self.name)
        self.home = context.run_dir / self.service_name
        self._service: Service | AttachedHive | None = None
        self._connection: Any = None
        self._port = 0
        self._host = "127.0.0.1"
        self._address = context.attachments.hiveserver2
        self._version = self.release
        #: The open session of each variant's settings (queries without settings of their own).
        self._sessions: dict[tuple[tuple[str, str], ...], Any] = {}
        #: The causes met reading failed tables' file groups alone, kept between runs.
        self.file_group_causes = FileGroupCauses(cache_dir() / "hive-file-group-causes")

    @property
    def java(self) -> str:
        return find_jdk(HIVE_JAVA_VERSIONS, f"HiveServer2 {self.version}").describe()

    @property
    def version(self) -> str:
        return self._version

    @property
    def hudi_version(self) -> str:
        """The Hudi release whose jars HiveServer2 reads with."""
        return self.reads_with(HUDI.name)

    @property
    def attached(self) -> bool:
        return self._address is not None

    def start(self) -> None:
        if self._address is not None:
            self._attach(self._address)
            return
        metastore = self.context.metastore()
        self._remember_metastore()
        port = service_port()
        folder = self.home / "conf"
        logging = {
            "hive.log4j.file": str(folder / "hive-log4j2.properties"),
            "hive.exec.log4j.file": str(folder / "hive-exec-log4j2.properties"),
        }
        conf = write_conf(
            folder,
            {
                "hive-site.xml": site_xml(
                    {**self._settings(metastore.uri, metastore.warehouse), **logging}
                ),
                "hive-log4j2.properties": LOG4J2_CONSOLE,
                "hive-exec-log4j2.properties": LOG4J2_CONSOLE,
            },
        )
        jdk = find_jdk(HIVE_JAVA_VERSIONS, f"HiveServer2 {self.version}")
        opens = OPENS + (HIVE3_OPENS if is_hive3(self.version) else ())
        jvm = [
            "-Xmx2g",
            # A HiveServer2 whose heap ran out answers every later query with the same
            # OutOfMemoryError, a cause that is not the cell's: it exits instead, and the run
            # restarts it (the cell says that Hive died during its query).
            "-XX:+ExitOnOutOfMemoryError",
            QUICK_JIT,
            *huge_pages(),
            "-XX:+UseParallelGC",
            "-Duser.timezone=UTC",
            # One failure, one message, however warm the JVM is: a hot exception keeps its
            # message (HotSpot would throw a preallocated one without), and a reflective call
            # on the wrong object always fails as the first 15 do ("object is not an instance
            # of declaring class"), not as Java 17's generated accessors do after them (an
            # IllegalArgumentException around a ClassCastException).
            "-XX:-OmitStackTraceInFastThrow",
            "-Dsun.reflect.inflationThreshold=2147483647",
            # Hudi's object-size estimator (JOL) need not fork JVMs to probe this one.
            "-Djol.skipDynamicAttach=true",
            "-Djol.skipHotspotSAAttach=true",
            *(f"--add-opens=java.base/{package}=ALL-UNNAMED" for package in opens),
        ]
        jars = self.classpath()
        classpath = [str(path) for path in jars]
        if is_hive3(self.version):
            # Hive 3 runs through a class loader of lakecompat's (`engines.metastore.hive3`),
            # whose classes the JVM does not archive.
            archive = NO_ARCHIVE
            launch = hive3_launch(jars, self.home / "conf")
        else:
            archive = class_archive("hiveserver2", jdk, classpath, jvm)
            # The configuration is found through HIVE_CONF_DIR, not the classpath: a folder
            # on it would keep the JVM from archiving the classes.
            launch = ["-cp", os.pathsep.join(classpath)]
        tmp = self.home / "tmp"
        argv = [
            str(jdk.java),
            *jvm,
            *archive.flags,
            java_tmpdir(tmp),
            *launch,
            "org.apache.hive.service.server.HiveServer2",
            "--hiveconf",
            f"hive.server2.thrift.port={port}",
        ]
        self._service = engine_service(
            self.service_name,
            argv,
            self.context.log_dir,
            # The thrift port opens before sessions work: ready means `SELECT 1` answers.
            wait=AllOf(PortOpen(port), Probe(lambda: self._connect(port))),
            timeout_s=240,
            env={"HIVE_CONF_DIR": str(conf)},
            cwd=self.home,
            hint="HiveServer2 needs the Metastore (logs/hive-metastore.log) and Java 17",
            after_exit=archive.settle,
            stop_grace_s=archive.stop_grace_s,
            scratch=tmp,
        ).start()
        self._use_run_database()

    def _attach(self, address: str) -> None:
        """Connect to a HiveServer2 someone else runs, and learn its version."""
        self._host, port = host_port("--hiveserver2", address)
        try:
            self._connect(port)
        except Exception as exc:  # noqa: BLE001 - re-raised, naming the option
            raise AttachError(
                f"--hiveserver2 {address}: no HiveServer2 answers `SELECT 1` there "
                f"(binary transport, NOSASL): {describe_error(exc)}"
            ) from None
        self._service = AttachedHive(self._host, port)
        cursor = self._connection.cursor()
        _execute(cursor, "SELECT version()")
        self._version = str(cursor.fetchall()[0][0]).split(" ")[0]
        cursor.close()
        self._use_run_database()

    def _use_run_database(self) -> None:
        """Create the run's database where it is not `default`, and register tables in it."""
        database = self.context.database
        if database == DEFAULT_DATABASE:
            return
        location = self.context.tables_dir.as_uri()
        cursor = self._connection.cursor()
        _execute(cursor, f"CREATE DATABASE IF NOT EXISTS {quote(database)} LOCATION '{location}'")
        _execute(cursor, f"USE {quote(database)}")
        cursor.close()
        host, port = self._host, self._port
        self.context.removals.append(lambda: _drop_database(host, port, database))

    def stop(self) -> None:
        for connection in self._sessions.values():
            _close(connection)
        self._sessions.clear()
        if self._connection is not None:
            _close(self._connection)
            self._connection = None
        if self._service is not None:
            self._service.stop()
            self._service = None

    def _process(self) -> Any:
        return self._service

    def register(self, table: TableRef) -> None:
        self._running_on(self._connection)
        cursor = self._connection.cursor()
        try:
            for statement in registration_ddl(table):
                _execute(cursor, statement)
        finally:
            cursor.close()
            self._running_on(None)
        self.context.registered[table.name] = table

    def reproduction(
        self, table: TableRef, query_type: str, variant: Variant, shape: Shape = ALL
    ) -> dict[str, str]:
        """`register.hql` (Hive sync's layout as DDL) and `reader.hql` (the cell's evidence:
        the session's settings as SETs, then the query), for beeline."""
        return {
            "register.hql": "".join(f"{statement};\n" for statement in registration_ddl(table)),
            "reader.hql": self.evidence_sql(table, query_type, variant, shape) + "\n",
        }

    def evidence_sql(
        self, table: TableRef, query_type: str, variant: Variant, shape: Shape = ALL
    ) -> str:
        """For beeline: the session's settings as SETs (those lakecompat always sets, then the
        variant's), then the query with its query type's SETs."""
        session = {**READ_SETTINGS, **SESSION_SETTINGS, **variant.settings}
        sets = "".join(f"SET {key}={value};\n" for key, value in session.items())
        header = (
            f"-- HiveServer2 {self.version} with hudi-spark3.5-bundle {self.hudi_version}, "
            f"database {self.context.database}\n"
        )
        return f"{header}{sets}{self.shaped_sql(table, query_type, shape)};"

    def reproduction_query(self, files: dict[str, str]) -> tuple[str, Variant]:
        lines = [line for line in files["reader.hql"].splitlines() if not line.startswith("--")]
        # `SET ...;` lines then the query: the form `query` runs in a session of its own.
        return "\n".join(lines).removesuffix(";"), Variant("reproduction")

    def read_sql(self, table: TableRef, query_type: str) -> str:
        name = table_for(table, query_type)
        select = f"SELECT * FROM {quote(name)}"
        if query_type == "incremental":
            # Hudi's Hive incremental mode: commits after the start instant, read per file; the
            # filter drops the older rows of rewritten files.
            requested, completed = reference_instant(table)
            settings = {
                f"hoodie.{name}.consume.mode": "INCREMENTAL",
                f"hoodie.{name}.consume.start.timestamp": completed,
                f"hoodie.{name}.consume.max.commits": "-1",
            }
            select += f" WHERE `_hoodie_commit_time` > '{requested}'"
        elif query_type == "time_travel":
            settings = {f"hoodie.{name}.consume.commit": reference_instant(table)[0]}
        else:
            settings = {}
        return "".join(f"SET {key}={value};\n" for key, value in settings.items()) + select

    def query(self, sql: str, variant: Variant) -> pa.Table:
        *setup, select = sql.split(";\n")
        settings = dict(variant.settings)
        for statement in setup:
            key, _, value = statement.removeprefix("SET ").partition("=")
            settings[key] = value
        # A session's SETs last as long as it does: `RESET key` cannot undo them (Hive's
        # ResetProcessor restores the value a new HiveConf has, and keys HiveConf does not
        # know, `hoodie.*`, have none). So a variant's queries share a session that only ever
        # holds the variant's own settings, and a query with settings of its own (a table's
        # incremental or time-travel keys) gets a session for itself, closed after it.
        if setup:
            connection, shared = self._session_with(settings), None
        else:
            shared = tuple(sorted(settings.items()))
            connection = self._sessions.get(shared) or self._session_with(settings)
            self._sessions[shared] = connection
        log = self.log_path
        start = log.stat().st_size if log.is_file() else 0
        finished = False
        try:
            cursor = connection.cursor()
            self._running_on(connection)
            try:
                _execute(cursor, select)
                # Hive 3 reads a fetch task's rows when they are fetched: its errors come here.
                rows = _answered(cursor.fetchall)
            except QueryError as exc:
                finished = True  # Hive answered: the session is fine
                # The server log has the whole trace; the client gets HiveServer2's part only.
                trace = logged_trace(written_since(log, start)) or exc.trace
                raise QueryError(with_job_cause(str(exc), log, start), trace) from None
            columns, nested = _answer_columns(cursor)
            cursor.close()
            finished = True
            return to_arrow(columns, rows, nested)
        finally:
            self._running_on(None)
            if shared is None or not finished:
                if shared is not None:
                    del self._sessions[shared]
                _close(connection)

    def query_table(self, table: TableRef, sql: str, variant: Variant) -> pa.Table:
        """`query`; a failed read of a Hudi table is told by the causes of all its file groups,
        whichever of them HiveServer2 happened to read first (`engines.hive.failures`)."""
        try:
            return self.query(sql, variant)
        except QueryError as failure:
            if not self.reads_format(table.format) or not read_failure(str(failure)):
                raise
            raise self._in_every_file_group(failure, table, sql, variant) from None

    def _in_every_file_group(
        self, failure: QueryError, table: TableRef, sql: str, variant: Variant
    ) -> QueryError:
        """`failure` with its causes in every file group of `table` (each read alone) as its
        first line; the log's part that is the failure's evidence ends before those reads."""
        end = log_size(self.log_path)
        kept = self.file_group_causes
        key = kept.key(table.path, sql, variant.settings, self.version, self.hudi_version)
        found = kept.get(key)
        if found is None:
            found, complete = set(), True
            groups = file_groups(table.path)
            for group in groups if len(groups) > 1 else ():
                try:
                    self.query(in_file_group(sql, group), variant)
                except QueryError as alone:
                    if read_failure(str(alone)):
                        found.add(cause_of(alone))
                    else:  # a timeout, a lost server: what that file group meets is unknown
                        complete = False
            if complete:
                kept.put(key, found)
        causes = {cause_of(failure)} | found
        said = str(failure)
        line = causes_line(said, causes)
        # HiveServer2's own message stays, under the line that now leads.
        message = said if line == said.splitlines()[0] else f"{line}\n{said}"
        return QueryError(message, failure.trace, log_end=end)

    def _running_on(self, connection: Any) -> None:
        """Tell an attached HiveServer2's handle which session a timeout must end."""
        if isinstance(self._service, AttachedHive):
            self._service.current = connection

    def _session_with(self, settings: dict[str, str]) -> Any:
        """A new session with `settings` SET in it: sent with the request that opens it, or,
        where HiveServer2 refuses that, as `SET` statements, whose error a cell then shows."""
        try:
            return self._open_session(settings=settings)
        except Exception:  # noqa: BLE001 - the statements below give the error its own words
            pass
        connection = self._open_session()
        try:
            cursor = connection.cursor()
            for key, value in settings.items():
                _execute(cursor, f"SET {key}={value}")
            cursor.close()
        except BaseException:
            _close(connection)
            raise
        return connection

    def log_excerpt(self) -> str:
        logs = self.context.log_dir
        return log_tail(self.log_path) or log_tail(logs / "hive-metastore.log")

    @property
    def log_path(self) -> Path:
        """HiveServer2's log: its own in the run's logs, or an attached one's, where given
        (`--hiveserver2-log`; a path that does not exist adds nothing)."""
        attached = self.context.attachments
        if self._address is not None:
            return attached.hiveserver2_log or self.home / "no-log-given"
        return self.context.log_dir / f"{self.service_name}.log"

    def _open_session(
        self,
        port: int | None = None,
        database: str | None = None,
        settings: dict[str, str] | None = None,
    ) -> Any:
        """A session on `database` (the run's by default) with `settings` SET in it."""
        from lakecompat.engines.hive.session import Session

        configuration = dict(SESSION_SETTINGS)
        if self._address is not None:
            # The settings Hudi's input formats need, which lakecompat's own HiveServer2 has
            # in its hive-site.xml, hold for every session of an attached one.
            configuration.update(READ_SETTINGS)
        return Session(
            self._host,
            port or self._port,
            database or self.context.database,
            settings or {},
            configuration,
        )

    def _connect(self, port: int) -> bool:
        """Open the session DDL uses, once `SELECT 1` answers on it."""
        connection = self._open_session(port, DEFAULT_DATABASE)
        try:
            cursor = connection.cursor()
            cursor.execute("SELECT 1")
            answered = cursor.fetchall() == [(1,)]
            cursor.close()
        except Exception:
            connection.close()
            raise
        if answered:
            self._connection, self._port = connection, port
        else:
            connection.close()
        return answered

    def classpath(self) -> list[Path]:
        return hiveserver2_classpath(self.version, self.hudi_version)

    def _settings(self, metastore_uri: str, warehouse: Path) -> dict[str, str]:
        scratch = self.home / "scratch"
        return {
            "hive.metastore.uris": metastore_uri,
            "hive.server2.thrift.bind.host": "127.0.0.1",
            "hive.server2.transport.mode": "binary",
            "hive.server2.authentication": "NOSASL",
            "hive.server2.enable.doAs": "false",
            "hive.server2.webui.port": "0",
            # Fail at once with the cause instead of retrying for 30 minutes.
            "hive.server2.max.start.attempts": "1",
            "fs.defaultFS": "file:///",
            # Speed only: permissions through Java's file API, not forked chmod and ls.
            LOCAL_FS_KEY: LOCAL_FS_CLASS,
            "hive.metastore.warehouse.dir": warehouse.as_uri(),
            "hive.metastore.warehouse.external.dir": (warehouse / "external").as_uri(),
            "hive.exec.scratchdir": str(scratch / "hdfs"),
            "hive.exec.local.scratchdir": str(scratch / "local"),
            "hive.downloaded.resources.dir": str(scratch / "resources"),
            "hive.querylog.location": str(scratch / "querylog"),
            "hive.server2.logging.operation.log.location": str(scratch / "operation_logs"),
            "hadoop.tmp.dir": str(scratch / "hadoop"),
            "mapreduce.jobtracker.staging.root.dir": str(scratch / "staging"),
            "hive.execution.engine": "mr",
            "mapreduce.framework.name": "local",
            "hive.exec.mode.local.auto": "true",
            "hive.support.concurrency": "false",
            "hive.txn.manager": "org.apache.hadoop.hive.ql.lockmgr.DummyTxnManager",
            "hive.stats.autogather": "false",
            "hive.notification.event.poll.interval": "0s",
            "hive.async.log.enabled": "false",
            "hive.query.results.cache.enabled": "false",
            **READ_SETTINGS,
            # Speed only, answers unchanged. Deciding on a fetch task lists every file to check
            # the table's size against a threshold, and without Hadoop's native library every
            # file's permissions cost a forked `ls` (half of each query's time); the tables here
            # are far below the threshold anyway. And a MapReduce job is polled every second by
            # default, which made each query of the `mapreduce` variant wait about a second.
            "hive.fetch.task.conversion.threshold": "-1",
            "hive.exec.counters.pull.interval": "50",
            "hive.server2.logging.operation.enabled": "false",
            # Memory only, answers unchanged: a local MapReduce job runs inside HiveServer2,
            # and a query with a reducer (count(*)) allocates the sort buffer there, 100 MB by
            # default, which ran its heap out under a run's load.
            "mapreduce.task.io.sort.mb": "16",
        }


def _close(connection: Any) -> None:
    """Close a HiveServer2 session; the server may be gone already."""
    with contextlib.suppress(Exception):
        connection.close()


T = TypeVar("T")


def _execute(cursor: Any, statement: str) -> None:
    """Run a statement; HiveServer2's own error message becomes a QueryError."""
    _answered(lambda: cursor.execute(statement))


def _answered(call: Callable[[], T]) -> T:
    """`call()` (a PyHive call); HiveServer2's own error message becomes a QueryError."""
    from pyhive.exc import OperationalError

    try:
        return call()
    except OperationalError as exc:
        status = getattr(exc.args[0], "status", None) if exc.args else None
        message = getattr(status, "errorMessage", None)
        if message:
            trace = _sent_trace(getattr(status, "infoMessages", None) or [])
            raise QueryError(message, trace) from None
        raise


def _sent_trace(entries: list[str]) -> str:
    """The stack trace HiveServer2 sends with an error, in Java's form. It sends exceptions
    as `*Class:message:depth:frames` and frames as `Class:method:File.java:line`."""
    lines: list[str] = []
    for entry in entries:
        if entry.startswith("*"):
            name, _, message = entry[1:].rsplit(":", 2)[0].partition(":")
            lines.append(f"{'Caused by: ' if lines else ''}{name}: {message}")
        elif entry.count(":") >= 3:
            name, method, source, line = entry.rsplit(":", 3)
            lines.append(f"\tat {name}.{method}({source}:{line})")
    return "\n".join(lines)


def _answer_columns(cursor: Any) -> tuple[list[tuple[str, pa.DataType]], frozenset[str]]:
    """Column names and types of the last result (decimal precision and scale included), and
    the names of the struct, array and map columns.

    PyHive's `description` drops the type qualifiers, so ask HiveServer2 for the metadata.
    """
    from TCLIService import ttypes

    request = ttypes.TGetResultSetMetadataReq(cursor._operationHandle)
    response = cursor._connection.client.GetResultSetMetadata(request)
    columns = []
    nested = set()
    for column in response.schema.columns:
        entry = column.typeDesc.types[0].primitiveEntry
        code = ttypes.TTypeId._VALUES_TO_NAMES[entry.type] if entry is not None else None
        if code is None or code in NESTED_TYPE_CODES:  # sent as JSON text
            columns.append((column.columnName, pa.string()))
            nested.add(column.columnName)
            continue
        qualifiers = (entry.typeQualifiers.qualifiers if entry.typeQualifiers else None) or {}
        precision, scale = (qualifiers.get(k) for k in ("precision", "scale"))
        columns.append(
            (
                column.columnName,
                hive_arrow_type(
                    code,
                    precision.i32Value if precision else None,
                    scale.i32Value if scale else None,
                ),
            )
        )
    return columns, frozenset(nested)


def _drop_database(host: str, port: int, database: str) -> None:
    """Drop a run's database and its (external) tables through HiveServer2."""
    from pyhive import hive

    connection = hive.connect(host=host, port=port, auth="NOSASL", username="lakecompat")
    try:
        cursor = connection.cursor()
        _execute(cursor, f"DROP DATABASE IF EXISTS {quote(database)} CASCADE")
        cursor.close()
    finally:
        _close(connection)
