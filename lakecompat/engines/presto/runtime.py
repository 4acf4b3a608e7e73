"""Presto provisioning and its server process: one single-node coordinator per run.

Presto 0.287 is the only release whose server and Hive and Hudi connectors Maven serves here
(see `docs/research/presto-and-flink.md`). Its server tarball is served but weighs 2 GB, so
the server is assembled from module jars, as Trino's is:

- the classpath: `com.facebook.presto:presto-main` and its runtime dependencies, from the
  Maven cache;
- `plugin/hive-hadoop2` and `plugin/hudi`: links to the runtime dependencies of
  `presto-hive-hadoop2` and `presto-hudi` (Presto loads each folder below `plugin.dir` as one
  plugin; their jars carry their own `META-INF/services` entry);
- ASM 9.7.1 instead of the ASM 9.0 Presto depends on, everywhere: ASM 9.0 refuses the class
  files of Java 17, on which Presto runs here;
- a small jar of lakecompat's own classes (`presto_java/`, compiled once into the cache), first
  on the classpath: a main class that keeps the JVM's JMX agent from starting (it listened on
  every interface), and drift's netty server transport with its one `bind(port)` call made to
  bind to 127.0.0.1 (drift, Presto's internal thrift server, has no address setting).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from concurrent.futures import Future
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from lakecompat.engines.infra.artifacts import (
    Dependency,
    MavenArtifact,
    ProvisioningError,
    cache_dir,
    one_at_a_time,
    resolve_classpath,
)
from lakecompat.engines.infra.class_archive import class_archive
from lakecompat.engines.infra.containers.service import engine_service
from lakecompat.engines.infra.jdk import (
    QUICK_JIT,
    Jdk,
    classes_jar,
    compile_sources,
    find_jdk,
    huge_pages,
)
from lakecompat.engines.infra.ports import service_port
from lakecompat.engines.infra.supervisor import (
    AllOf,
    FutureDone,
    HttpReady,
    Probe,
    Service,
    ServiceHolder,
    java_tmpdir,
)
from lakecompat.engines.presto.client import PrestoClient

PRESTO_VERSION = "0.287"
#: The Hudi release `presto-hudi` 0.287 and the Hive connector read with (its
#: `hudi-presto-bundle`): it reads Hudi tables of table version 6 and older only.
HUDI_VERSION = "0.14.0"
#: Presto 0.287 runs on Java 17 (Java 18 and later refuse what its Hive connector does to
#: `java.lang.reflect.Field`; JEP 416).
JAVA_VERSIONS = (17,)
ASM_VERSION = "9.7.1"
ASM_ARTIFACTS = ("asm", "asm-tree", "asm-analysis", "asm-util")
#: Plugin folder name → the Maven artifact of the connector.
PLUGINS = {"hive-hadoop2": "presto-hive-hadoop2", "hudi": "presto-hudi"}
MAIN_CLASS = "lakecompat.presto.PrestoMain"
PATCHER_CLASS = "lakecompat.presto.DriftPatcher"
#: The Java sources of lakecompat's Presto classes, below their package folders.
SOURCES = Path(__file__).with_name("presto_java")
#: Where drift's netty server transport lives (the class `DriftPatcher` rewrites).
DRIFT_JAR_PREFIX = "drift-transport-netty-"
#: What `LoopbackBind` binds drift's thrift server to.
BIND_HOST_PROPERTY = "lakecompat.bind.host"
#: The port `PrestoMain` tells the JMX module the agent uses (no socket is opened on it).
UNUSED_JMX_PORT = "1"
#: Packages Presto 0.287 needs opened on Java 17: Guice defines classes through
#: `java.lang`; the Hive connector replaces Hadoop's file system cache through
#: `java.lang.reflect`; Hudi's shaded HBase checks `java.nio` for unaligned access; Hive's
#: `StringInternUtils`, which Hudi's realtime (merge-on-read snapshot) reader loads, reaches
#: into `java.net.URI`.
OPENS = (
    "java.base/java.lang",
    "java.base/java.lang.reflect",
    "java.base/java.nio",
    "java.base/java.net",
)


def _dependency(group: str, artifact: str, version: str) -> Dependency:
    return Dependency(MavenArtifact(group, artifact, version))


def asm_dependencies() -> list[Dependency]:
    """ASM 9.7.1 as direct dependencies: nearer than the 9.0 Presto's modules bring, they win
    Maven's resolution, so every classpath holds 9.7.1 only."""
    return [_dependency("org.ow2.asm", name, ASM_VERSION) for name in ASM_ARTIFACTS]


