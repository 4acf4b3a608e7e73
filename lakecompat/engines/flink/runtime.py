"""Flink provisioning and its process: Flink 1.17 with Hudi 0.14.0's Flink reader.

Maven serves no Flink distribution (`flink-dist`) and no Hudi Flink bundle newer than 0.14.0
(see `docs/research/presto-and-flink.md`), so the reader is assembled from:

- Flink's `lib/` folder, taken from the PyPI source package `apache-flink-libraries` (the jars
  PyFlink ships; no PyFlink is installed), downloaded once with pip;
- `hudi-flink1.17-bundle` 0.14.0, Hadoop's client jars, `commons-logging`, and `hive-exec`
  (the incremental reader needs its Parquet input format), fetched once with `mvn`;
- a small service of ours (`FlinkSqlServer.java`, compiled once with the JDK that runs it):
  one batch `TableEnvironment` with its local mini-cluster, taking SQL over HTTP on 127.0.0.1.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lakecompat.engines.infra.artifacts import (
    MavenArtifact,
    ProvisioningError,
    cache_dir,
    fetch,
    one_at_a_time,
    say_on_stderr,
)
from lakecompat.engines.infra.containers.service import engine_service
from lakecompat.engines.infra.jdk import QUICK_JIT, Jdk, compile_java, find_jdk, huge_pages
from lakecompat.engines.infra.ports import service_port
from lakecompat.engines.infra.supervisor import HttpReady, Service, ServiceHolder, java_tmpdir

FLINK_VERSION = "1.17.2"
#: The newest Hudi Flink bundle served for any Flink (none of 0.15.0 or 1.x is).
HUDI_VERSION = "0.14.0"
#: Flink's own jars come in this PyPI source package, under `deps/lib/`.
LIBRARIES = "apache-flink-libraries"
JARS = (
    MavenArtifact("org.apache.hudi", "hudi-flink1.17-bundle", HUDI_VERSION),
    MavenArtifact("org.apache.hadoop", "hadoop-client-api", "3.3.6"),
    MavenArtifact("org.apache.hadoop", "hadoop-client-runtime", "3.3.6"),
    MavenArtifact("commons-logging", "commons-logging", "1.2"),
    MavenArtifact("org.apache.hive", "hive-exec", "2.3.9"),
)
SERVER_CLASS = "lakecompat.FlinkSqlServer"
SERVER_SOURCE = Path(__file__).with_name("FlinkSqlServer.java")
#: Flink 1.17 predates Java 17's strong encapsulation; it needs these packages opened.
_OPENS = (
    "java.base/java.lang",
    "java.base/java.lang.invoke",
    "java.base/java.lang.reflect",
    "java.base/java.io",
    "java.base/java.net",
    "java.base/java.nio",
    "java.base/sun.nio.ch",
    "java.base/java.text",
    "java.base/java.time",
    "java.base/java.util",
    "java.base/java.util.concurrent",
    "java.base/java.util.concurrent.atomic",
    "java.base/jdk.internal.misc",
    "java.sql/java.sql",
)
_LOG4J = """\
rootLogger.level = WARN
rootLogger.appenderRef.console.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d %-5p %c{1} - %m%n
"""


@dataclass(frozen=True)
class FlinkInstall:
    """Flink's jars, the Hudi reader's, our compiled service and the JDK that runs them."""

    lib: tuple[Path, ...]
    server_classes: Path
    jdk: Jdk

    @property
    def classpath(self) -> str:
        return os.pathsep.join([str(self.server_classes), *map(str, self.lib)])


def provision(progress: Callable[[str], None] | None = None) -> FlinkInstall:
    """Fetch (first use) and assemble the Flink reader; later calls reuse the cache."""
    say = progress or say_on_stderr
    flink_lib = _flink_lib(say)
    jars = [fetch(artifact, say) for artifact in JARS]
    # Flink 1.17 runs on Java 11 and, with packages opened, on 17; not on 21 or later.
    jdk = find_jdk((17, 11), f"Flink {FLINK_VERSION}")
    lib = (*flink_lib, *jars)
    return FlinkInstall(lib, _compile_server(jdk, flink_lib), jdk)


@one_at_a_time
def _flink_lib(say: Callable[[str], None]) -> list[Path]:
    """Flink's `lib/` jars, copied out of the PyPI source package on first use."""
    home = cache_dir() / "flink" / FLINK_VERSION
    lib = home / "lib"
    if lib.is_dir():
        jars = sorted(lib.glob("*.jar"))
        if any(jar.name.startswith("flink-dist-") for jar in jars):
            return jars
    say(f"fetching Flink {FLINK_VERSION}'s jars ({LIBRARIES}, 226 MB) with pip (first use)")
    home.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=home) as scratch:
        argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
        argv += ["--disable-pip-version-check", "-d", scratch, f"{LIBRARIES}=={FLINK_VERSION}"]
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            raise ProvisioningError(
                f"pip could not download {LIBRARIES}=={FLINK_VERSION} (exit {done.returncode}):"
                f"\n{tail}\nHint: check that the package index is reachable."
            )
        archive = next(Path(scratch).glob(f"{LIBRARIES}-*.tar.gz"), None)
        if archive is None:
            raise ProvisioningError(f"pip reported success but left no {LIBRARIES} archive")
        partial = Path(scratch) / "lib"
        partial.mkdir()
        with tarfile.open(archive) as source:
            for member in source.getmembers():
                parts = Path(member.name).parts
                if member.isfile() and parts[1:3] == ("deps", "lib") and len(parts) == 4:
                    with source.extractfile(member) as data, (partial / parts[3]).open("wb") as out:
                        shutil.copyfileobj(data, out)
        shutil.rmtree(lib, ignore_errors=True)
        partial.replace(lib)
    jars = sorted(lib.glob("*.jar"))
    if not any(jar.name.startswith("flink-dist-") for jar in jars):
        raise ProvisioningError(f"{LIBRARIES}=={FLINK_VERSION} holds no deps/lib/flink-dist jar")
    return jars


