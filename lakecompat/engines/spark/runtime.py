"""One local SparkSession with the Hudi bundle, shared by the writer and the Spark reader (or,
in a process of its own, with another format's jars instead: `FormatJars`)."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lakecompat.engines.formats.hudi import HUDI
from lakecompat.engines.infra.artifacts import MavenArtifact, fetch
from lakecompat.engines.infra.class_archive import NO_ARCHIVE, ClassArchive, class_archive
from lakecompat.engines.infra.hudi_jars import hudi_bundle
from lakecompat.engines.infra.jdk import QUICK_JIT, Jdk, find_jdk, huge_pages
from lakecompat.engines.infra.local_fs import LOCAL_FS_CLASS, LOCAL_FS_KEY, local_fs_jar
from lakecompat.engines.infra.supervisor import (
    java_tmpdir,
    kill_children_mentioning,
    process_running,
)
from lakecompat.engines.releases import Releases

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SPARK_JAVA_VERSIONS = (17, 11)
_LOG4J = """\
rootLogger.level = warn
rootLogger.appenderRef.file.ref = file
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{HH:mm:ss}} %p %c{{1}}: %m%n
"""


#: The session settings that shape what Spark writes and reads (a reproduction script uses
#: them too); the others in `SparkRuntime` are about this machine (memory, logs, addresses).
SESSION_SETTINGS = {
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
    # Timestamps (CAST, text, partition values) in UTC, as the other engines run.
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
}


#: The same for a session that writes and reads Iceberg tables: Iceberg's SQL extensions (its
#: procedures and `ALTER TABLE` forms), no Hudi catalog. Iceberg tables are named through a
#: catalog of Iceberg's own, registered per table folder (`iceberg_catalog_settings`).
ICEBERG_SESSION_SETTINGS = {
    "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
}


@dataclass(frozen=True)
class FormatJars:
    """What a Spark of a table format's own loads instead of Hudi's bundle (one JVM cannot
    load two formats' jars): the format's jars and the session settings it needs. Each
    format's Spark reading part makes its own (`engines/spark/<format>.py`)."""

    #: The format's release in words, for messages: `Iceberg 1.10.0`.
    release: str
    #: The name of the Spark's logs and scratch folder: `spark-iceberg-1.10.0`.
    label: str
    jars: tuple[MavenArtifact, ...]
    settings: Mapping[str, str]
    #: The PySpark release the format's Spark runs, in a Python environment of its own
    #: (`engines.spark.process`); "": lakecompat's own (3.5).
    pyspark: str = ""

    def packages(self) -> str:
        """The jars as spark-sql's `--packages` names them (`group:artifact:version,...`)."""
        return ",".join(f"{a.group}:{a.artifact}:{a.version}" for a in self.jars)


#: The session settings of a Spark that writes and reads Delta tables: Delta's SQL extensions
#: and catalog (its `ALTER TABLE` forms, `table_changes`, paths as tables), no Hudi catalog.
#: Delta reads a table's log in `snapshotPartitions` Spark tasks (50 by default, for large
#: logs): these tables' logs are small (one task: each write takes a third of the time).
DELTA_SESSION_SETTINGS = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.databricks.delta.snapshotPartitions": "1",
}


def iceberg_catalog_name(warehouse: Path) -> str:
    """The name of the Iceberg catalog whose warehouse is `warehouse` (one per folder): the
    writer's and the reader's sessions name a table the same way."""
    digest = hashlib.sha256(str(warehouse.resolve()).encode()).hexdigest()[:12]
    return f"lakecompat_{digest}"


def iceberg_catalog_settings(name: str, warehouse: Path) -> dict[str, str]:
    """The settings of an Iceberg catalog `name` whose tables are the folders below
    `warehouse` (Iceberg's Hadoop catalog: a table is `<warehouse>/<namespace>/<table>`, its
    metadata in the table's own folder). The warehouse is a `file:` URI, so that every file
    the metadata names carries its scheme, which Trino's local file system needs."""
    prefix = f"spark.sql.catalog.{name}"
    return {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "hadoop",
        f"{prefix}.warehouse": warehouse.resolve().as_uri(),
    }


