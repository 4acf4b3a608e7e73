"""The container runtime of a run with `--containers`, reached through the Docker API.

A Docker daemon is used where one answers (`DOCKER_HOST`, else `/var/run/docker.sock`). Else the
run starts Podman's own API service (`podman system service`) as one of its services, with the
project's configuration files (never the system's): the `runc` runtime (`crun` fails on a
machine with mixed cgroup versions), cgroups managed as plain folders (no systemd), images
stored in the cache. Every container the project starts runs on the host's network (its
services bind 127.0.0.1), with `nofile`/`nproc` limits no higher than the run's own (without
CAP_SYS_RESOURCE a container cannot raise them), and carries the labels `lakecompat` and
`lakecompat.owner`: the process that started it, so that a later run removes what a killed one
left behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lakecompat.engines.infra.artifacts import cache_dir, say_on_stderr
from lakecompat.engines.infra.reaper import remove_empty_cgroup_folders
from lakecompat.engines.infra.supervisor import Probe, Service, ServiceError

#: Set to 1 by `lakecompat run --containers`: the run's JVM services start in containers.
CONTAINERS_ENV = "LAKECOMPAT_CONTAINERS"
#: Every container and image the project makes carries this label (its value says what it is).
LABEL = "lakecompat"
#: `<pid>-<start time>` of the process that started the container.
OWNER_LABEL = "lakecompat.owner"
#: `<pid>-<start time>` of the run the container belongs to (its owner, or the process that
#: started the owner: `RUN_ENV`).
RUN_LABEL = "lakecompat.run"
#: Set by a run to its `owner_id`, for the processes it starts that start containers.
RUN_ENV = "LAKECOMPAT_CONTAINERS_RUN"
#: Set by a run with `--image`: JSON of service name (or name prefix) → a user's image.
IMAGES_ENV = "LAKECOMPAT_CONTAINER_IMAGES"
#: The highest `nproc` a container may set: the kernel's `pid_max` (above it runc is refused).
PID_MAX = Path("/proc/sys/kernel/pid_max")
DOCKER_SOCKET = Path("/var/run/docker.sock")
INSTALL_HINT = (
    "install Podman and runc (Debian and Ubuntu: `sudo apt-get install podman runc`) or start "
    "a Docker daemon"
)
_CONTAINERS_CONF = """\
# Written by lakecompat for the Podman service a run with --containers starts.
[containers]
netns = "host"
log_driver = "k8s-file"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
"""


class ContainerError(RuntimeError):
    """Containers cannot run here: the message says why, in one sentence, and what to do."""


def containers_wanted() -> bool:
    """Whether this run starts its JVM services in containers (`--containers`)."""
    return os.environ.get(CONTAINERS_ENV) == "1"


def user_image(service: str) -> str | None:
    """The user's image the service of this name runs in (`--image`), or None."""
    images = json.loads(os.environ.get(IMAGES_ENV) or "{}")
    return next((image for prefix, image in images.items() if service.startswith(prefix)), None)


def check_image(runtime: Runtime, image: str, given: str) -> None:
    """The user's `image` is on this machine, or is pulled now; else a one-sentence error
    that names the option (`given`)."""
    import docker.errors

    try:
        runtime.client.images.get(image)
        return
    except docker.errors.ImageNotFound:
        pass
    except docker.errors.APIError as exc:
        raise ContainerError(
            f"{given}: {runtime.name} cannot look up {image}: {_first_line(exc)}"
        ) from exc
    say_on_stderr(f"Pulling {image} ({given})...")
    try:
        runtime.client.images.pull(image)
    except docker.errors.APIError as exc:
        raise ContainerError(
            f"{given}: {image} is not on this machine and {runtime.name} could not pull it "
            f"({_first_line(exc)}): build or load it first, or name it as your registry has it"
        ) from exc