@dataclass(frozen=True)
class PrestoInstall:
    """An assembled Presto server: classpath, plugin folder, our classes (a jar), the JDK."""

    lib: tuple[Path, ...]
    plugin_dir: Path
    own_classes: Path
    jdk: Jdk

    @property
    def classpath(self) -> list[str]:
        """Our classes first: the patched drift class must shadow drift's own."""
        return [str(self.own_classes), *map(str, self.lib)]


def provision() -> PrestoInstall:
    """Fetch (first use) and assemble Presto 0.287; later calls reuse the cache."""
    presto = "com.facebook.presto"
    lib = resolve_classpath(
        f"presto-{PRESTO_VERSION}",
        [_dependency(presto, "presto-main", PRESTO_VERSION), *asm_dependencies()],
    )
    plugins = {
        name: resolve_classpath(
            f"presto-{PRESTO_VERSION}-{name}",
            [_dependency(presto, artifact, PRESTO_VERSION), *asm_dependencies()],
        )
        for name, artifact in PLUGINS.items()
    }
    bundle = f"hudi-presto-bundle-{HUDI_VERSION}.jar"
    if not any(jar.name == bundle for jar in plugins["hudi"]):
        raise ProvisioningError(f"presto-hudi {PRESTO_VERSION} did not resolve to {bundle}")
    jdk = find_jdk(JAVA_VERSIONS, f"Presto {PRESTO_VERSION}")
    home = cache_dir() / "presto" / PRESTO_VERSION
    plugin_dir = link_plugins(home / "plugin", plugins)
    return PrestoInstall(tuple(lib), plugin_dir, own_classes(home, jdk, lib), jdk)


@one_at_a_time
def link_plugins(plugin_dir: Path, plugins: dict[str, list[Path]]) -> Path:
    """Lay out `plugin_dir/<name>/` as links into the Maven cache (no copies), once per set
    of jars (`layout.txt` beside the folder records it); folders of other plugins go."""
    stamp = plugin_dir.with_name("layout.txt")
    fingerprint = repr({name: sorted(map(str, jars)) for name, jars in sorted(plugins.items())})
    if stamp.is_file() and stamp.read_text() == fingerprint and plugin_dir.is_dir():
        return plugin_dir
    stamp.unlink(missing_ok=True)
    shutil.rmtree(plugin_dir, ignore_errors=True)
    for name, jars in plugins.items():
        folder = plugin_dir / name
        folder.mkdir(parents=True)
        for jar in jars:
            (folder / jar.name).symlink_to(jar)
    stamp.write_text(fingerprint)
    return plugin_dir


