"""The images lakecompat builds itself, with no image registry: Debian plus an engine's JDK.

- `base_image`: Debian bookworm made by `debootstrap --variant=minbase` from the Debian mirror
  this machine's apt uses (or `LAKECOMPAT_DEBIAN_MIRROR`), imported as an image. About a
  minute, once.
- `jdk_image`: the base plus the JDK an engine runs with, copied to the same path it has on
  the host (links resolved), so that the engine's command line is the same in a container as
  in a process. Some seconds, once per JDK.
- `python_image`: a JDK image plus the run's Python installation (without its packages), for
  Spark, whose JVM starts Python workers from the run's virtualenv. Some seconds, once.

Each image is named by a digest of its inputs (`localhost/lakecompat-<what>:<digest>`): a
changed input builds a new image, an unchanged one is used as it is. The engine's jars, its
configuration and the tables are not copied: they are mounted from the cache, at their own
paths (`service.ContainerService`).
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import io
import json
import os
import re
import shutil
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

from lakecompat.engines.infra.artifacts import cache_dir, say_on_stderr
from lakecompat.engines.infra.containers.runtime import LABEL, ContainerError, Runtime
from lakecompat.engines.infra.supervisor import run_to_end

DEBIAN_SUITE = "bookworm"
MIRROR_ENV = "LAKECOMPAT_DEBIAN_MIRROR"
#: Debian packages added to `minbase`: the time zones (JVMs read them) and CA certificates.
BASE_PACKAGES = ("tzdata", "ca-certificates")
#: Bumped when the recipe of an image changes in a way its inputs do not show.
RECIPE = "1"
APT_SOURCES = (Path("/etc/apt/sources.list"), Path("/etc/apt/sources.list.d"))
_URI = re.compile(r"^(?:URIs:\s*|deb\s+(?:\[[^\]]*\]\s+)?)(\S+)", re.MULTILINE)


def debian_mirror() -> str:
    """The Debian mirror to build the base image from: `LAKECOMPAT_DEBIAN_MIRROR`, else the
    first one this machine's apt sources name (not its security archive)."""
    if os.environ.get(MIRROR_ENV):
        return os.environ[MIRROR_ENV]
    files: list[Path] = []
    for source in APT_SOURCES:
        files += sorted(source.glob("*")) if source.is_dir() else [source]
    for path in files:
        with contextlib.suppress(OSError):
            for uri in _URI.findall(path.read_text(errors="replace")):
                if "security" not in uri and uri.startswith(("http://", "https://", "file:")):
                    return uri
    raise ContainerError(
        "the base image is made from a Debian mirror, and this machine's apt sources name none: "
        f"set {MIRROR_ENV} to one"
    )


def _digest(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:12]


def _existing(runtime: Runtime, tag: str) -> Any | None:
    import docker.errors

    try:
        return runtime.client.images.get(tag)
    except docker.errors.ImageNotFound:
        return None


def build_folder() -> Path:
    """Where image builds put their files and logs (emptied of a build's files after it)."""
    folder = cache_dir() / "containers" / "build"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def base_image(runtime: Runtime) -> str:
    """The Debian base image's name, built on first use."""
    mirror = debian_mirror()
    tag = f"localhost/lakecompat-base:{_digest(RECIPE, DEBIAN_SUITE, mirror, BASE_PACKAGES)}"
    if _existing(runtime, tag) is not None:
        return tag
    if os.geteuid() != 0:
        raise ContainerError(
            "building the base image needs root (debootstrap makes a Debian system in a folder): "
            "run once as root, or give lakecompat a Docker daemon that can build it"
        )
    debootstrap = shutil.which("debootstrap") or "/usr/sbin/debootstrap"
    if not Path(debootstrap).exists():
        raise ContainerError(
            "building the base image needs debootstrap, which was not found: install it "
            "(Debian and Ubuntu: `sudo apt-get install debootstrap`)"
        )
    started = time.monotonic()
    say_on_stderr(
        f"Building the container base image {tag} (Debian {DEBIAN_SUITE} by debootstrap, "
        "about a minute, once)..."
    )
    folder = build_folder()
    root = folder / f"base-{os.getpid()}"
    log = folder / "base.log"
    _remove_tree(root)
    try:
        argv = [
            debootstrap,
            "--variant=minbase",
            f"--include={','.join(BASE_PACKAGES)}",
            DEBIAN_SUITE,
            str(root),
            mirror,
        ]
        if run_to_end(argv, log) != 0:
            raise ContainerError(f"debootstrap could not make the base image; its log: {log}")
        shutil.rmtree(root / "var" / "cache" / "apt" / "archives", ignore_errors=True)
        archive = folder / f"base-{os.getpid()}.tar"
        try:
            with tarfile.open(archive, "w") as tar:
                tar.add(root, arcname=".")
            image_id = _import(runtime, archive)
        finally:
            archive.unlink(missing_ok=True)
    finally:
        _remove_tree(root)
    repository, _, version = tag.rpartition(":")
    runtime.client.images.get(image_id).tag(repository, version)
    say_on_stderr(f"  built in {time.monotonic() - started:.0f} s")
    return tag


def _import(runtime: Runtime, archive: Path) -> str:
    """Import a root file system archive as an image; its id."""
    answer = runtime.client.api.import_image(
        src=str(archive), changes=[f"LABEL {LABEL}=image", "ENV LANG=C.UTF-8"]
    )
    ids = re.findall(
        r"sha256:[0-9a-f]{64}", answer if isinstance(answer, str) else json.dumps(answer)
    )
    if not ids:
        raise ContainerError(f"{runtime.name} did not import the base image: {answer!r}"[:300])
    return ids[-1]


