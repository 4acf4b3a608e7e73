"""Spark in a Python process of its own: another Hudi release, another table format's jars, or a
reader beside the writer.

PySpark keeps one JVM per Python process, and one JVM cannot load two Hudi bundles, so a
second Hudi release runs in a child process with its own SparkSession. The child knows none of
its clients: each request is a function and its arguments, `fn(runtime, *args)`, run with the
child's `SparkRuntime` (the function must be importable by name: a module-level function).
Three things use it: a scenario's `upgrade_writer` step (the older release writes the first
part of the table, the run's writer takes it over), a Spark reader whose Hudi release is not
the writer's (version skew, `--spark-hudi-version`), and in a large run the Spark reader with
the writer's release, so that its reads do not wait for the writes. The child starts once per
run and label and warms up while the run goes on.

A format whose jars need another Spark (Delta 4 is built for Spark 4) runs its child in a
Python environment of its own that holds that PySpark (`FormatJars.pyspark`), created in the
cache on first use; the child imports this package from where the run's Python does.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from importlib import metadata
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import lakecompat
from lakecompat.engines.errors import describe_error, error_trace, message_lines
from lakecompat.engines.infra.artifacts import cache_dir
from lakecompat.engines.infra.python_env import provision
from lakecompat.engines.spark.runtime import FormatJars, SparkRuntime

#: Seconds to wait for the child to exit after it was asked to.
_STOP_SECONDS = 60


def runtime_label(hudi: str) -> str:
    """The name of a release's Spark logs and scratch folder: `spark-hudi-0.15.0`."""
    return f"spark-hudi-{hudi}"


#: At most this much of a child's stack trace crosses to the parent (the evidence keeps less).
_TRACE_LIMIT = 64_000


class RemoteSparkError(RuntimeError):
    """A request failed in the child's Spark; `java_exception` is its error text, as a Py4J
    error carries it, so that the cell's reason reads as for the run's own Spark, and `trace`
    the JVM's stack trace behind it."""

    def __init__(self, text: str, trace: str = "") -> None:
        super().__init__(text)
        self.java_exception = text
        self.trace = trace


def _serve(
    conn: Connection,
    log_dir: Path,
    hudi: str,
    master: str | None,
    label: str,
    quick_jit: bool,
    loads: FormatJars | None = None,
) -> None:
    """The child (`SparkProcess` gives its arguments): start Spark with `hudi`'s bundle, or
    with another format's jars (`loads`; on `master` when it is a cluster's), then run each
    request `(fn, args)` as `fn(runtime, *args)` and send back what it returns."""
    # A session of its own, like every service: a Ctrl-C in the terminal reaches the parent
    # only, which stops the run and this child with it; the child would otherwise end the
    # request in progress, and the parent record that as the cell's error.
    os.setsid()
    runtime = SparkRuntime(log_dir, hudi, label=label, master=master, loads=loads)
    runtime.quick_jit = quick_jit  # see SparkRuntime.quick_jit
    release = loads.release if loads else f"Hudi {hudi}"
    try:
        try:
            runtime.session()
        except Exception as exc:  # noqa: BLE001 - every request then says why
            conn.send(("failed", f"Spark with {release} did not start: {describe_error(exc)}"))
        else:
            conn.send(("ready", ""))
        while True:
            request = conn.recv()
            if request is None:
                break
            fn, args = request
            try:
                conn.send(("ok", fn(runtime, *args)))
            except Exception as exc:  # noqa: BLE001 - the parent's caller says what failed
                message = "\n".join(message_lines(exc)[:40])[:8000]
                conn.send(("error", (message, error_trace(exc)[:_TRACE_LIMIT])))
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        pass  # the parent is gone (an answer finds no one to read it) or the run was stopped
    finally:
        runtime.stop()


def _child_needs() -> tuple[str, ...]:
    """What a child in another Python environment needs besides its PySpark: lakecompat's own
    dependencies (a request may be any module-level function of the package: a repro's
    comparison imports the run's modules), each at the release this Python has."""
    needed = []
    for requirement in metadata.requires("lakecompat") or []:
        if "extra ==" in requirement:
            continue
        name = re.split(r"[\s;<>=!~\[(]", requirement, maxsplit=1)[0]
        if name.lower() != "pyspark":
            needed.append(f"{name}=={metadata.version(name)}")
    return tuple(needed)


def serve_on(fd: int, parent: int) -> None:
    """The child's entry point: its arguments come first over the socket `fd`, then its
    requests (`_serve`). It ends when `parent` does, even in the middle of starting Spark or
    of a request (a `kill -9` of the run leaves no Spark behind)."""
    threading.Thread(target=_end_with, args=(parent,), daemon=True).start()
    conn = Connection(fd)
    _serve(conn, *conn.recv())


def _end_with(parent: int) -> None:
    """Exit at once when `parent` is gone; Spark's JVM then ends too (it exits when its
    stdin, a pipe from this process, closes)."""
    while os.getppid() == parent:
        time.sleep(1)
    os._exit(1)


