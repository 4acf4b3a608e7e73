"""Python environments of their own: for the readers that are Python libraries (hudi-rs, Daft,
...) and for a Spark of another release than lakecompat's own (Delta 4 needs Spark 4).

Each runs in a virtual environment inside the artifact cache, with exactly the packages its
user pins, so their dependencies (Daft pins an older pyarrow, for one; Spark 4 is another
PySpark) never change lakecompat's own. An environment is created with this Python's `venv`
and filled by `pip`, which knows where packages come from; it is created once and reused while
its marker file says it holds the same packages.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from lakecompat.engines.infra.artifacts import (
    ProvisioningError,
    cache_dir,
    one_at_a_time,
    say_on_stderr,
)

_MARKER = "lakecompat-packages.txt"


def environment_dir(name: str, packages: tuple[str, ...]) -> Path:
    """Where the environment of `name` with exactly `packages` lives in the cache."""
    digest = hashlib.sha256("\n".join(sorted(packages)).encode()).hexdigest()[:12]
    return cache_dir() / "python" / f"{name}-{digest}"


def installed(name: str, packages: tuple[str, ...]) -> bool:
    """Whether the environment of `name` with exactly `packages` is installed already."""
    home = environment_dir(name, packages)
    marker = home / _MARKER
    wanted = "\n".join(packages) + "\n"
    return (home / "bin" / "python").is_file() and marker.is_file() and marker.read_text() == wanted


def released_versions(distribution: str) -> list[str]:
    """The releases of `distribution` pip can install for this Python, newest first, as the
    package index lists them (`pip index versions`); asking costs a second or two, installing
    a library tens of megabytes."""
    argv = [sys.executable, "-m", "pip", "index", "versions", distribution]
    argv += ["--disable-pip-version-check"]
    result = subprocess.run(argv, capture_output=True, text=True)
    listed = re.search(r"^Available versions: (.*)$", result.stdout, re.MULTILINE)
    return [v.strip() for v in listed.group(1).split(",")] if listed else []


@one_at_a_time
def provision(
    name: str, packages: tuple[str, ...], progress: Callable[[str], None] | None = None
) -> Path:
    """The Python interpreter of an environment holding `packages` (pip requirement strings),
    created on first use; a ProvisioningError says which package pip could not install."""
    home = environment_dir(name, packages)
    python = home / "bin" / "python"
    if installed(name, packages):
        return python
    say = progress or say_on_stderr
    say(f"installing {', '.join(packages)} for {name} with pip (first use; cached in {home})")
    shutil.rmtree(home, ignore_errors=True)  # half-made by an interrupted install
    _run([sys.executable, "-m", "venv", str(home)], f"creating a virtual environment in {home}")
    _run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *packages],
        f"pip install {' '.join(packages)}",
    )
    (home / _MARKER).write_text("\n".join(packages) + "\n")
    return python


def _run(argv: list[str], what: str) -> None:
    result = subprocess.run(argv, capture_output=True, text=True)
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip().splitlines()[-20:]
        raise ProvisioningError(
            f"{what} failed (exit {result.returncode}). Last output:\n"
            + "\n".join(output)
            + "\nHint: check that the package index is reachable and the version exists."
        )
