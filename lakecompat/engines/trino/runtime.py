"""Trino provisioning and its server process: one single-node coordinator per run.

Maven Central serves no `trino-server-core` tarball and no plugin archives for recent releases,
only the jars of each module. The server is therefore assembled from jars, the way Trino's own
build lays it out:

- `lib`: `io.trino:trino-main` and its runtime dependencies, used directly from the Maven cache;
- `plugin/<name>`: links to the runtime dependencies of the plugin module (`trino-hudi`,
  `trino-hive`), versions pinned by Trino's BOM (`io.trino:trino-root`), without the jars the
  server itself provides to plugins, plus the small `META-INF/services` jar that the official
  plugin archive carries and the Maven jar lacks;
- `plugin/<name>/hdfs`: Trino's Hadoop file system (`io.trino:trino-hdfs`), which the tables'
  `file:` locations in the Metastore need;
- a ten-line main class of our own (`io.trino:trino-server-main` is not published either),
  compiled once with the JDK that runs Trino.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lakecompat.engines.infra.artifacts import (
    Dependency,
    MavenArtifact,
    ProvisioningError,
    cache_dir,
    resolve_classpath,
)
from lakecompat.engines.infra.class_archive import class_archive
from lakecompat.engines.infra.containers.service import engine_service
from lakecompat.engines.infra.jdk import (
    QUICK_JIT,
    Jdk,
    classes_jar,
    compile_java,
    huge_pages,
    installed_jdks,
)
from lakecompat.engines.infra.ports import service_port
from lakecompat.engines.infra.supervisor import HttpReady, Service, ServiceHolder, java_tmpdir

TRINO_VERSION_ENV = "LAKECOMPAT_TRINO_VERSION"
DEFAULT_TRINO_VERSION = "483"
#: Plugin folder name → (Maven artifact, class named in META-INF/services/io.trino.spi.Plugin).
PLUGINS = {
    "hudi": ("trino-hudi", "io.trino.plugin.hudi.HudiPlugin"),
    "hive": ("trino-hive", "io.trino.plugin.hive.HivePlugin"),
    "iceberg": ("trino-iceberg", "io.trino.plugin.iceberg.IcebergPlugin"),
}
#: The plugins every server loads; `iceberg` (339 jars, about 400 MB) only for a run that
#: reads Iceberg tables.
BASE_PLUGINS = ("hudi", "hive")
#: What the server exposes to every plugin; a plugin folder must not carry its own copy.
SERVER_PROVIDED = (
    "io.trino:trino-spi",
    "io.airlift:slice",
    "com.fasterxml.jackson.core:jackson-annotations",
    "io.opentelemetry:opentelemetry-api",
    "io.opentelemetry:opentelemetry-api-incubator",
    "io.opentelemetry:opentelemetry-common",
    "io.opentelemetry:opentelemetry-context",
    "org.locationtech.jts:jts-core",
)
#: The Hadoop file system is loaded next to a plugin that already has these.
HDFS_PROVIDED = (*SERVER_PROVIDED, "io.trino:trino-filesystem", "io.trino:trino-memory-context")
VECTOR_MODULE = "jdk.incubator.vector"
MAIN_CLASS = "lakecompat.TrinoMain"
_MAIN_SOURCE = """\
package lakecompat;

/** Starts a Trino server, as io.trino.server.TrinoServer does in the official tarball. */
public final class TrinoMain {
    private TrinoMain() {}