def child_python(pyspark: str) -> tuple[str, dict[str, str] | None]:
    """The Python interpreter a child runs, and its environment (None: this process's):
    this one for lakecompat's own PySpark (""), else an environment of the cache holding
    PySpark `pyspark` and what the child imports, which finds this package through a link of
    its own (never this environment's packages, whose PySpark is another)."""
    if not pyspark:
        return sys.executable, None
    packages = (f"pyspark=={pyspark}", *_child_needs())
    python = provision(f"pyspark-{pyspark}", packages)
    package = Path(lakecompat.__file__).resolve().parent
    where = cache_dir() / "python" / f"lakecompat-{_digest(str(package))}"
    link = where / "lakecompat"
    if not link.is_symlink() or link.resolve() != package:
        where.mkdir(parents=True, exist_ok=True)
        temporary = where / f"lakecompat.{os.getpid()}"
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(package, target_is_directory=True)
        temporary.replace(link)
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("SPARK_HOME", "PYSPARK_DRIVER_PYTHON", "PYTHONPATH", "PYTHONHOME")
    }
    # Spark's Python workers run the environment's interpreter, with its PySpark.
    environment.update(PYTHONPATH=str(where), PYSPARK_PYTHON=str(python))
    return str(python), environment


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


class SparkProcess:
    """The child process running Spark with one Hudi release (or another format's jars)."""

    def __init__(
        self,
        hudi: str,
        log_dir: Path,
        master: str | None = None,
        label: str | None = None,
        quick_jit: bool = False,
        loads: FormatJars | None = None,
    ) -> None:
        """`label` names the logs (by default after the release); with `quick_jit` the child
        runs Spark's JVM with the quick JIT compiler alone (a Spark that only reads, or one of
        a small run: `SparkRuntime.quick_jit`); with `loads`, the child's Spark loads another
        format's jars instead of the Hudi bundle."""
        self.hudi = hudi
        self.release = loads.release if loads else f"Hudi {hudi}"
        self.label = label or (loads.label if loads else runtime_label(hudi))
        self.log_path = log_dir / f"{self.label}.log"
        self._arguments = (log_dir, hudi, master, self.label, quick_jit, loads)
        #: The PySpark release the child runs ("": lakecompat's own).
        self._pyspark = loads.pyspark if loads else ""
        self._process: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        #: Why Spark with this release could not start ("" when it did; None: not told yet).
        self._failure: str | None = None

    def start(self) -> None:
        """Start the child (it starts Spark at once and says when it is ready)."""
        if self.alive():
            return
        self.stop()
        python, environment = child_python(self._pyspark)
        ours, theirs = socket.socketpair()
        code = f"from {__name__} import serve_on; serve_on({theirs.fileno()}, {os.getpid()})"
        with ours, theirs:
            self._process = subprocess.Popen(
                [python, "-c", code],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                env=environment,
            )
            conn = Connection(ours.detach())
        conn.send(self._arguments)
        self._conn, self._failure = conn, None

    def alive(self) -> bool:
        """Whether the child process is running."""
        return self._process is not None and self._process.poll() is None

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """What `fn(runtime, *args)` returns in the child, with this release's Spark.

        Raises `RemoteSparkError` with the child's error text when `fn` raises, and
        `RuntimeError` naming the release when Spark with it cannot start or the child dies.
        """
        status, answer = self._ask((fn, args))
        if status == "error":
            raise RemoteSparkError(*answer)
        return answer

    def _ask(self, request: tuple[Any, ...]) -> tuple[str, Any]:
        self.start()
        assert self._conn is not None
        try:
            if self._failure is None:
                status, message = self._conn.recv()
                self._failure = message if status == "failed" else ""
            if self._failure:
                raise RuntimeError(self._failure)
            self._conn.send(request)
            return self._conn.recv()
        except (EOFError, OSError) as exc:
            # The child is ending (its socket closed): its exit code says how.
            code = _wait(self._process, 5) if self._process is not None else None
            self.kill()
            raise RuntimeError(
                f"the process running Spark with {self.release} ended (exit code {code}): "
                f"{type(exc).__name__}"
            ) from None

    def kill(self) -> None:
        """End the child at once (a hung query); the next request starts a new one."""
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if conn is not None:
            conn.close()
        if process is not None and process.poll() is None:
            process.kill()
            _wait(process, 10)

    def restart(self) -> None:
        """A new child after the old one died or was killed."""
        self.kill()
        self.start()

    def stop(self) -> None:
        """Ask the child to stop Spark and exit; kill it when it does not."""
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if process is None:
            return
        if conn is not None:
            with contextlib.suppress(OSError):
                conn.send(None)
            conn.close()
        if _wait(process, _STOP_SECONDS) is None:
            process.kill()
            _wait(process, 10)


def _wait(process: subprocess.Popen[bytes], seconds: float) -> int | None:
    """The process's exit code once it has ended, within `seconds` (None: still running)."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        return process.wait(seconds)
    return None
