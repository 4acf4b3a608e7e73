"""The artifact cache: one directory for every download, JVM artifacts fetched through `mvn`.

Maven knows where Maven Central is and verifies checksums; `--strict-checksums` makes a
mismatch fail the download instead of warning. An artifact already in the cache is used
without starting Maven, so a second run downloads nothing; but before it is used, its SHA-1 is
compared with the one Maven recorded beside it (`<file>.sha1`), so a file damaged in the cache
is deleted and fetched again. A file's check is remembered in `<cache>/verified.json` until
its size or modification time changes.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from xml.etree import ElementTree

CACHE_ENV = "LAKECOMPAT_CACHE"


class ProvisioningError(RuntimeError):
    """Something the run needs could not be found or fetched; the message says what to do."""


_F = TypeVar("_F", bound=Callable[..., Any])
#: Engines start in parallel threads, and two lakecompat processes (two shards on one
#: machine, the test suite's workers) may share the cache: provisioning (Maven, the checksum
#: memo, the libraries' environments) goes one at a time, so that no two ever write the same
#: cache files at once. The thread lock orders this process's threads; the lock file,
#: held by the outermost call, orders the processes.
_PROVISIONING = threading.RLock()
_DEPTH = 0
_LOCK_FILE = "provisioning.lock"
#: Seconds a wait for the provisioning lock goes unsaid: a process checking that its jars are
#: cached holds it that briefly.
QUIET_WAIT = 5.0


def one_at_a_time(function: _F) -> _F:
    """Run `function` while holding the provisioning lock (this process's and the cache's)."""

    @functools.wraps(function)
    def locked(*args: Any, **kwargs: Any) -> Any:
        with _PROVISIONING, _cache_lock():
            return function(*args, **kwargs)

    return locked  # type: ignore[return-value]


@contextlib.contextmanager
def _cache_lock() -> Iterator[None]:
    """Hold `<cache>/provisioning.lock` (held by the thread that holds `_PROVISIONING`);
    waiting for another process (another run's download, or a moment for this run's own Spark
    processes checking their jars) says so once it lasts `QUIET_WAIT` seconds."""
    global _DEPTH
    if _DEPTH:
        _DEPTH += 1
        try:
            yield
        finally:
            _DEPTH -= 1
        return
    path = cache_dir() / _LOCK_FILE
    with path.open("a") as handle:
        if not _try_lock(handle, QUIET_WAIT):
            say_on_stderr(f"waiting for another lakecompat process to finish fetching ({path})")
            fcntl.flock(handle, fcntl.LOCK_EX)
        _DEPTH = 1
        try:
            yield
        finally:
            _DEPTH = 0
            fcntl.flock(handle, fcntl.LOCK_UN)


def _try_lock(handle: Any, seconds: float) -> bool:
    """Take the lock of `handle`'s file within `seconds`; False when another holds it still."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)


def cache_dir() -> Path:
    """The cache root: `$LAKECOMPAT_CACHE`, else `~/.cache/lakecompat`."""
    root = Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "lakecompat")
    root.mkdir(parents=True, exist_ok=True)
    return root


@dataclass(frozen=True)
class MavenArtifact:
    """Maven coordinates of one file."""

    group: str
    artifact: str
    version: str
    packaging: str = "jar"
    classifier: str | None = None

    @property
    def coords(self) -> str:
        parts = [self.group, self.artifact, self.version, self.packaging]
        return ":".join([*parts, self.classifier] if self.classifier else parts)

    @property
    def filename(self) -> str:
        suffix = f"-{self.classifier}" if self.classifier else ""
        return f"{self.artifact}-{self.version}{suffix}.{self.packaging}"

    def local_path(self, repo: Path) -> Path:
        """Where Maven's local repository layout keeps this file."""
        return repo.joinpath(*self.group.split("."), self.artifact, self.version, self.filename)


def maven_repo() -> Path:
    """The Maven local repository inside the cache (plugins and artifacts alike)."""
    return cache_dir() / "m2"


@one_at_a_time
def fetch(artifact: MavenArtifact, progress: Callable[[str], None] | None = None) -> Path:
    """The cached file of `artifact`, downloading it with `mvn dependency:get` on first use."""
    path = artifact.local_path(maven_repo())
    say = progress or say_on_stderr
    if path.is_file() and not _drop_damaged([path], say):
        return path
    say(f"fetching {artifact.coords} with mvn (first use; cached in {maven_repo()})")
    _run_maven(
        [
            "dependency:get",
            f"-Dartifact={artifact.coords}",
            "-Dtransitive=false",
        ],
        say,
    )
    if not path.is_file():
        raise ProvisioningError(f"mvn reported success but {path} is missing")
    if _drop_damaged([path], say):
        raise ProvisioningError(f"{path} was fetched again and still does not match its SHA-1")
    return path


@dataclass(frozen=True)
class Dependency:
    """One direct dependency of a generated classpath, with the artifacts to leave out."""

    artifact: MavenArtifact
    exclusions: tuple[str, ...] = ()  # "group:artifact", "*" allowed as either part