#: How long a JVM told to exit may take before it is killed. A JVM writing its class archive
#: at exit (its first start on a machine) took longer than a minute on a busy machine.
EXIT_WAIT_S = 60.0


def end_jvm(process: subprocess.Popen[Any], wait_s: float) -> None:
    """Wait up to `wait_s` for a JVM that was told to exit, and kill it after that: an exit
    this slow is a JVM still writing its class archive on a busy machine (the archive is then
    left unwritten, and a later start writes it), not a reason to fail the run."""
    try:
        process.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)


class SparkRuntime:
    """Starts the SparkSession lazily, once, with its log in the run's log folder.

    `label` names its log files (`spark.log`) and its scratch folder below `<run>/spark/`, so
    that a second runtime (an older Hudi release, in a process of its own) keeps its own.
    """

    def __init__(
        self,
        log_dir: Path,
        hudi: str | None = None,
        label: str = "spark",
        master: str | None = None,
        loads: FormatJars | None = None,
        releases: Releases | None = None,
    ) -> None:
        """`hudi`: the Hudi release the session loads (None: the one `releases` names, else
        the default); `loads`: another format's jars, loaded instead of the Hudi bundle."""
        self.log_dir = log_dir
        self.hudi_version = hudi or (releases or Releases()).format(HUDI.name)
        self.loads = loads
        self.label = label
        #: A Spark standalone master (`spark://HOST:PORT`) whose executors do the work; None:
        #: the driver's own JVM (`local[2]`). The driver is lakecompat's either way.
        self.master = master
        self._session: SparkSession | None = None
        #: Only the quick JIT compiler (`QUICK_JIT`), for a Spark that only reads: its reads
        #: then cost about a fifth less CPU at the same speed; and for a small run's writes
        #: (a few tables: 0.71 of the CPU at 0.95 of the wall time), whose JVM does not live
        #: long enough for the optimising compiler to pay back. A large run's writes keep both
        #: compilers: they run about 18 % slower without the optimising one.
        self.quick_jit = False
        #: The archive of the JVM's classes this session's JVM maps or writes (None: none).
        self._archive = NO_ARCHIVE
        #: The JVM's folder for temporary files (its `java.io.tmpdir` and `spark.local.dir`),
        #: deleted once the JVM has ended, however it ended.
        self._tmp: Path | None = None

    @property
    def spark_version(self) -> str:
        import pyspark

        return pyspark.__version__

    @property
    def log_path(self) -> Path:
        return self.log_dir / f"{self.label}.log"

    def session(self) -> SparkSession:
        """The shared session, started on first use."""
        if self._session is None:
            self._session = self._build()
        return self._session

    def hadoop_conf(self, start: bool = True) -> Any:
        """The JVM's Hadoop configuration, which Hudi's writers read (None when `start` is
        False and no live session is running)."""
        if not start and (self._session is None or not self.alive()):
            return None
        return self.session().sparkContext._jsc.hadoopConfiguration()

    def alive(self) -> bool:
        """False when the session was started and its JVM has died."""
        if self._session is None:
            return True
        process = self._jvm_process()
        return process is not None and process_running(process)

    def kill(self) -> None:
        """SIGKILL the JVM (a hung write or query) and forget the session."""
        process = self._jvm_process()
        if process is not None and process.poll() is None:
            process.kill()
            process.wait(timeout=30)
        self._jvm_ended(process)
        self._forget()

    def restart(self) -> None:
        """A new JVM and session after the old one died or was killed."""
        if self.alive():
            self.stop()
        else:
            self._jvm_ended(self._jvm_process())
            self._forget()
        self.session()

    def _jvm_process(self) -> Any:
        from pyspark import SparkContext

        gateway = SparkContext._gateway if self._session is not None else None
        return getattr(gateway, "proc", None)

    def _forget(self) -> None:
        """Drop every reference PySpark keeps to a JVM that is gone."""
        if self._session is None:
            return
        from pyspark import SparkContext
        from pyspark.sql import SparkSession

        gateway = SparkContext._gateway
        SparkContext._gateway = None
        SparkContext._jvm = None
        SparkContext._active_spark_context = None
        SparkSession._instantiatedSession = None
        SparkSession._activeSession = None
        self._session = None
        if gateway is not None:
            with contextlib.suppress(Exception):
                gateway.shutdown()

    def stop(self) -> None:
        """Stop the session and the JVM behind it, so that no Spark process outlives the run."""
        if self._session is None:
            return
        if not self.alive():
            self._jvm_ended(self._jvm_process())
            self._forget()
            return
        from pyspark import SparkContext

        self._session.stop()
        self._session = None
        gateway = SparkContext._gateway
        if gateway is not None:
            process = getattr(gateway, "proc", None)
            gateway.shutdown()
            SparkContext._gateway = None
            SparkContext._jvm = None
            if process is not None:
                # The JVM exits when its stdin closes (PySpark's gateway contract).
                process.stdin.close()
                end_jvm(process, EXIT_WAIT_S)
            self._jvm_ended(process)

    def _jvm_ended(self, process: Any) -> None:
        """After the JVM has ended: keep the class archive it wrote at a clean exit (see
        `class_archive.py`), and delete its temporary files (what a killed JVM unpacked)."""
        archive, self._archive = self._archive, NO_ARCHIVE
        archive.settle(None if process is None else process.poll())
        tmp, self._tmp = self._tmp, None
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)

    def _class_archive(self, jdk: Jdk, options: list[str]) -> ClassArchive:
        """The archive of the driver JVM's classes. Its classpath is our file system's jar (in
        local mode) and PySpark's jars. `options` leave out the compiler: the JVM maps an
        archive whatever compiler it runs with, so a run that only reads and one that writes
        share one. The Hudi bundle comes through `spark.jars`, a class loader of Spark's, whose
        classes the JVM checks against the jar before it uses their copies."""
        classpath = [str(local_fs_jar(_hadoop_api_jars()))] if self.master is None else []
        classpath += map(str, _spark_jars())
        return class_archive("spark", jdk, classpath, options)

    def _build(self) -> SparkSession:
        if self.loads is not None:
            jars = [fetch(artifact) for artifact in self.loads.jars]
            session_settings = dict(self.loads.settings)
        else:
            jars = [fetch(hudi_bundle(self.hudi_version))]
            session_settings = SESSION_SETTINGS
        jdk = find_jdk(SPARK_JAVA_VERSIONS, "Spark 3.5")
        os.environ["JAVA_HOME"] = str(jdk.home)
        # Python workers must run the interpreter that has pyspark installed.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        # Spark would otherwise look up a non-loopback address for its services.
        os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        log4j = self.log_dir / f"{self.label}-log4j2.properties"
        log4j.write_text(_LOG4J.format(log=self.log_path))
        scratch = self.log_dir.parent / "spark"
        if self.label != "spark":
            scratch = scratch / self.label
        from pyspark.sql import SparkSession

        builder = SparkSession.builder.master(self.master or "local[2]").appName("lakecompat")
        if self.master is None:
            # Speed only: permissions through Java's file API, not forked chmod and ls. (A
            # cluster's executors lack the class, so a cluster keeps Hadoop's own.)
            builder = builder.config(
                "spark.driver.extraClassPath", str(local_fs_jar(_hadoop_api_jars()))
            ).config(f"spark.hadoop.{LOCAL_FS_KEY}", LOCAL_FS_CLASS)
        else:
            # Executors run in the cluster's JVMs: they need the driver's zone and JOL setting.
            builder = builder.config(
                "spark.executor.extraJavaOptions",
                "-Duser.timezone=UTC -Djol.skipDynamicAttach=true -Djol.skipHotspotSAAttach=true",
            )
        options = [
            # Hudi's object-size estimator (JOL) need not try to attach an agent to its JVM.
            *("-Djol.skipDynamicAttach=true", "-Djol.skipHotspotSAAttach=true"),
            "-Duser.timezone=UTC",
            # Many small jobs: the throughput collector costs less CPU than G1 (-15 %).
            "-XX:+UseParallelGC",
            *huge_pages(),
        ]
        self._archive = self._class_archive(jdk, options)
        # Spark's block files and what the JVM unpacks (native libraries), in one folder of
        # this JVM's own, deleted when it ends (`_jvm_ended`).
        tmp = scratch / "tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        self._tmp = tmp
        for key, value in {
            # Shipped to a cluster's executors too.
            "spark.jars": ",".join(map(str, jars)),
            **session_settings,
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.driver.host": "127.0.0.1",
            "spark.driver.memory": "3g",
            "spark.sql.warehouse.dir": str(scratch / "warehouse"),
            "spark.local.dir": str(tmp),
            "spark.driver.extraJavaOptions": " ".join(
                [
                    f"-Dlog4j2.configurationFile=file:{log4j}",
                    *options,
                    *([QUICK_JIT] if self.quick_jit else []),
                    *self._archive.flags,
                    java_tmpdir(tmp),
                ]
            ),
        }.items():
            builder = builder.config(key, value)
        try:
            with _console_to(self.log_dir / f"{self.label}-console.log"), _keep_sigint_handler():
                session = builder.getOrCreate()
        except BaseException:
            # Broken off (Ctrl-C) while PySpark waited for the JVM it launched: PySpark then
            # deletes the folder the JVM tells it its port in, the JVM's start fails, and its
            # gateway thread keeps it alive for good. End it; it is ours alone (its log file).
            kill_children_mentioning(f"file:{log4j}")
            self._jvm_ended(None)
            raise
        session.sparkContext.setLogLevel("WARN")
        _quiet_query_context_loggers()
        return session