def process_start(pid: int) -> str | None:
    """The start time of a live process on this machine (/proc), or None when it is gone or
    a zombie."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] in ("Z", "X") else fields[19]


def owner_id(pid: int | None = None) -> str:
    """`<pid>-<start time>` of a process: unique on this machine even when a pid is reused."""
    pid = os.getpid() if pid is None else pid
    return f"{pid}-{process_start(pid) or 0}"


def owner_alive(owner: str) -> bool:
    """Whether the process an `owner_id` names still runs."""
    pid, _, _start = owner.partition("-")
    return pid.isdigit() and owner_id(int(pid)) == owner


@dataclass
class Runtime:
    """A container runtime that answered: its API address, its name and a Docker API client."""

    url: str
    name: str
    client: Any
    podman: bool
    #: Podman's API service where the run started it (stopped by `disconnect`).
    service: Service | None = None

    def run_options(self, what: str) -> dict[str, Any]:
        """The options of every container the project starts (`what` goes into its label)."""
        import docker.types

        nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        nproc = resource.getrlimit(resource.RLIMIT_NPROC)[1]
        with contextlib.suppress(OSError, ValueError):
            nproc = min(nproc, int(PID_MAX.read_text()))
        limits = {"nofile": nofile, "nproc": nproc}
        options: dict[str, Any] = {
            "network_mode": "host",
            "labels": {
                LABEL: what,
                OWNER_LABEL: owner_id(),
                RUN_LABEL: os.environ.get(RUN_ENV) or owner_id(),
            },
            "ulimits": [
                docker.types.Ulimit(name=name, soft=value, hard=value)
                for name, value in limits.items()
                if value != resource.RLIM_INFINITY
            ],
        }
        if self.podman:
            # Podman's cgroups go below the run's own, not into a `libpod_parent` of their own.
            options["cgroup_parent"] = own_cgroup()
        return options


def own_cgroup() -> str:
    """This process's cgroup (the `pids` controller's on cgroup v1, the unified one on v2)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return "/"
    paths = {}
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") or [""]:
            paths[controller] = path
    return paths.get("pids") or paths.get("") or "/"


def conmon_cgroups(parent: str) -> str:
    """The cgroup Podman makes for conmon below `parent`, in every controller: a glob below
    /sys/fs/cgroup (a container's own `libpod-<id>` goes with the container)."""
    return f"*/{parent.strip('/')}/conmon".replace("//", "/")


def remove_empty_cgroups(parent: str) -> None:
    """Remove Podman's conmon cgroup below `parent` where nothing runs in it any more."""
    remove_empty_cgroup_folders(conmon_cgroups(parent))


_lock = threading.Lock()
_runtime: Runtime | None = None
_owner = 0
#: `DOCKER_HOST` as it was before `connect` set it (restored by `disconnect`).
_host_before: str | None = None


def connect(log_dir: Path) -> Runtime:
    """The runtime of this process: found (or Podman's service started, its log in
    `log_dir`) on first use; what earlier runs left behind is removed then."""
    global _runtime, _owner, _host_before
    with _lock:
        if _runtime is not None and _owner == os.getpid():
            return _runtime
        _host_before = os.environ.get("DOCKER_HOST")
        _testcontainers_environment()
        runtime = _docker() or _podman(log_dir)
        _remove_leftovers(runtime)
        _runtime, _owner = runtime, os.getpid()
        return runtime


def disconnect() -> None:
    """Stop what `connect` started in this process (Podman's service) and forget the runtime;
    `DOCKER_HOST` is as it was before. The next `connect` finds or starts it again."""
    global _runtime
    with _lock:
        runtime, _runtime = _runtime, None
        if runtime is None or _owner != os.getpid():
            return
        if runtime.service is not None:
            runtime.service.stop()
        if _host_before is None:
            os.environ.pop("DOCKER_HOST", None)
        else:
            os.environ["DOCKER_HOST"] = _host_before


def _testcontainers_environment() -> None:
    """What testcontainers needs here: no Ryuk container (the run removes its own containers,
    and needs no registry for them) and the daemon's address as given, even where a
    `/.dockerenv` makes it think it runs in a container itself."""
    os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
    os.environ.setdefault("TESTCONTAINERS_CONNECTION_MODE", "docker_host")


def _client(url: str) -> Any:
    import docker

    return docker.DockerClient(base_url=url, timeout=300)