@one_at_a_time
def own_classes(home: Path, jdk: Jdk, lib: list[Path]) -> Path:
    """The jar of lakecompat's Presto classes with the rewritten drift class, made once per
    source text, drift jar and JDK."""
    sources = {
        path.relative_to(SOURCES).as_posix(): path.read_text()
        for path in sorted(SOURCES.rglob("*.java"))
    }
    drift = next((jar for jar in lib if jar.name.startswith(DRIFT_JAR_PREFIX)), None)
    if drift is None:
        raise ProvisioningError(f"Presto's classpath has no {DRIFT_JAR_PREFIX}*.jar")
    digest = hashlib.sha256(repr((sorted(sources.items()), drift.name)).encode()).hexdigest()
    classes = home / f"classes-{digest[:12]}-java{jdk.major}"
    jar = classes.with_name(f"{classes.name}.jar")
    if jar.is_file():
        return jar
    compile_sources(jdk, "lakecompat's Presto classes", sources, lib, classes)
    argv = [str(jdk.java), "-cp", os.pathsep.join([str(classes), *map(str, lib)])]
    done = subprocess.run(
        [*argv, PATCHER_CLASS, str(drift), str(classes)], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise ProvisioningError(f"rewriting drift's bind call failed:\n{done.stderr}")
    return classes_jar(classes)


def catalogs(metastore_uri: str) -> dict[str, dict[str, str]]:
    """The catalog files: Presto's Hudi connector, and its Hive connector (which reads Hudi
    tables through Hudi's input formats), both on the run's Metastore. `file:` locations need
    no setting."""
    return {
        "hudi": {"connector.name": "hudi", "hive.metastore.uri": metastore_uri},
        "hive": {"connector.name": "hive-hadoop2", "hive.metastore.uri": metastore_uri},
    }


def server_config(port: int, plugin_dir: Path, catalog_dir: Path, data_dir: Path) -> dict[str, str]:
    """`config.properties` of a single-node coordinator whose every socket is on 127.0.0.1."""
    return {
        "coordinator": "true",
        "node-scheduler.include-coordinator": "true",
        "http-server.http.port": str(port),
        # The admin connector is a second HTTP port on every interface.
        "http-server.admin.enabled": "false",
        "http-server.log.path": str(data_dir / "var" / "log" / "http-request.log"),
        "discovery-server.enabled": "true",
        "discovery.uri": f"http://127.0.0.1:{port}",
        # A 1 GB heap: the limits must leave Presto its headroom (30 % of the heap).
        "query.max-memory": "512MB",
        "query.max-memory-per-node": "384MB",
        "query.max-total-memory-per-node": "512MB",
        "plugin.dir": str(plugin_dir),
        "catalog.config-dir": str(catalog_dir),
        # Two cores: no point in more parallel work per query.
        "task.concurrency": "2",
        # What PrestoMain told the JMX module (see PrestoMain.java): no JMX socket opens.
        "jmx.rmiregistry.port": UNUSED_JMX_PORT,
        "jmx.rmiserver.port": UNUSED_JMX_PORT,
    }


def node_properties(environment: str, node_id: str, data_dir: Path) -> dict[str, str]:
    """The node's properties (system properties, as Presto's launcher passes them)."""
    return {
        "node.environment": environment,
        "node.id": node_id,
        "node.data-dir": str(data_dir),
        # The HTTP server binds here; without the internal address the node announces the
        # machine's other address and the coordinator polls it there.
        "node.bind-ip": "127.0.0.1",
        "node.internal-address": "127.0.0.1",
    }


def jvm_options() -> list[str]:
    """The JVM's options that the class archive depends on (heap, collector, JIT)."""
    return [
        "-server",
        "-Xmx1g",
        "-XX:+UseG1GC",
        QUICK_JIT,
        *huge_pages(),
        # Presto's query threads completed long chains of futures recursively and ran out of
        # the default 1 MB stack now and then (StackOverflowError in CompletableFuture).
        "-Xss4m",
        "-XX:+ExitOnOutOfMemoryError",
        "-XX:ReservedCodeCacheSize=256M",
    ]


def _write_properties(path: Path, settings: dict[str, str]) -> None:
    path.write_text("".join(f"{key}={value}\n" for key, value in settings.items()))


class PrestoServer(ServiceHolder):
    """One coordinator on 127.0.0.1 with the `hudi` and `hive` catalogs over the Metastore."""

    host = "127.0.0.1"

    def __init__(self, home: Path, log_dir: Path, install: PrestoInstall) -> None:
        self.home = home
        self.log_dir = log_dir
        self.install = install
        self.port = 0
        #: Names this server's node, so that readiness never takes another Presto that
        #: holds a reused port for ours.
        self.environment = f"lakecompat_{os.getpid()}"
        self._service: Service | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.log_dir / "presto-server.log"

    def client(self, timeout_s: float = 10.0) -> PrestoClient:
        return PrestoClient(self.url, request_timeout_s=timeout_s)

    def start(
        self, catalogs: dict[str, dict[str, str]], metastore: Future[Any] | None = None
    ) -> None:
        """Write the configuration, start the JVM, and wait until it runs a first query;
        with `metastore` (the Metastore's start, beside this one), once that has finished."""
        self.port = service_port()
        etc, data = self.home / "etc", self.home / "data"
        catalog_dir = etc / "catalog"
        catalog_dir.mkdir(parents=True, exist_ok=True)
        for old in catalog_dir.glob("*.properties"):
            old.unlink()
        for name, settings in catalogs.items():
            _write_properties(catalog_dir / f"{name}.properties", settings)
        config = server_config(self.port, self.install.plugin_dir, catalog_dir, data)
        _write_properties(etc / "config.properties", config)
        (etc / "log.properties").write_text("com.facebook.presto=INFO\n")
        node = node_properties(self.environment, f"lakecompat-{os.getpid()}", data)
        jvm = jvm_options()
        archive = class_archive("presto", self.install.jdk, self.install.classpath, jvm)
        tmp = self.home / "tmp"
        argv = [
            str(self.install.jdk.java),
            *jvm,
            *archive.flags,
            java_tmpdir(tmp),
            "-Dfile.encoding=UTF-8",
            "-Duser.timezone=UTC",
            *(f"--add-opens={package}=ALL-UNNAMED" for package in OPENS),
            f"-D{BIND_HOST_PROPERTY}=127.0.0.1",
            *(f"-D{key}={value}" for key, value in node.items()),
            f"-Dconfig={etc / 'config.properties'}",
            f"-Dlog.levels-file={etc / 'log.properties'}",
            f"-Dlog.output-file={self.log_path}",
            "-Dlog.enable-console=false",
            "-cp",
            os.pathsep.join(self.install.classpath),
            MAIN_CLASS,
        ]
        self._service = engine_service(
            "presto",
            argv,
            self.log_dir,
            wait=AllOf(
                self._info_probe(),
                *([FutureDone(metastore)] if metastore is not None else []),
                Probe(partial(self._runs_queries, list(catalogs))),
            ),
            timeout_s=240,
            cwd=self.home,
            hint=f"see {self.log_path}",
            after_exit=archive.settle,
            stop_grace_s=archive.stop_grace_s,
            scratch=tmp,
        ).start()

    def _info_probe(self, timeout_s: float = 1.0) -> HttpReady:
        return HttpReady(f"{self.url}/v1/info", self._started, timeout_s)

    def _started(self, status: int, body: bytes) -> bool:
        """Our node answers `/v1/info` and says it has finished starting."""
        return status == 200 and started(body, self.environment)

    def _runs_queries(self, catalogs: list[str]) -> bool:
        """Whether Presto runs a query in each catalog. It says it has started a few seconds
        before its scheduler knows which node serves a catalog (queries then fail with
        NO_NODES_AVAILABLE), so readiness is a first query that reads in every catalog."""
        client = self.client(timeout_s=5.0)
        for statement in ready_queries(catalogs):
            client.execute(statement)
        return True

    def responsive(self) -> bool:
        """Whether the server answers `/v1/info` within a few seconds (not frozen)."""
        if self._service is None or not self._service.running:
            return False
        return self._info_probe(5.0).ready(self._service)


def ready_queries(catalogs: list[str]) -> list[str]:
    """The queries that must run before the server counts as ready: one that reads in each
    catalog (its schemas: the Metastore answers), or `SELECT 1` without catalogs."""
    return [f"SELECT count(*) FROM {c}.information_schema.schemata" for c in catalogs] or [
        "SELECT 1"
    ]


def started(body: bytes, environment: str) -> bool:
    """Whether a `/v1/info` answer is that of a node of `environment` that has started."""
    try:
        info = json.loads(body)
    except ValueError:
        return False
    return info.get("environment") == environment and info.get("starting") is False