@one_at_a_time
def resolve_classpath(
    name: str,
    dependencies: list[Dependency],
    progress: Callable[[str], None] | None = None,
    bom: MavenArtifact | None = None,
) -> list[Path]:
    """The runtime classpath of `dependencies` (transitively), resolved by Maven once.

    A small POM is generated under `<cache>/classpaths/<name>/` and Maven writes the resolved
    jar list beside it; later calls read that list and start no Maven at all. `bom` is a
    POM whose dependency versions are imported, the way the project's own build pins them.
    """
    folder = cache_dir() / "classpaths" / name
    listing = folder / "classpath.txt"
    pom = _pom(name, dependencies, bom)
    say = progress or say_on_stderr
    if listing.is_file() and (folder / "pom.xml").read_text() == pom:
        jars = [Path(p) for p in listing.read_text().strip().split(os.pathsep) if p]
        if jars and all(j.is_file() for j in jars) and not _drop_damaged(jars, say):
            return jars
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pom.xml").write_text(pom)
    say(f"resolving the {name} classpath with mvn (first use; cached in {maven_repo()})")
    partial = folder / "classpath.partial"
    _run_maven(
        [
            "-f",
            str(folder / "pom.xml"),
            "dependency:build-classpath",
            "-Dmdep.includeScope=runtime",
            f"-Dmdep.outputFile={partial}",
        ],
        say,
    )
    partial.replace(listing)
    jars = [Path(p) for p in listing.read_text().strip().split(os.pathsep) if p]
    damaged = _drop_damaged(jars, say)
    if damaged:
        raise ProvisioningError(
            f"{damaged[0]} was fetched again and still does not match its SHA-1"
        )
    return jars


@one_at_a_time
def excerpt_jar(jar: Path, prefix: str, progress: Callable[[str], None] | None = None) -> Path:
    """A small jar holding the manifest of the cached `jar` and its entries below `prefix`.

    It is made once, named after the jar and its recorded SHA-1 (a newer jar gets a new one),
    and written beside its final name, then renamed, so a file that exists is whole.
    """
    digest = recorded_sha1(jar)
    label = prefix.strip("/").replace("/", ".")
    name = f"{jar.stem}-{digest[:12] if digest else jar.stat().st_size}-{label}.jar"
    target = cache_dir() / "excerpts" / name
    if target.is_file():
        return target
    (progress or say_on_stderr)(f"copying {prefix}* out of {jar.name} into {target.parent}")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    try:
        with zipfile.ZipFile(jar) as source:
            names = [n for n in source.namelist() if n.startswith(prefix)]
            if names:
                with zipfile.ZipFile(partial, "w") as excerpt:
                    for entry in ["META-INF/MANIFEST.MF", *names]:
                        excerpt.writestr(source.getinfo(entry), source.read(entry))
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        partial.unlink(missing_ok=True)
        raise ProvisioningError(f"could not copy {prefix}* out of {jar}: {exc}") from exc
    if not names:
        raise ProvisioningError(f"{jar} has no entries below {prefix}")
    partial.replace(target)
    return target


def recorded_sha1(path: Path) -> str | None:
    """The SHA-1 Maven recorded beside `path` (`<file>.sha1`): None when there is no such
    file, "" when it is empty."""
    recorded = path.with_name(path.name + ".sha1")
    if not recorded.is_file():
        return None
    words = recorded.read_text(encoding="ascii", errors="replace").split()
    return words[0].lower() if words else ""


def sha1_matches(path: Path) -> bool:
    """Whether `path` has the SHA-1 Maven recorded beside it (True when none is recorded)."""
    expected = recorded_sha1(path)
    if expected is None:
        return True
    if not expected:
        return False
    digest = hashlib.sha1(usedforsecurity=False)
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest() == expected


@one_at_a_time
def _drop_damaged(paths: list[Path], say: Callable[[str], None]) -> list[Path]:
    """Check `paths` against their recorded SHA-1; delete the damaged ones and return them.

    A file checked before and unchanged since (same size and modification time) is not read
    again.
    """
    memo_path = cache_dir() / "verified.json"
    try:
        memo: dict[str, list[int]] = json.loads(memo_path.read_text())
    except (OSError, ValueError):
        memo = {}
    damaged = []
    for path in paths:
        stat = path.stat()
        stamp = [stat.st_size, stat.st_mtime_ns]
        if memo.get(str(path)) == stamp:
            continue
        if sha1_matches(path):
            memo[str(path)] = stamp
            continue
        say(f"{path} does not match its recorded SHA-1 (damaged in the cache); fetching it again")
        memo.pop(str(path), None)
        for stale in (path, path.with_name(path.name + ".sha1")):
            stale.unlink(missing_ok=True)
        damaged.append(path)
    partial = memo_path.with_name(f"verified.{os.getpid()}.{threading.get_ident()}.partial")
    partial.write_text(json.dumps(memo, sort_keys=True))
    partial.replace(memo_path)
    return damaged