    public static void main(String[] args) {
        String version = io.trino.server.Server.class.getPackage().getImplementationVersion();
        new io.trino.server.Server().start(version == null ? "unknown" : version);
    }
}
"""


def _trino(artifact: str, version: str, *exclusions: str) -> Dependency:
    return Dependency(MavenArtifact("io.trino", artifact, version), exclusions)


@dataclass(frozen=True)
class TrinoInstall:
    """An assembled Trino server: classpath, plugin folder and our compiled main class (a
    jar)."""

    version: str
    lib: tuple[Path, ...]
    plugin_dir: Path
    main_classes: Path
    jdk: Jdk

    @property
    def classpath(self) -> str:
        return os.pathsep.join([str(self.main_classes), *map(str, self.lib)])


def provision(version: str | None = None, iceberg: bool = False) -> TrinoInstall:
    """Fetch (first use) and assemble Trino `version`, with the `iceberg` plugin when asked;
    later calls reuse the cache."""
    version = version or DEFAULT_TRINO_VERSION
    names = (*BASE_PLUGINS, "iceberg") if iceberg else BASE_PLUGINS
    bom = MavenArtifact("io.trino", "trino-root", version, packaging="pom")
    lib = resolve_classpath(f"trino-{version}", [_trino("trino-main", version)], bom=bom)
    jdk = trino_jdk(version, lib)
    home = cache_dir() / "trino" / version
    plugins = {
        name: resolve_classpath(
            f"trino-{version}-{name}", [_trino(artifact, version, *SERVER_PROVIDED)], bom=bom
        )
        for name, (artifact, _) in PLUGINS.items()
        if name in names
    }
    hdfs = resolve_classpath(
        f"trino-{version}-hdfs", [_trino("trino-hdfs", version, *HDFS_PROVIDED)], bom=bom
    )
    plugin_dir = _link_plugins(home, version, plugins, hdfs, "-iceberg" if iceberg else "")
    main_classes = classes_jar(_compile_main(home / "main", jdk, lib))
    return TrinoInstall(version, tuple(lib), plugin_dir, main_classes, jdk)


def required_java(lib: list[Path]) -> int:
    """The Java release trino-main was compiled for (its class file version minus 44)."""
    main = next((jar for jar in lib if jar.name.startswith("trino-main-")), None)
    if main is None:
        raise ProvisioningError("the resolved Trino classpath has no trino-main jar")
    with zipfile.ZipFile(main) as jar:
        header = jar.read("io/trino/server/Server.class")[:8]
    return int.from_bytes(header[6:8], "big") - 44


def trino_jdk(version: str, lib: list[Path]) -> Jdk:
    """The oldest installed JDK that can run this Trino (its Java release and the Vector API)."""
    needed = required_java(lib)
    candidates = sorted((j for j in installed_jdks() if j.major >= needed), key=lambda j: j.major)
    for jdk in candidates:
        if _has_module(jdk, VECTOR_MODULE):
            return jdk
    seen = ", ".join(f"{j.home} (Java {j.major})" for j in installed_jdks()) or "none"
    raise ProvisioningError(
        f"Trino {version} needs a full JDK of Java {needed} or newer with the {VECTOR_MODULE} "
        f"module (found: {seen}). Install one, for example Temurin {needed} under /usr/lib/jvm, "
        f"or choose an older Trino with {TRINO_VERSION_ENV}."
    )


def _has_module(jdk: Jdk, module: str) -> bool:
    try:
        listed = subprocess.run(
            [str(jdk.java), "--list-modules"], capture_output=True, text=True, timeout=60
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return any(line.split("@")[0] == module for line in listed.splitlines())


def _link_plugins(
    home: Path, version: str, plugins: dict[str, list[Path]], hdfs: list[Path], suffix: str = ""
) -> Path:
    """Lay out `plugin<suffix>/<name>/` as links into the Maven cache (no copies: ~600 MB
    saved); each set of plugins has a folder of its own (`suffix`), so that runs with and
    without Iceberg's plugin do not relink each other's.

    Every plugin's `hdfs` folder is a link to one shared `hdfs<suffix>` folder beside it.
    """
    plugin_dir = home / f"plugin{suffix}"
    shared_hdfs = home / f"hdfs{suffix}"
    wanted = {name: sorted(jars) for name, jars in plugins.items()}
    stamp = home / f"layout{suffix}.txt"
    fingerprint = repr((wanted, sorted(hdfs)))
    if stamp.is_file() and stamp.read_text() == fingerprint:
        return plugin_dir
    stamp.unlink(missing_ok=True)
    for old in (plugin_dir, shared_hdfs):
        if old.exists():
            shutil.rmtree(old)
    shared_hdfs.mkdir(parents=True)
    for jar in hdfs:
        (shared_hdfs / jar.name).symlink_to(jar)
    for name, jars in wanted.items():
        folder = plugin_dir / name
        folder.mkdir(parents=True)
        for jar in jars:
            (folder / jar.name).symlink_to(jar)
        (folder / "hdfs").symlink_to(shared_hdfs)
        with zipfile.ZipFile(folder / f"trino-{name}-{version}-services.jar", "w") as services:
            services.writestr("META-INF/services/io.trino.spi.Plugin", PLUGINS[name][1] + "\n")
    stamp.write_text(fingerprint)
    return plugin_dir


def _compile_main(folder: Path, jdk: Jdk, lib: list[Path]) -> Path:
    """Compile our main class once per Trino version and JDK."""
    classes = folder / f"classes-java{jdk.major}"
    if (classes / "lakecompat" / "TrinoMain.class").is_file():
        return classes
    folder.mkdir(parents=True, exist_ok=True)
    return compile_java(jdk, MAIN_CLASS, _MAIN_SOURCE, lib, classes)


class TrinoServer(ServiceHolder):
    """One coordinator on 127.0.0.1 with the `hudi` and `hive` catalogs over the Metastore."""

    host = "127.0.0.1"
    scheme = "http"
    #: The cursor of the query running now (a hung query kills the whole server instead).
    current: Any = None

    def __init__(self, home: Path, log_dir: Path, install: TrinoInstall) -> None:
        self.home = home
        self.log_dir = log_dir
        self.install = install
        self.port = 0
        self.node_id = f"lakecompat-{os.getpid()}"
        self._service: Service | None = None

    @property
    def log_path(self) -> Path:
        return self.log_dir / "trino.log"

    def start(self, catalogs: dict[str, dict[str, str]]) -> None:
        """Write the configuration, start the JVM and wait until it is no longer starting."""
        self.port = service_port()
        etc = self.home / "etc"
        catalog_dir = etc / "catalog"
        catalog_dir.mkdir(parents=True, exist_ok=True)
        for old in catalog_dir.glob("*.properties"):
            old.unlink()
        for name, settings in catalogs.items():
            _write_properties(catalog_dir / f"{name}.properties", settings)
        _write_properties(etc / "config.properties", self._config(catalog_dir))
        (etc / "log.properties").write_text("io.trino=INFO\n")
        jvm = [
            "-server",
            # Trino's share of the 24 GiB, next to Spark (4 GiB), the Metastore and HiveServer2.
            "-Xmx3g",
            "-XX:+UseG1GC",
            QUICK_JIT,
            *huge_pages(),
            "-XX:+ExitOnOutOfMemoryError",
            "-XX:ReservedCodeCacheSize=256M",
        ]
        classpath = self.install.classpath.split(os.pathsep)
        archive = class_archive("trino", self.install.jdk, classpath, jvm)
        tmp = self.home / "tmp"
        argv = [
            str(self.install.jdk.java),
            *jvm,
            *archive.flags,
            java_tmpdir(tmp),
            "-Djdk.attach.allowAttachSelf=true",
            "-Dfile.encoding=UTF-8",
            "-Duser.timezone=UTC",
            f"--add-modules={VECTOR_MODULE}",
            "--enable-native-access=ALL-UNNAMED",
            "-Dnode.environment=lakecompat",
            f"-Dnode.id={self.node_id}",
            f"-Dnode.data-dir={self.home / 'data'}",
            "-Dnode.bind-ip=127.0.0.1",
            "-Dnode.internal-address=127.0.0.1",
            f"-Dconfig={etc / 'config.properties'}",
            f"-Dlog.levels-file={etc / 'log.properties'}",
            # The server log goes to the run's logs folder, not to the console.
            f"-Dlog.output-file={self.log_dir / 'trino-server.log'}",
            "-Dlog.enable-console=false",
            "-cp",
            self.install.classpath,
            MAIN_CLASS,
        ]
        self._service = engine_service(
            "trino",
            argv,
            self.log_dir,
            wait=HttpReady(f"http://127.0.0.1:{self.port}/v1/info", self._started),
            timeout_s=240,
            cwd=self.home,
            hint=f"see {self.log_dir / 'trino-server.log'}; exit code 100 means a startup check "
            "or the configuration failed",
            after_exit=archive.settle,
            stop_grace_s=archive.stop_grace_s,
            scratch=tmp,
        ).start()

    def responsive(self) -> bool:
        """Whether the server answers `/v1/info` within a few seconds (not frozen or wedged)."""
        if self._service is None or not self._service.running:
            return False
        probe = HttpReady(f"http://127.0.0.1:{self.port}/v1/info", self._started, 5.0)
        return probe.ready(self._service)

    def _started(self, status: int, body: bytes) -> bool:
        """Our node (not another Trino on a reused port) answers and has finished starting."""
        if status != 200:
            return False
        info = json.loads(body)
        return info.get("nodeId") == self.node_id and info.get("starting") is False

    def _config(self, catalog_dir: Path) -> dict[str, str]:
        return {
            "coordinator": "true",
            "node-scheduler.include-coordinator": "true",
            "http-server.http.port": str(self.port),
            "discovery.uri": f"http://127.0.0.1:{self.port}",
            "query.max-memory": "1GB",
            "query.max-memory-per-node": "1GB",
            "plugin.dir": str(self.install.plugin_dir),
            "catalog.config-dir": str(catalog_dir),
            # Two cores: no point in more parallel work per query.
            "task.concurrency": "2",
        }


def _write_properties(path: Path, settings: dict[str, str]) -> None:
    path.write_text("".join(f"{key}={value}\n" for key, value in settings.items()))
