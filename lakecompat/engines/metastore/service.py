"""The Hive Metastore: one per run, thrift on 127.0.0.1, embedded Derby in the run folder.

Hive, Trino and Presto find the tables here. Hive's server jars come from Maven Central. The
default is Hive 3.1.3, the Hive line Hudi builds for, which runs on Java 17 with the classes of
`hive3.py`; Hive 4.0.1, the newest release whose server jars resolve (for 4.1.0 and 4.2.x only
the client jars do), runs on request (`LAKECOMPAT_HIVE_VERSION=4.0.1`).
"""

from __future__ import annotations

import os
from pathlib import Path

from lakecompat.engines.infra.artifacts import Dependency, MavenArtifact, resolve_classpath
from lakecompat.engines.infra.class_archive import class_archive
from lakecompat.engines.infra.containers.service import engine_service
from lakecompat.engines.infra.hadoop_conf import LOG4J2_CONSOLE, site_xml, write_conf
from lakecompat.engines.infra.jdk import QUICK_JIT, find_jdk, huge_pages
from lakecompat.engines.infra.ports import service_port
from lakecompat.engines.infra.supervisor import PortOpen, Service, ServiceHolder, java_tmpdir
from lakecompat.engines.metastore.hive3 import BIND_HOST_PROPERTY, hive3_classpath, is_hive3
from lakecompat.engines.releases import Releases

HIVE_VERSION_ENV = "LAKECOMPAT_HIVE_VERSION"
DEFAULT_HIVE_VERSION = "3.1.3"
#: The engine whose release the Metastore is (its release is the Hive release of a run).
HIVE_ENGINE = "hive"
HADOOP_VERSION = "3.3.6"
HIVE_JAVA_VERSIONS = (17,)
# Hadoop drags in log4j 1 bindings that compete with Hive's log4j2.
LOGGING_JARS = (
    "ch.qos.reload4j:reload4j",
    "org.slf4j:slf4j-reload4j",
    "org.slf4j:slf4j-log4j12",
    "log4j:log4j",
)

#: The service name of the run's own Hive Metastore (`--image metastore=IMAGE` names it).
METASTORE_SERVICE = "hive-metastore"


def hive_release(releases: Releases) -> str:
    """The Hive release of a run with `releases` (its Metastore's and HiveServer2's): the
    `hive` engine's."""
    return releases.engine(HIVE_ENGINE, DEFAULT_HIVE_VERSION)


def hadoop(artifact: str, *exclusions: str) -> Dependency:
    """A Hadoop artifact without its competing logging jars."""
    coords = MavenArtifact("org.apache.hadoop", artifact, HADOOP_VERSION)
    return Dependency(coords, (*LOGGING_JARS, *exclusions))


def metastore_classpath(version: str) -> list[Path]:
    """The Metastore's classpath: Hive 4's standalone Metastore, or Hive 3's server jars."""
    if is_hive3(version):
        return hive3_classpath(version, HADOOP_VERSION)
    return resolve_classpath(
        f"hive-metastore-{version}",
        [
            # hadoop-client-api (via orc-shims) duplicates hadoop-common's classes.
            Dependency(
                MavenArtifact("org.apache.hive", "hive-standalone-metastore-server", version),
                ("org.apache.hadoop:hadoop-client-api",),
            ),
            hadoop("hadoop-common"),
            hadoop("hadoop-hdfs-client"),
            # The Metastore loads HDFS classes even for file:// paths; the jar alone is enough.
            Dependency(MavenArtifact("org.apache.hadoop", "hadoop-hdfs", HADOOP_VERSION), ("*:*",)),
            Dependency(MavenArtifact("org.apache.derby", "derby", "10.14.2.0")),
        ],
    )


class HiveMetastore(ServiceHolder):
    """Starts and stops the Metastore service; `uri` is what clients connect to."""

    def __init__(self, run_dir: Path, version: str | None = None, port: int = 0) -> None:
        """`port`: the port to listen on (0: a free one, chosen at the start)."""
        self.version = version or DEFAULT_HIVE_VERSION
        self.home = run_dir / "hive-metastore"
        self.log_dir = run_dir / "logs"
        self.warehouse = run_dir / "warehouse"
        self.port = port
        self._service: Service | None = None

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"

    def start(self) -> None:
        if self._service is not None:
            return
        classpath = metastore_classpath(self.version)
        jdk = find_jdk(HIVE_JAVA_VERSIONS, f"the Hive {self.version} Metastore")
        # A restart keeps the port, so the readers' configuration stays right.
        self.port = self.port or service_port()
        folder = self.home / "conf"
        log4j = {"metastore.log4j.file": str(folder / "metastore-log4j2.properties")}
        conf = write_conf(
            folder,
            {
                "metastore-site.xml": site_xml({**self._settings(), **log4j}),
                "metastore-log4j2.properties": LOG4J2_CONSOLE,
            },
        )
        # Out of heap, it exits (and the run restarts it) rather than failing every later call.
        jvm = [
            "-Xmx1g",
            "-XX:+ExitOnOutOfMemoryError",
            QUICK_JIT,
            *huge_pages(),
            "-Duser.timezone=UTC",
        ]
        if is_hive3(self.version):  # lakecompat's socket helper binds to this (see hive3.py)
            jvm.append(f"-D{BIND_HOST_PROPERTY}=127.0.0.1")
        jars = [str(path) for path in classpath]
        archive = class_archive("hive-metastore", jdk, jars, jvm)
        tmp = self.home / "tmp"
        argv = [
            str(jdk.java),
            *jvm,
            *archive.flags,
            java_tmpdir(tmp),
            "-cp",
            # The configuration is found through METASTORE_CONF_DIR, not the classpath: a
            # folder on it would keep the JVM from archiving the classes.
            os.pathsep.join(jars),
            "org.apache.hadoop.hive.metastore.HiveMetaStore",
            "-p",
            str(self.port),
        ]
        self._service = engine_service(
            METASTORE_SERVICE,
            argv,
            self.log_dir,
            wait=PortOpen(self.port),
            timeout_s=180,
            env={"METASTORE_CONF_DIR": str(conf)},
            cwd=self.home,
            hint="the Metastore creates its Derby database on first start; see the log above",
            after_exit=archive.settle,
            stop_grace_s=archive.stop_grace_s,
            scratch=tmp,
        ).start()

    def _settings(self) -> dict[str, str]:
        derby = self.home / "metastore_db"
        return {
            "metastore.thrift.bind.host": "127.0.0.1",
            "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={derby};create=true",
            "javax.jdo.option.ConnectionDriverName": "org.apache.derby.jdbc.EmbeddedDriver",
            "datanucleus.schema.autoCreateAll": "true",
            "metastore.schema.verification": "false",
            "metastore.warehouse.dir": self.warehouse.as_uri(),
            "metastore.warehouse.external.dir": (self.warehouse / "external").as_uri(),
            # HiveServer2 asks for notification ids at start; without this it is refused.
            "metastore.event.db.notification.api.auth": "false",
            # Async logging needs the LMAX disruptor, which the server jars do not bring.
            "metastore.async.log.enabled": "false",
        }
