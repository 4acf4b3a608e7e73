"""Integration: engines in containers (`lakecompat run --containers`), with the real runtime.

The runtime is this machine's (Podman from Debian's packages, which `make test` installs; or a
Docker daemon): the images are built on first use and cached. Trino, HiveServer2, Spark (its
JVM, started by PySpark) and hudi-rs (a Python reader's worker) read a renamed column in
containers, judged against the same known outcomes as the process run; a `kill -9` of the run
(with Trino's and a Spark JVM's containers running) leaves no container, no Podman service and
no cgroup behind; a machine
without a runtime, or whose runtime refuses a container, is told so in one sentence.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import tarfile
import time
from pathlib import Path

import pytest
from support import ROOT, SCRIPT, gone, only_run

from lakecompat.engines.infra.containers import images
from lakecompat.engines.infra.containers.runtime import (
    LABEL,
    RUN_LABEL,
    ContainerError,
    owner_id,
    podman_config,
)
from lakecompat.engines.infra.containers.service import ready_runtime, release_runtime
from lakecompat.harness.results.store import load_run

pytestmark = pytest.mark.integration
RENAME = "rename_column/rename"
SMALL_RUN = ("--formats", "hudi", "--table-types", "cow", "--variants", "default")


@pytest.fixture(autouse=True, scope="module")
def _runtime_released():
    """The Podman service a test starts in this process ends with the module (the next
    module's tests start with no service of this one's running)."""
    yield
    release_runtime()


def _podman(*args: str) -> str:
    """`podman` on the project's own configuration (no API service needed)."""
    done = subprocess.run(
        ["podman", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **podman_config()},
        check=True,
    )
    return done.stdout


def _containers_of_run(pid: int) -> dict[str, str]:
    """The containers of the run `pid` (whatever its start time), left or not, started by it
    or by a process it started (Spark's `spark-submit`): id → the service they run."""
    listed = json.loads(_podman("ps", "-a", "--format", "json", "--filter", f"label={LABEL}"))
    return {
        c["Id"]: (c.get("Labels") or {}).get(f"{LABEL}.service", "")
        for c in listed or []
        if (c.get("Labels") or {}).get(RUN_LABEL, "").startswith(f"{pid}-")
    }


def _containers_of(owner: str) -> list[str]:
    return _podman("ps", "-a", "-q", "--filter", f"label={RUN_LABEL}={owner}").split()


def _run_argv(engines: str, reports: Path, *more: str) -> list[str]:
    """`lakecompat run --containers` of the renamed column's table (and the baseline)."""
    run = [SCRIPT, "run", "--containers", "--scenarios", RENAME, "--engines", engines]
    return [*map(str, run), *SMALL_RUN, "--reports", str(reports), *more]


def test_trino_hiveserver2_spark_and_hudi_rs_in_containers_read_a_renamed_column(
    tmp_path: Path,
) -> None:
    reports = tmp_path / "reports"
    engines = "trino,hive,spark,hudi-rs"
    argv = _run_argv(engines, reports, "--expectations", str(ROOT / "expectations"))
    with subprocess.Popen(
        argv,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    ) as run:
        stdout, stderr = run.communicate(timeout=1800)
    done = subprocess.CompletedProcess(argv, run.returncode, stdout, stderr)
    # Exit 0: no cell differs from the known outcomes the process runs are judged by.
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    run_dir = only_run(reports)
    info, cells = load_run(run_dir)
    renamed = [c for c in cells if c.scenario == RENAME]
    assert {c.engine for c in renamed} == set(engines.split(","))
    where = {e: {c.runs_in for c in cells if c.engine == e} for e in engines.split(",")}
    # Each engine's own JDK: Trino's is newer than HiveServer2's; Spark's JVM runs in that
    # JDK's image with the run's Python added, for the Python workers Spark starts; hudi-rs's
    # worker in the image of that Python alone.
    assert all(len(found) == 1 for found in where.values()), where
    (trino,), (hive,), (spark,), (hudi_rs,) = where.values()
    assert trino.startswith("container localhost/lakecompat-jdk") and trino != hive
    assert hive.startswith("container localhost/lakecompat-jdk")
    assert spark.startswith("container localhost/lakecompat-jdk17-python:"), spark
    assert hudi_rs.startswith("container localhost/lakecompat-python:"), hudi_rs
    assert info["containers"] is True and info["runs_in"]["spark"] == spark
    # The containers' output is in the run's logs folder, as a process's would be.
    assert "starting trino in container" in (run_dir / "logs" / "trino.log").read_text()
    console = (run_dir / "logs" / "spark-console.log").read_text()
    assert "starting spark-console in container localhost/lakecompat-jdk17-python" in console
    # Nothing of the run is left: no container it started (other runs may have theirs).
    assert _containers_of_run(run.pid) == {}


