"""A supervised service whose process runs in a container (`lakecompat run --containers`).

`engine_service` is what an engine calls instead of `Service(...)`: without `--containers` it
is that `Service`; with it, a JVM service (its command starts with a JDK's `java`) runs in the
image of that JDK (`images.jdk_image`), started through the Docker API by testcontainers, with:

- the same command line, environment entries and working folder as the process would have;
- the host's network (the services bind 127.0.0.1, so the run reaches them as before);
- the cache (jars, configuration, tables), the run's log folder and the working folder mounted
  at their own paths, so that every path in the command, the configuration and the Metastore
  means the same inside and out;
- the run's own user and group, so that what it writes there belongs to the run's user;
- its output written into the service's log file, as a process's is (readiness checks and
  the reasons of failed reads read it there, right after the query);
- removed when the service stops, on Ctrl-C, and by the reaper when the run is killed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import threading
from pathlib import Path
from typing import Any

from lakecompat.engines.infra.artifacts import cache_dir
from lakecompat.engines.infra.containers import images
from lakecompat.engines.infra.containers.runtime import (
    LABEL,
    ContainerError,
    Runtime,
    conmon_cgroups,
    connect,
    containers_wanted,
    disconnect,
    own_cgroup,
    process_start,
    remove_empty_cgroups,
    user_image,
)
from lakecompat.engines.infra.supervisor import (
    Service,
    ServiceError,
    reaper,
    track,
    untrack,
)

_probed: set[str] = set()
#: Host folders every container of this process (and of the processes it starts, through
#: this environment variable) sees at their own paths, besides the cache and the service's own
#: folders: the run's folder and its tables (`share`).
SHARED_ENV = "LAKECOMPAT_CONTAINER_FOLDERS"
_shared: set[Path] = {Path(f) for f in os.environ.get(SHARED_ENV, "").split(os.pathsep) if f}


def share(*folders: Path) -> None:
    """Mount these folders into every container started from now on, at their own paths (by
    this process and the processes it starts)."""
    _shared.update(Path(f).resolve() for f in folders)
    os.environ[SHARED_ENV] = os.pathsep.join(sorted(map(str, _shared)))


_probe_lock = threading.Lock()


def release_runtime() -> None:
    """Stop the runtime's service this process started (`ready_runtime` checks it again
    next time): for a process that goes on without containers, such as a test session."""
    with _probe_lock:
        _probed.clear()
    disconnect()


def ready_runtime(log_dir: Path) -> Runtime:
    """The container runtime, checked once per process by running one container of the base
    image (a machine whose cgroups or limits refuse containers fails here, before any
    engine starts)."""
    runtime = connect(log_dir)
    base = images.base_image(runtime)
    with _probe_lock:
        if base in _probed:
            return runtime
        options = runtime.run_options("probe")
        probe = None
        try:
            # Created, then started: a container the runtime refuses to start is still
            # removed (a `run` would leave it behind, created).
            probe = runtime.client.containers.create(base, ["true"], **options)
            probe.start()
            probe.wait(timeout=60)
        except Exception as exc:
            text = str(getattr(exc, "explanation", None) or exc).strip().splitlines()
            raise ContainerError(
                f"containers cannot run on this machine ({runtime.name} could not run one of "
                f"{base}): {text[-1] if text else type(exc).__name__}"
            ) from exc
        finally:
            if probe is not None:
                with contextlib.suppress(Exception):
                    probe.remove(force=True)
        _probed.add(base)
    return runtime


def java_home_of(argv: list[str]) -> Path | None:
    """The JDK whose `java` a command starts with, or None for any other command."""
    if not argv:
        return None
    java = Path(argv[0])
    home = java.parent.parent
    if java.name == "java" and (home / "release").is_file():
        return home
    return None


#: The `java` of a user's image: its JAVA_HOME's, else the one on its PATH.
_IMAGE_JAVA = ["/bin/sh", "-c", 'exec "${JAVA_HOME:+$JAVA_HOME/bin/}java" "$@"', "java"]
#: The options of a JVM's class archive (`infra/class_archive.py`), made for the host's JDK.
_ARCHIVE_FLAGS = ("-XX:SharedArchiveFile", "-XX:ArchiveClassesAtExit", "-Xshare")


def runs_this_python(argv: list[str]) -> bool:
    """Whether a command starts a virtualenv's Python made from the Python this process runs
    on (a Python reader's environment in the cache)."""
    if not argv:
        return False
    config = Path(argv[0]).parent.parent / "pyvenv.cfg"
    with contextlib.suppress(OSError):
        for line in config.read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home":
                return Path(value.strip()).resolve() == Path(sys.base_prefix, "bin").resolve()
    return False


def engine_service(name: str, argv: list[str], log_dir: Path, **options: Any) -> Service:
    """The service an engine starts: in a container with `--containers` (a JVM service, or a
    Python reader's worker), else a local process. Takes `Service`'s arguments."""
    home = java_home_of(argv)
    python = home is None and runs_this_python(argv)
    if not containers_wanted() or not (home or python):
        return Service(name, argv, log_dir, **options)
    runtime = ready_runtime(log_dir)
    mine = user_image(name) if home is not None else None
    if mine is not None:
        # The user's image, with its own JDK: the command's `java` is the image's, and the
        # host JDK's class archive is left out (another JDK would write over it).
        env = {k: v for k, v in (options.pop("env", None) or {}).items() if k != "JAVA_HOME"}
        command = [*_IMAGE_JAVA, *(a for a in argv[1:] if not a.startswith(_ARCHIVE_FLAGS))]
        return ContainerService(name, command, log_dir, runtime, mine, env=env, **options)
    if home is not None:
        return ContainerService(
            name, argv, log_dir, runtime, images.jdk_image(runtime, home), **options
        )
    # The virtualenv (in the cache) and the script it runs, at their own paths.
    share(*(Path(a).parent for a in argv[1:] if a.startswith("/") and Path(a).is_file()))
    return ContainerService(name, argv, log_dir, runtime, images.python_image(runtime), **options)


#: Where each service of this process last started in a container: name → `where`.
_started_in: dict[str, str] = {}


def where_services_ran(names: tuple[str, ...]) -> str:
    """`process`, or where the services of these names (or name prefixes) last started in
    containers: `container <image> (<runtime>)`."""
    found = sorted(
        {where for name, where in _started_in.items() if name.startswith(names)} if names else ()
    )
    return "; ".join(found) if found else "process"


class _Exit:
    """What `Service` asks of its process, answered for a container: whether it has exited.

    Asked before every read (is the engine alive?); a question to the runtime costs it tens of
    milliseconds of CPU, so while the container's first process is one this machine sees (a
    local runtime), it is looked at in /proc instead, and the runtime asked once it is gone."""

    def __init__(self, container: Any) -> None:
        self.container = container
        self.returncode: int | None = None
        self.pid = 0
        self._seen: tuple[int, str] | None = None

    def poll(self) -> int | None:
        if self.returncode is not None:
            return self.returncode
        if self._seen is not None and process_start(self._seen[0]) == self._seen[1]:
            return None
        try:
            self.container.reload()
        except Exception:  # noqa: BLE001 - a container removed behind our back has ended
            self.returncode = -9
            return self.returncode
        state = self.container.attrs.get("State", {})
        self.pid = int(state.get("Pid") or 0)
        if state.get("Status") in ("exited", "dead"):
            self.returncode = int(state.get("ExitCode", -1))
        elif self.pid and state.get("Status") == "running":
            started = process_start(self.pid)
            self._seen = (self.pid, started) if started is not None else None
        return self.returncode


class ContainerService(Service):
    """A `Service` whose command runs in a container of `image`."""

    def __init__(
        self,
        name: str,
        argv: list[str],
        log_dir: Path,
        runtime: Runtime,
        image: str,
        remove_on_exit: bool = False,
        **options: Any,
    ) -> None:
        """`remove_on_exit`: the runtime removes the container once its command has exited,
        even when nothing of the run is left to ask it to."""
        super().__init__(name, argv, log_dir, **options)
        self.runtime, self.image = runtime, image
        self.remove_on_exit = remove_on_exit
        self._container: Any = None
        self._exit: _Exit | None = None

    @property
    def where(self) -> str:
        """`container <image> (<runtime>)`: for the cells' evidence."""
        return f"container {self.image} ({self.runtime.name})"

    @property
    def pid(self) -> int | None:
        """The host pid of the container's first process, once it runs."""
        return (self._exit.pid or None) if self._exit is not None else None

    @property
    def running(self) -> bool:
        return self._exit is not None and self._exit.poll() is None

    @property
    def exit_code(self) -> int | None:
        """The container's exit code once it has exited, as its runtime told it (-9: it was
        removed before that could be read; None: it runs, or never started)."""
        return self._exit.poll() if self._exit is not None else None

    def mounts(self) -> list[Path]:
        """The host folders the container sees at their own paths (none inside another)."""
        wanted = [cache_dir(), self.log_dir, *_shared, *(p for p in (self.cwd, self.scratch) if p)]
        folders: list[Path] = []
        for folder in sorted({Path(p).resolve() for p in wanted}, key=lambda p: (len(p.parts), p)):
            folder.mkdir(parents=True, exist_ok=True)
            if not any(folder.is_relative_to(kept) for kept in folders):
                folders.append(folder)
        return folders

    def _launch(self) -> None:
        from testcontainers.core.container import DockerContainer

        self._begin(f" in {self.where}")
        options = self.runtime.run_options("service")
        options["labels"] = {**options["labels"], f"{LABEL}.service": self.name}
        if self.remove_on_exit:
            options["auto_remove"] = True
        # The command's output goes straight into the service's log file (mounted), as a
        # process's does: read right after a failed query, it already holds what the server
        # logged (a copy of the container's output would lag behind).
        redirect = ["/bin/sh", "-c", 'exec "$@" >>"$0" 2>&1', str(self.log_path), *self.argv]
        container = DockerContainer(self.image).with_command(redirect)
        for folder in self.mounts():
            container = container.with_volume_mapping(str(folder), str(folder), "rw")
        for key, value in (self.env or {}).items():
            container = container.with_env(key, value)
        container = container.with_kwargs(
            user=f"{os.getuid()}:{os.getgid()}",
            working_dir=str(self.cwd or self.log_dir),
            **options,
        )
        try:
            container.start()
        except Exception as exc:
            raise ServiceError(
                self._failure(f"could not be started in a container: {exc}")
            ) from exc
        self._container = container.get_wrapped_container()
        reaper().watch_container(self.runtime.url, self._container.id)
        if self.runtime.podman:
            reaper().remove_empty_cgroups(conmon_cgroups(own_cgroup()))
        self._exit = _Exit(self._container)
        self._exit.poll()
        self._proc = self._exit  # type: ignore[assignment] - what `_await_ready` polls
        track(self)
        _started_in[self.name] = self.where

    def stop(self, grace_s: float | None = None) -> None:
        """Stop the container (SIGTERM, SIGKILL after `grace_s`) and remove it. Idempotent."""
        container, exit_ = self._container, self._exit
        if container is None or exit_ is None:
            return
        self._container = None
        grace = self.stop_grace_s if grace_s is None else grace_s
        with contextlib.suppress(Exception):
            if exit_.poll() is None:
                container.stop(timeout=int(max(grace, 0)))
        exit_.poll()
        with contextlib.suppress(Exception):
            container.remove(force=True, v=True)
        reaper().release_container(self.runtime.url, container.id)
        untrack(self)
        if self.runtime.podman:
            remove_empty_cgroups(own_cgroup())
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
        if self.after_exit is not None:
            self.after_exit(exit_.returncode)
