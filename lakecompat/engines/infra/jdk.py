"""Finding an installed JDK of the Java version an engine needs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from lakecompat.engines.infra.artifacts import ProvisioningError

JVM_ROOT = Path("/usr/lib/jvm")
#: For the servers that answer many small, different requests (the Metastore, HiveServer2,
#: Trino): only the quick JIT compiler. The optimising one spent more CPU compiling than it
#: saved (HiveServer2: 0.34 → 0.24 CPU seconds per query at the same latency); both cores
#: are needed for the queries. Spark's writes keep both compilers: they got slower without.
QUICK_JIT = "-XX:TieredStopAtLevel=1"
#: Where Linux says when it gives a process transparent huge pages: `always`, on request
#: (`madvise`) or `never`, the chosen one in brackets.
THP_MODE = Path("/sys/kernel/mm/transparent_hugepage/enabled")
_VERSION = re.compile(r'^JAVA_VERSION="(\d+)(?:\.(\d+))?')


@dataclass(frozen=True)
class Jdk:
    """An installed JDK: its home directory and major Java version."""

    home: Path
    major: int

    @property
    def java(self) -> Path:
        return self.home / "bin" / "java"

    def describe(self) -> str:
        """`Java 17.0.15 (<home>)`: the full version from `<home>/release`, for bug reports."""
        release = (self.home / "release").read_text(errors="replace")
        found = re.search(r'^JAVA_VERSION="([^"]+)"', release, re.MULTILINE)
        return f"Java {found.group(1) if found else self.major} ({self.home})"


@lru_cache(maxsize=4)
def huge_pages(mode_file: Path = THP_MODE) -> tuple[str, ...]:
    """The JVM option that asks for transparent huge pages for the heap and the compiled code,
    where the kernel gives them only on request (`madvise`); nothing where it gives them anyway
    (`always`), never does, or does not say. Every JVM a run starts takes it: the same work in
    fewer page faults and TLB misses (runs on cached tables took 0.94 to 0.98 of the CPU:
    `docs/research/README.md`); what an engine reads or writes does not change."""
    try:
        mode = mode_file.read_text()
    except OSError:
        return ()
    return ("-XX:+UseTransparentHugePages",) if "[madvise]" in mode else ()


def jdk_major(home: Path) -> int | None:
    """The major version from `<home>/release`, or None when `home` is not a JDK."""
    release = home / "release"
    if not (home / "bin" / "java").is_file() or not release.is_file():
        return None
    for line in release.read_text(errors="replace").splitlines():
        match = _VERSION.match(line)
        if match:
            first = int(match.group(1))
            # Java 8 and older spell themselves "1.8".
            return int(match.group(2) or 0) if first == 1 else first
    return None


def installed_jdks() -> list[Jdk]:
    """Every JDK found via $JAVA_HOME, `java` on PATH and /usr/lib/jvm, without duplicates."""
    homes: list[Path] = []
    if os.environ.get("JAVA_HOME"):
        homes.append(Path(os.environ["JAVA_HOME"]))
    on_path = shutil.which("java")
    if on_path:
        homes.append(Path(on_path).resolve().parent.parent)
    if JVM_ROOT.is_dir():
        homes.extend(sorted(JVM_ROOT.iterdir()))
    found: dict[Path, Jdk] = {}
    for home in homes:
        major = jdk_major(home)
        real = home.resolve()
        if major is not None and real not in found:
            found[real] = Jdk(real, major)
    return list(found.values())


def find_jdk(allowed: tuple[int, ...], purpose: str) -> Jdk:
    """The first installed JDK whose major version is in `allowed` (in order of preference)."""
    jdks = installed_jdks()
    for major in allowed:
        for jdk in jdks:
            if jdk.major == major:
                return jdk
    seen = ", ".join(f"{j.home} (Java {j.major})" for j in jdks) or "none"
    wanted = " or ".join(str(m) for m in allowed)
    raise ProvisioningError(
        f"{purpose} needs Java {wanted}, but no such JDK is installed (found: {seen}). "
        f"Install one (for example the Debian package openjdk-{allowed[0]}-jdk-headless) "
        "or point JAVA_HOME at it."
    )


def compile_java(
    jdk: Jdk,
    class_name: str,
    source: str,
    classpath: Iterable[Path],
    target: Path,
    release: int | None = None,
) -> Path:
    """Compile one Java class of ours (`class_name`, e.g. `lakecompat.Main`) into `target`.

    The classes are written beside `target`, then renamed, so a `target` that exists is whole.
    """
    return compile_sources(
        jdk,
        class_name,
        {class_name.replace(".", "/") + ".java": source},
        classpath,
        target,
        release,
    )


def compile_sources(
    jdk: Jdk,
    label: str,
    sources: dict[str, str],
    classpath: Iterable[Path],
    target: Path,
    release: int | None = None,
) -> Path:
    """Compile Java sources of ours (by path below the source root, `a/b/C.java`) into the
    classes folder `target`; `label` names them in errors. The classes are written beside
    `target`, then renamed, so a `target` that exists is whole."""
    javac = jdk.home / "bin" / "javac"
    if not javac.is_file():
        raise ProvisioningError(
            f"{jdk.home} is a Java runtime without javac; compiling {label} needs a full JDK"
        )
    build = target.with_name(f"{target.name}.{os.getpid()}.partial")
    shutil.rmtree(build, ignore_errors=True)
    files = []
    for relative, source in sources.items():
        file = build / "src" / relative
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(source)
        files.append(str(file))
    argv = [str(javac), *(["--release", str(release)] if release else [])]
    argv += ["-d", str(build / "classes"), "-cp", os.pathsep.join(map(str, classpath)), *files]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise ProvisioningError(f"compiling {label} failed:\n{done.stderr}")
        shutil.rmtree(target, ignore_errors=True)
        (build / "classes").replace(target)
    finally:
        shutil.rmtree(build, ignore_errors=True)
    return target


def classes_jar(classes: Path) -> Path:
    """`classes` (a folder of compiled classes) as a jar beside it, made once: a JVM archives
    the classes of jars only (see `class_archive.py`)."""
    jar = classes.with_name(f"{classes.name}.jar")
    if jar.is_file():
        return jar
    partial = jar.with_name(f"{jar.name}.{os.getpid()}.partial")
    with zipfile.ZipFile(partial, "w") as archive:
        for path in sorted(classes.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(classes).as_posix())
    partial.replace(jar)
    return jar