def jdk_image(runtime: Runtime, java_home: Path) -> str:
    """The image of the base plus the JDK at `java_home` (at the same path), built on first
    use."""
    base = base_image(runtime)
    release = (java_home / "release").read_text(errors="replace")
    modules = java_home / "lib" / "modules"
    size = modules.stat().st_size if modules.is_file() else 0
    digest = _digest(RECIPE, base, str(java_home), release, size)
    tag = f"localhost/lakecompat-{_jdk_name(release)}:{digest}"
    return _layered(runtime, base, tag, java_home, f"ENV JAVA_HOME={java_home}\n")


def _jdk_name(release: str) -> str:
    """`jdk17`: the JDK's major release, as its `release` file (`release`, its text) says."""
    major = re.search(r'JAVA_VERSION="(?:1\.)?(\d+)', release)
    return f"jdk{major.group(1)}" if major else "jdk"


#: What `python_image` leaves out of a Python installation: its own packages (the run's
#: virtualenv is mounted), its tests, its static library and what needs a display.
_PYTHON_LEFT_OUT = (
    "site-packages",
    "test",
    "idlelib",
    "tkinter",
    "turtledemo",
    "__pycache__",
    "config-*",
)


def python_image(runtime: Runtime, java_home: Path | None = None) -> str:
    """The base (or the JDK image of `java_home`) plus the Python installation this process
    runs on (`sys.base_prefix`, at the same path, without its packages), built on first use:
    the Python readers' workers run their virtualenvs (in the cache, mounted) with it, and
    Spark, in the JDK's image, the Python workers it starts from the run's virtualenv."""
    under = jdk_image(runtime, java_home) if java_home is not None else base_image(runtime)
    prefix = Path(sys.base_prefix)
    library = prefix / "lib" / f"libpython{sys.version_info.major}.{sys.version_info.minor}.so.1.0"
    size = library.stat().st_size if library.is_file() else 0
    if java_home is None:
        name = "python"
    else:
        name = _jdk_name((java_home / "release").read_text(errors="replace")) + "-python"
    tag = f"localhost/lakecompat-{name}:{_digest(RECIPE, under, str(prefix), sys.version, size)}"
    return _layered(runtime, under, tag, prefix, "", left_out=_PYTHON_LEFT_OUT)


def _layered(
    runtime: Runtime,
    base: str,
    tag: str,
    folder: Path,
    instructions: str,
    left_out: tuple[str, ...] = (),
) -> str:
    """The image `tag`: `base` plus `folder` copied to the same path (links resolved, what
    `left_out` names left out), then `instructions`; built on first use."""
    if _existing(runtime, tag) is not None:
        return tag
    started = time.monotonic()
    say_on_stderr(f"Building the container image {tag} ({folder}, once)...")
    context = build_folder() / f"layer-{os.getpid()}.tar"
    containerfile = (
        f"FROM {base}\nCOPY copied/ {folder}/\n{instructions}LABEL {LABEL}=image\n"
    ).encode()
    try:
        with tarfile.open(context, "w", dereference=True) as tar:
            info = tarfile.TarInfo("Containerfile")
            info.size = len(containerfile)
            tar.addfile(info, io.BytesIO(containerfile))
            _add_resolved(tar, folder, "copied", left_out)
        _build(runtime, context, tag)
    finally:
        context.unlink(missing_ok=True)
    say_on_stderr(f"  built in {time.monotonic() - started:.0f} s")
    return tag


def _add_resolved(
    tar: tarfile.TarFile, folder: Path, name: str, left_out: tuple[str, ...] = ()
) -> None:
    """Add `folder` as `name`, its links resolved, without the folders whose names match a
    pattern of `left_out`; a link to nothing is left out (Debian's JDK links `lib/src.zip` to
    a package that is seldom installed)."""
    tar.add(folder, arcname=name, recursive=False)
    for path in sorted(folder.iterdir()):
        if not path.exists():
            continue  # a dangling link
        if path.is_dir():
            if any(fnmatch.fnmatch(path.name, pattern) for pattern in left_out):
                continue
            _add_resolved(tar, path, f"{name}/{path.name}", left_out)
        else:
            tar.add(path, arcname=f"{name}/{path.name}")


def _build(runtime: Runtime, context: Path, tag: str) -> None:
    import docker.errors

    with open(context, "rb") as stream:
        try:
            runtime.client.images.build(
                fileobj=stream,
                custom_context=True,
                dockerfile="Containerfile",
                tag=tag,
                network_mode="host",
                rm=True,
                forcerm=True,
            )
        except (docker.errors.BuildError, docker.errors.APIError) as exc:
            raise ContainerError(f"{runtime.name} could not build {tag}: {exc}"[:400]) from exc


def _remove_tree(root: Path) -> None:
    """Remove a debootstrap folder, first unmounting what a broken-off build left mounted in
    it (its /proc)."""
    if not root.exists():
        return
    with contextlib.suppress(OSError):
        mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
        for point in sorted((m for m in mounts if m.startswith(f"{root}/")), reverse=True):
            run_to_end(["umount", "-l", point], build_folder() / "base.log")
    shutil.rmtree(root, ignore_errors=True)