def _pom(name: str, dependencies: list[Dependency], bom: MavenArtifact | None = None) -> str:
    entries = "".join(_pom_dependency(d) for d in dependencies)
    managed = ""
    if bom is not None:
        managed = (
            "  <dependencyManagement><dependencies><dependency>"
            f"<groupId>{bom.group}</groupId><artifactId>{bom.artifact}</artifactId>"
            f"<version>{bom.version}</version><type>pom</type><scope>import</scope>"
            "</dependency></dependencies></dependencyManagement>\n"
        )
    return (
        "<project>\n"
        "  <modelVersion>4.0.0</modelVersion>\n"
        f"  <groupId>lakecompat.provision</groupId><artifactId>{name}</artifactId>\n"
        "  <version>1</version><packaging>pom</packaging>\n"
        f"{managed}"
        f"  <dependencies>\n{entries}  </dependencies>\n</project>\n"
    )


def _pom_dependency(dep: Dependency) -> str:
    art = dep.artifact
    excluded = "".join(
        f"<exclusion><groupId>{g}</groupId><artifactId>{a}</artifactId></exclusion>"
        for g, a in (e.split(":") for e in dep.exclusions)
    )
    classifier = f"<classifier>{art.classifier}</classifier>" if art.classifier else ""
    return (
        f"    <dependency><groupId>{art.group}</groupId><artifactId>{art.artifact}</artifactId>"
        f"<version>{art.version}</version><type>{art.packaging}</type>{classifier}"
        f"<exclusions>{excluded}</exclusions></dependency>\n"
    )


@one_at_a_time
def check_release(artifact: MavenArtifact, setting: str, what: str) -> None:
    """Raise `ProvisioningError` in one sentence when `artifact`'s version is not released:
    `setting` is how the user set it (`--hudi-version 9.9`), `what` names the product (`Hudi`).

    A file already in the cache is released. Otherwise Maven lists the releases (its
    output goes to a log file, not the console); asking costs seconds, fetching the artifact
    itself may cost minutes, and a missing one would fail only after the engines started.
    """
    if artifact.local_path(maven_repo()).is_file():
        return
    released = released_versions(artifact)
    if artifact.version not in released:
        shown = ", ".join(released[-8:]) or "none"
        raise ProvisioningError(
            f"{setting}: there is no {what} release {artifact.version} "
            f"({artifact.group}:{artifact.artifact}); the latest releases are: {shown}"
        )


def released_versions(artifact: MavenArtifact) -> list[str]:
    """Every released version of `artifact`'s group and name, oldest first, as the Maven
    repositories list them; Maven's output goes to `<cache>/logs/releases-<name>.log`."""
    folder = cache_dir() / "releases" / f"{artifact.group}-{artifact.artifact}"
    folder.mkdir(parents=True, exist_ok=True)
    # Resolving a version range makes Maven fetch the list of versions (its metadata file).
    # The range holds the asked release alone: a range of every release would have Maven
    # resolve the newest one's POM, whose imported BOMs are hundreds of downloads for Trino.
    only = MavenArtifact(artifact.group, artifact.artifact, f"[{artifact.version}]", "pom")
    (folder / "pom.xml").write_text(_pom("releases", [Dependency(only)]))
    log = cache_dir() / "logs" / f"releases-{artifact.artifact}.log"
    log.parent.mkdir(exist_ok=True)
    argv = [_mvn(), "-B", f"-Dmaven.repo.local={maven_repo()}", "dependency:list"]
    with log.open("w") as output:
        done = subprocess.run(argv, stdout=output, stderr=subprocess.STDOUT, cwd=folder)
    listed = maven_repo().joinpath(*artifact.group.split("."), artifact.artifact)
    versions = [
        found.text.strip()
        for metadata in sorted(listed.glob("maven-metadata-*.xml"))
        for found in ElementTree.parse(metadata).iter("version")
        if found.text
    ]
    if done.returncode != 0 and not versions:
        raise ProvisioningError(
            f"Maven could not list the releases of {artifact.group}:{artifact.artifact} "
            f"(exit {done.returncode}; its output is in {log}); is Maven Central reachable?"
        )
    return list(dict.fromkeys(versions))


def _mvn() -> str:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ProvisioningError(
            "Maven (`mvn`) is not on PATH; it fetches the engines' JVM artifacts. "
            "Install it (Debian package `maven`) and run again."
        )
    return mvn


def _run_maven(goal_args: list[str], say: Callable[[str], None]) -> None:
    argv = [_mvn(), "-B", "--strict-checksums", f"-Dmaven.repo.local={maven_repo()}", *goal_args]
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cache_dir()
    )
    assert proc.stdout is not None
    tail: list[str] = []
    for line in proc.stdout:
        line = line.rstrip()
        tail = [*tail[-29:], line]
        if "Downloaded" in line and (".jar" in line or ".tar.gz" in line):
            say("  " + line.split("] ", 1)[-1])
    if proc.wait() != 0:
        raise ProvisioningError(
            f"mvn {' '.join(goal_args)} failed (exit {proc.returncode}). Last output:\n"
            + "\n".join(tail)
            + "\nHint: check that Maven Central is reachable and the version exists."
        )


def say_on_stderr(message: str) -> None:
    """Print a provisioning message on standard error."""
    print(message, file=sys.stderr, flush=True)
