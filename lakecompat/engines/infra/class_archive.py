"""Class data sharing for the JVM services: a server starts from an archive of the classes it
loaded the last time it ran, instead of finding, parsing and verifying them again.

The first start of a server on a machine (for one JDK and one classpath) writes the archive
when the JVM exits (`-XX:ArchiveClassesAtExit`); every later start maps it
(`-XX:SharedArchiveFile`). Trino's start fell from 8.8 to 5.9 CPU-seconds with it. The archive
holds the classes as they are in the jars, so nothing a server computes changes. A JVM that
cannot use an archive (another JDK build, a jar replaced) says so in its log and starts
without it, as before.

Archives live in `class-archives/` in lakecompat's cache, named after everything they depend
on. Each JVM writes to a file of its own, renamed into place only after a clean exit, so two
processes starting the same server at once (shards) never share a half-written archive.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from lakecompat.engines.infra.artifacts import cache_dir
from lakecompat.engines.infra.jdk import Jdk

FOLDER = "class-archives"
#: `LAKECOMPAT_CLASS_ARCHIVES=off` starts every server without an archive.
SWITCH = "LAKECOMPAT_CLASS_ARCHIVES"
#: An archive no start used for this long is deleted (another release's, say).
UNUSED_DAYS = 30
#: Archives kept of one server and Java release, the most recently used: each new classpath
#: (a new release, a project's new virtual environment with PySpark's jars) makes another.
KEPT_PER_SERVER = 4
#: Seconds a stop waits for a server that writes its archive at exit (then SIGKILL, and no
#: archive): Trino took 31 s to exit on two cores busy with a run, HiveServer2 longer than 10.
WRITING_GRACE_S = 90.0
#: The first bytes of a dynamic archive the JVM wrote to the end (HotSpot's magic number).
_MAGIC = (0xF00BABA8).to_bytes(4, "little")
#: The JVM says nothing about archives in the server's log: it would list every class it
#: leaves out (generated proxies, classes of plugin class loaders), and a JVM that cannot
#: use an archive starts without it anyway.
QUIET = "-Xlog:cds=off,cds+dynamic=off"


@dataclass(frozen=True)
class ClassArchive:
    """The archive of one server's classes: used when it exists, written at exit otherwise.
    Without a `path` there is none (switched off, or a classpath the JVM cannot archive)."""

    path: Path | None
    #: Where this JVM writes the archive at exit (None: it maps the existing one).
    pending: Path | None = None

    @property
    def flags(self) -> list[str]:
        """The JVM options that map the archive or have it written (none without one)."""
        if self.path is None:
            return []
        if self.pending is None:
            return [f"-XX:SharedArchiveFile={self.path}", QUIET]
        return [f"-XX:ArchiveClassesAtExit={self.pending}", QUIET]

    @property
    def stop_grace_s(self) -> float:
        """How long a stop waits for the server to exit: a JVM writing its archive at exit
        needs far longer than one that only maps it (Trino: 30 s on two busy cores)."""
        return WRITING_GRACE_S if self.pending is not None else 10.0

    def settle(self, exit_code: int | None) -> None:
        """After the JVM ended: keep the archive it wrote if it exited by itself (a JVM ended by
        SIGKILL, code < 0, may have left half a file), else delete what it left."""
        if self.path is None or self.pending is None:
            return
        try:
            whole = exit_code is not None and exit_code >= 0 and _starts_right(self.pending)
            if whole and not self.path.exists():
                self.pending.replace(self.path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                self.pending.unlink()


#: What a server starts with when it has no archive: no flags, nothing to keep.
NO_ARCHIVE = ClassArchive(None)


def class_archive(name: str, jdk: Jdk, classpath: list[str], options: list[str]) -> ClassArchive:
    """The archive for server `name` started by `jdk` with `classpath` and JVM `options`; none
    (`NO_ARCHIVE`) when switched off or where the JVM cannot archive (a folder of classes on
    the classpath)."""
    if os.environ.get(SWITCH, "").strip().lower() in ("0", "off", "no", "false"):
        return NO_ARCHIVE
    entries = [Path(entry) for entry in classpath]
    if any(entry.is_dir() and any(entry.iterdir()) for entry in entries):
        return NO_ARCHIVE
    digest = hashlib.sha256()
    release = jdk.home / "release"
    digest.update(str(jdk.home).encode())
    digest.update(release.read_bytes() if release.is_file() else b"")
    digest.update("\0".join(options).encode())
    for entry in entries:
        stat = entry.stat() if entry.exists() else None
        digest.update(f"\0{entry}\0{stat and stat.st_size}\0{stat and stat.st_mtime_ns}".encode())
    folder = cache_dir() / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-java{jdk.major}-{digest.hexdigest()[:16]}.jsa"
    _prune(folder, keep=path, server=f"{name}-java{jdk.major}-")
    if _starts_right(path):
        path.touch()  # in use: not pruned
        return ClassArchive(path)
    return ClassArchive(path, path.with_name(f"{path.name}.{os.getpid()}-{uuid.uuid4().hex}.part"))


def _prune(folder: Path, keep: Path, server: str) -> None:
    """Delete archives unused for `UNUSED_DAYS`, the server's beyond its `KEPT_PER_SERVER`
    most recently used (with `keep`), and what JVMs that never ended left a day ago."""
    now = time.time()
    ages: dict[Path, float] = {}
    for path in folder.iterdir():
        try:
            ages[path] = now - path.stat().st_mtime
        except FileNotFoundError:  # another process pruned or renamed it
            continue
    own = sorted(
        (p for p in ages if p.suffix == ".jsa" and p.name.startswith(server) and p != keep),
        key=ages.__getitem__,
    )
    surplus = set(own[KEPT_PER_SERVER - 1 :])
    for path, age in ages.items():
        unused = path.suffix == ".jsa" and age > UNUSED_DAYS * 86400
        left = path.suffix == ".part" and age > 86400
        if path != keep and (unused or left or path in surplus):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


def _starts_right(path: Path) -> bool:
    """Whether `path` begins like an archive the JVM finished writing."""
    try:
        with path.open("rb") as file:
            return file.read(4) == _MAGIC
    except OSError:
        return False