@one_at_a_time
def _compile_server(jdk: Jdk, flink_lib: list[Path]) -> Path:
    """Compile our service once per source text and JDK."""
    source = SERVER_SOURCE.read_text()
    digest = hashlib.sha256(source.encode()).hexdigest()[:12]
    classes = cache_dir() / "flink" / FLINK_VERSION / f"server-{digest}-java{jdk.major}"
    if (classes / "lakecompat" / "FlinkSqlServer.class").is_file():
        return classes
    return compile_java(jdk, SERVER_CLASS, source, flink_lib, classes)


class FlinkProcess(ServiceHolder):
    """Our Flink SQL service on 127.0.0.1, its scratch files below `home`."""

    def __init__(self, name: str, home: Path, log_dir: Path, install: FlinkInstall) -> None:
        self.name = name
        self.home = home
        self.log_dir = log_dir
        self.install = install
        self.port = 0
        self._service: Service | None = None

    @property
    def log_path(self) -> Path:
        return self.log_dir / f"{self.name}.log"

    def start(self) -> None:
        """Start the JVM and wait until its mini-cluster has run a first query."""
        self.port = service_port()
        tmp = self.home / "tmp"
        self.home.mkdir(parents=True, exist_ok=True)
        log4j = self.home / "log4j2.properties"
        log4j.write_text(_LOG4J)
        argv = [
            str(self.install.jdk.java),
            "-Xmx2g",
            QUICK_JIT,  # small, different queries, as the other servers answer
            *huge_pages(),
            "-XX:+ExitOnOutOfMemoryError",
            "-Duser.timezone=UTC",
            "-Dfile.encoding=UTF-8",
            java_tmpdir(tmp),
            f"-Dlog4j.configurationFile={log4j}",
            *(f"--add-opens={package}=ALL-UNNAMED" for package in _OPENS),
            "-cp",
            self.install.classpath,
            SERVER_CLASS,
            str(self.port),
        ]
        self._service = engine_service(
            self.name,
            argv,
            self.log_dir,
            wait=HttpReady(f"http://127.0.0.1:{self.port}/ping"),
            timeout_s=240,
            cwd=self.home,
            hint=f"see {self.log_path}",
            scratch=tmp,
        ).start()
