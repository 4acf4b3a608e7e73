"""Spark's JVM in a container (`--containers`): a `spark-submit` that PySpark runs as its own.

PySpark starts its JVM by running `$SPARK_HOME/bin/spark-submit ... pyspark-shell` with a pipe
on its stdin (the JVM exits when that pipe closes) and waits for the JVM to write its port into
a file; then it talks to the JVM over 127.0.0.1. A run with `--containers` points `SPARK_HOME` at
a folder of the cache (`spark_home`) whose `bin/spark-submit` runs this module instead, which:

- runs PySpark's own `spark-submit` with the same arguments and environment in a container of
  `images.python_image` (the JDK, and the run's Python for the Python workers Spark starts), on
  the host's network, with the cache, the run's folders, the virtualenv and the folder of the
  port file mounted at their own paths: the writer's and the Spark reader's JVMs, for every
  Hudi release and table format of Spark 3.5;
- passes its stdin on through a named pipe: when PySpark closes it, or this process is killed
  (whatever the signal), the JVM reads its end and exits, as a local one does;
- writes the JVM's output where its own goes (the run's Spark console log), and removes the
  container when the JVM has exited, or has it removed by its reaper should it be killed.

PySpark, the writer and the readers are not changed: they run as they do without containers.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import select
import shlex
import shutil
import signal
import stat
import sys
import time
from pathlib import Path

import lakecompat
from lakecompat.engines.infra.artifacts import cache_dir
from lakecompat.engines.infra.containers import images
from lakecompat.engines.infra.containers.runtime import connect, owner_alive, owner_id
from lakecompat.engines.infra.containers.service import ContainerService, share
from lakecompat.engines.infra.supervisor import stop_all

#: Seconds the JVM has to exit after its stdin closed, before its container is stopped.
EXIT_WAIT_S = 60.0
#: What the container is not given of this process's environment: the runtime's address
#: (meaningless inside), the fake `SPARK_HOME` (replaced by PySpark's own) and the host name.
_NOT_PASSED = ("DOCKER_HOST", "SPARK_HOME", "HOSTNAME", "TESTCONTAINERS_RYUK_DISABLED")


def spark_home() -> Path:
    """The `SPARK_HOME` of a run with `--containers`: a folder whose `bin/spark-submit` runs
    this module with this process's Python (written on first use)."""
    python = sys.executable
    folder = (
        cache_dir() / "containers" / "spark-home" / hashlib.sha256(python.encode()).hexdigest()[:12]
    )
    script = folder / "bin" / "spark-submit"
    text = (
        "#!/bin/sh\n"
        "# Written by lakecompat: PySpark's JVM in a container (lakecompat run --containers).\n"
        f'exec {shlex.quote(python)} -m {__name__} "$@"\n'
    )
    if not script.is_file() or script.read_text() != text:
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(text)
        script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return folder


def where_spark_runs(java_home: Path) -> str:
    """`container <image> (<runtime>)`: where Spark's JVMs on `java_home` run (the image is
    built on first use)."""
    if java_home not in _where:
        runtime = connect(cache_dir() / "containers" / "logs")
        _where[java_home] = f"container {images.python_image(runtime, java_home)} ({runtime.name})"
    return _where[java_home]


_where: dict[Path, str] = {}


def _console() -> Path:
    """Where this process's output goes, when it is a file (the run's Spark console log); else
    a log of the cache."""
    with contextlib.suppress(OSError):
        target = Path(os.readlink("/proc/self/fd/1"))
        if target.is_file():
            return target
    return cache_dir() / "containers" / "logs" / "spark-console.log"


def _pipe_folder() -> Path:
    """A new folder for this process's named pipe; those of processes that were killed are
    removed."""
    pipes = cache_dir() / "containers" / "pipes"
    pipes.mkdir(parents=True, exist_ok=True)
    for left in pipes.glob("spark-*"):
        if not owner_alive(left.name.removeprefix("spark-")):
            shutil.rmtree(left, ignore_errors=True)
    folder = pipes / f"spark-{owner_id()}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    return folder


def _open_writer(fifo: Path, service: ContainerService) -> int:
    """The write end of `fifo`, once the container's shell has opened its read end (or -1
    when the container ended before it did)."""
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise
            if not service.running:
                return -1
            time.sleep(0.05)
            continue
        os.set_blocking(fd, True)
        return fd


def main(argv: list[str]) -> int:
    """Run PySpark's `spark-submit argv` in a container until PySpark closes stdin."""
    import pyspark

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as PySpark starts its JVM: Ctrl-C is the run's
    home = Path(pyspark.__file__).parent
    java_home = Path(os.environ["JAVA_HOME"])
    runtime = connect(cache_dir() / "containers" / "logs")
    image = images.python_image(runtime, java_home)
    port_file = os.environ.get("_PYSPARK_DRIVER_CONN_INFO_PATH")
    share(
        Path(sys.prefix),
        Path(lakecompat.__file__).parents[1],
        *([Path(port_file).parent] if port_file else []),
    )
    folder = _pipe_folder()
    fifo = folder / "stdin"
    os.mkfifo(fifo)
    env = {k: v for k, v in os.environ.items() if k not in _NOT_PASSED}
    env["SPARK_HOME"] = str(home)
    command = ["/bin/sh", "-c", 'exec "$@" <"$0"', str(fifo), str(home / "bin" / "spark-submit")]
    console = _console()
    service = ContainerService(
        console.stem,
        [*command, *argv],
        console.parent,
        runtime,
        image,
        env=env,
        cwd=Path.cwd(),
        stop_grace_s=10,
        # Should this process be killed, the JVM exits (its stdin closes) and its container
        # goes with it, even when the run's runtime service is ending at the same time.
        remove_on_exit=True,
    )
    asked_to_end = False
    try:
        service.start()
        pipe = _open_writer(fifo, service)
        try:
            # Whether the container still runs is read in /proc (`ContainerService.running`):
            # Podman answers a `wait` by reading the container's state many times a second.
            while pipe >= 0 and service.running:
                readable, _, _ = select.select([0], [], [], 1.0)
                if readable:
                    data = os.read(0, 65536)
                    if not data:
                        asked_to_end = True  # PySpark closed stdin: the JVM is to exit
                        break
                    os.write(pipe, data)
        finally:
            if pipe >= 0:
                os.close(pipe)
        deadline = time.monotonic() + EXIT_WAIT_S
        while service.running and time.monotonic() < deadline:
            time.sleep(0.2)
        ended = not service.running
    finally:
        stop_all()
        with contextlib.suppress(OSError):
            fifo.unlink()
            folder.rmdir()
    code = service.exit_code
    if code is not None and code != -9:
        return code
    # Removed by the runtime as it exited, before its code could be read: a JVM that exited
    # once its stdin closed did so with 0 (PySpark's gateway), any other end is a failure.
    return 0 if asked_to_end and ended else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