def _quiet_query_context_loggers() -> None:
    """PySpark 4 logs every failed statement's analysis error, with the JVM's stack, as JSON
    on stderr (its query context loggers): lakecompat records the error itself, in the cell
    (a refused change's reason and evidence), so the terminal need not show it."""
    try:
        from pyspark.logger import PySparkLogger  # PySpark 4 only
    except ImportError:
        return
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)


def _spark_jars() -> list[Path]:
    """The jars of PySpark's own classpath (`jars/`), in the order the JVM lists them."""
    import pyspark

    return sorted((Path(pyspark.__file__).parent / "jars").glob("*.jar"))


def _hadoop_api_jars() -> list[Path]:
    """The Hadoop client API jar that PySpark ships (Spark's Hadoop classes)."""
    import pyspark

    return sorted((Path(pyspark.__file__).parent / "jars").glob("hadoop-client-api-*.jar"))


@contextmanager
def _keep_sigint_handler() -> Iterator[None]:
    """Keep the process's own Ctrl-C handling across the start of a SparkContext.

    In the main thread, SparkContext replaces the SIGINT handler with one that cancels every
    Spark job first: the job then fails with a Py4JError that surfaces instead of the
    KeyboardInterrupt, and the run would record that error as the write's or read's outcome and
    go on. With the handler kept, Ctrl-C stops the run like SIGTERM does.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # SparkContext installs no handler outside the main thread
        return
    previous = signal.getsignal(signal.SIGINT)
    try:
        yield
    finally:
        if previous is not None:  # None: a handler not set from Python, nothing to restore
            signal.signal(signal.SIGINT, previous)


@contextmanager
def _console_to(path: Path) -> Iterator[None]:
    """Let a child process started inside inherit `path` as stdout and stderr.

    PySpark starts the JVM with this process's console; the JVM and the Python workers it
    forks print warnings there that belong in the run's logs, not between progress lines.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with path.open("ab") as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