def test_kill_9_of_a_containers_run_leaves_no_container_service_or_cgroup(
    tmp_path: Path,
) -> None:
    log = tmp_path / "run.log"
    with open(log, "w") as out:
        run = subprocess.Popen(
            _run_argv("trino,spark", tmp_path / "r"),
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    owner = owner_id(run.pid)
    try:
        # Killed once Trino's container and a Spark JVM's (started by PySpark through the
        # run's `spark-submit`, a process of its own) run.
        deadline = time.monotonic() + 900
        while {"trino", "spark"} - {s.split("-")[0] for s in _containers_of_run(run.pid).values()}:
            assert run.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(1)
        containers = _containers_of(owner)
        service = _podman_service_of(run.pid)
        assert service is not None
        os.kill(run.pid, signal.SIGKILL)
        run.wait(30)
        gone(service, timeout=90)
        deadline = time.monotonic() + 60
        while _containers_of(owner) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _containers_of(owner) == []
        for container in containers:
            assert not list(Path("/sys/fs/cgroup").glob(f"*/**/libpod-{container}*"))
        assert not Path(f"/tmp/lakecompat-podman-{run.pid}.sock").exists()
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()


def _podman_service_of(pid: int) -> int | None:
    """The pid of the Podman API service the run `pid` started, if any."""
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if f"lakecompat-podman-{pid}.sock" in command and "system service" in command:
            return int(entry.name)
    return None


def _user_image(java_home: Path) -> str:
    """An image as a user's registry would serve one (here built from the project's base, as
    no registry is reachable): a JDK at a path of its own, /opt/java/openjdk, on its PATH, as
    the official JDK images have it; nothing of Trino."""
    runtime = ready_runtime(Path(os.environ.get("TMPDIR", "/tmp")))
    base = images.base_image(runtime)
    tag = "localhost/lakecompat-test-user-jdk:" + images._digest(base, str(java_home))
    if images._existing(runtime, tag) is not None:
        return tag
    containerfile = (
        f"FROM {base}\nCOPY jdk/ /opt/java/openjdk/\nENV JAVA_HOME=/opt/java/openjdk\n"
        "ENV PATH=/opt/java/openjdk/bin:/usr/bin:/bin\nLABEL lakecompat=test-image\n"
    ).encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", dereference=True) as tar:
        info = tarfile.TarInfo("Containerfile")
        info.size = len(containerfile)
        tar.addfile(info, io.BytesIO(containerfile))
        images._add_resolved(tar, java_home, "jdk")
    buffer.seek(0)
    runtime.client.images.build(
        fileobj=buffer, custom_context=True, dockerfile="Containerfile", tag=tag, rm=True
    )
    return tag


def test_trino_runs_in_a_users_own_image_with_that_images_java(tmp_path: Path) -> None:
    """`--image trino=IMAGE`: Trino's command runs in the user's image with the image's own
    `java` (the image has no JDK at the host's path, so nothing else could start it), the jars
    and configuration mounted; it reads the renamed column as in the image built here, and its
    cells and run.json name the user's image."""
    image = _user_image(next(Path("/usr/lib/jvm").glob("temurin-25*")))
    reports = tmp_path / "reports"
    expectations = str(ROOT / "expectations")
    argv = _run_argv("trino", reports, "--expectations", expectations, "--image", f"trino={image}")
    done = subprocess.run(
        argv, cwd=tmp_path, capture_output=True, text=True, timeout=1800, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    run_dir = only_run(reports)
    info, cells = load_run(run_dir)
    assert cells and all(c.runs_in.startswith(f"container {image} (") for c in cells)
    assert info["images"] == {"trino": image}
    log = (run_dir / "logs" / "trino.log").read_text()
    assert f"starting trino in container {image}" in log


def test_an_image_that_is_neither_here_nor_pullable_is_told_before_anything_starts(
    tmp_path: Path,
) -> None:
    missing = "localhost/lakecompat-test-no-such-image:1"
    argv = _run_argv("trino", tmp_path / "r", "--image", f"trino={missing}")
    done = subprocess.run(
        argv, cwd=tmp_path, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("lakecompat: error")]
    assert len(errors) == 1, done.stderr
    assert errors[0].startswith(f"lakecompat: error: --image trino={missing}: {missing} is not")
    assert not list((tmp_path / "r").glob("runs/*"))


def test_without_podman_or_docker_the_run_says_so_in_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    environment = {k: v for k, v in os.environ.items() if k != "DOCKER_HOST"}
    done = subprocess.run(
        [SCRIPT, "run", "--containers", "--scenarios", RENAME, "--reports", "r"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**environment, "PATH": str(empty)},
    )
    if Path("/var/run/docker.sock").exists():
        pytest.fail("this machine has a Docker socket: the test needs a machine without one")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("lakecompat: error: --containers needs Podman or Docker")
    assert "apt-get install podman runc" in lines[0]
    # Told before the run began: no run folder.
    assert not (tmp_path / "r").exists() or not list((tmp_path / "r").glob("runs/*"))


def test_a_runtime_that_refuses_containers_is_told_before_anything_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A limit above what the machine allows (as on a machine whose runtime cannot set the
    run's own limits) is refused by the real runtime; the message says what failed."""
    runtime = ready_runtime(tmp_path)
    options = runtime.run_options

    def impossible(what: str) -> dict:
        found = options(what)
        found["ulimits"] = [
            type(limit)(name="nproc", soft=1 << 40, hard=1 << 40) for limit in found["ulimits"]
        ][:1]
        return found

    from lakecompat.engines.infra.containers import service

    monkeypatch.setattr(runtime, "run_options", impossible)
    monkeypatch.setattr(service, "_probed", set())
    with pytest.raises(ContainerError) as refused:
        ready_runtime(tmp_path)
    message = str(refused.value)
    # The refused container is not left behind, created.
    assert _containers_of(owner_id()) == []
    assert message.startswith("containers cannot run on this machine")
    assert "rlimit" in message and "\n" not in message