def _docker() -> Runtime | None:
    """A Docker daemon (or any Docker API) that answers, from `DOCKER_HOST` or its socket."""
    url = os.environ.get("DOCKER_HOST")
    if not url:
        if not DOCKER_SOCKET.exists():
            return None
        url = f"unix://{DOCKER_SOCKET}"
    try:
        client = _client(url)
        version = client.version()
    except Exception as exc:
        if os.environ.get("DOCKER_HOST"):
            raise ContainerError(
                f"DOCKER_HOST={url} does not answer ({_first_line(exc)}): start that daemon, "
                "or unset DOCKER_HOST to let lakecompat start Podman"
            ) from exc
        return None
    components = " ".join(c.get("Name", "") for c in version.get("Components", []))
    name = "Podman" if "Podman" in components else "Docker"
    os.environ["DOCKER_HOST"] = url
    return Runtime(url, f"{name} {version.get('Version', '?')}", client, name == "Podman")


def podman_config() -> dict[str, str]:
    """The environment that points Podman at the project's configuration files (written to
    the cache on first use): runc, cgroupfs, host network; images below the cache."""
    folder = cache_dir() / "containers"
    folder.mkdir(parents=True, exist_ok=True)
    storage = (
        "# Written by lakecompat: where its Podman keeps images and containers.\n"
        "[storage]\n"
        'driver = "overlay"\n'
        f'graphroot = "{folder / "storage"}"\n'
        f'runroot = "{folder / "run"}"\n'
    )
    files = {"containers.conf": _CONTAINERS_CONF, "storage.conf": storage}
    for name, text in files.items():
        path = folder / name
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
    return {
        "CONTAINERS_CONF": str(folder / "containers.conf"),
        "CONTAINERS_STORAGE_CONF": str(folder / "storage.conf"),
    }


def _podman(log_dir: Path) -> Runtime:
    """Podman's API service on a socket of this run, started as one of its services."""
    podman = shutil.which("podman")
    if podman is None:
        raise ContainerError(
            f"--containers needs Podman or Docker, and neither was found: {INSTALL_HINT}"
        )
    if shutil.which("runc") is None:
        raise ContainerError(
            "--containers with Podman needs the runc runtime, which was not found: install it "
            "(Debian and Ubuntu: `sudo apt-get install runc`)"
        )
    socket = Path(tempfile.gettempdir()) / f"lakecompat-podman-{os.getpid()}.sock"
    socket.unlink(missing_ok=True)
    url = f"unix://{socket}"
    parent = own_cgroup()
    service = Service(
        "podman",
        [podman, "system", "service", "--time=0", url],
        log_dir,
        wait=Probe(lambda: _client(url).ping()),
        timeout_s=60,
        env=podman_config(),
        hint="Podman's API service did not start; `podman info` says what Podman lacks",
        after_exit=lambda _code: (socket.unlink(missing_ok=True), remove_empty_cgroups(parent)),
        stop_grace_s=20,
    )
    try:
        service.start()
    except ServiceError as exc:
        raise ContainerError(
            f"Podman's API service did not start (its log: {service.log_path}); "
            "`podman info` says what Podman lacks"
        ) from exc
    client = _client(url)
    version = client.version().get("Version", "?")
    os.environ["DOCKER_HOST"] = url
    return Runtime(url, f"Podman {version}", client, True, service)


def _remove_leftovers(runtime: Runtime) -> None:
    """Remove the containers of runs that no longer run (killed before they could)."""
    left = [
        container
        for container in runtime.client.containers.list(all=True, filters={"label": OWNER_LABEL})
        if not owner_alive(container.labels.get(OWNER_LABEL, ""))
    ]
    for container in left:
        with contextlib.suppress(Exception):
            container.remove(force=True)
    if left:
        say_on_stderr(f"Removed {len(left)} container(s) an earlier run left behind.")
    if runtime.podman:
        remove_empty_cgroups(own_cgroup())


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "explanation", None) or exc).strip()
    return text.splitlines()[-1] if text else type(exc).__name__
