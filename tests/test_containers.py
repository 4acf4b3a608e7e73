"""The parts of `--containers` that need no container runtime: the reaper's removal of a
killed run's containers through the API, the Debian mirror, which commands run in a container,
and the folders a container sees."""

from __future__ import annotations

import io
import re
import socket
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from lakecompat.engines.infra import reaper
from lakecompat.engines.infra.containers import images
from lakecompat.engines.infra.containers.runtime import (
    ContainerError,
    own_cgroup,
    owner_alive,
    owner_id,
)
from lakecompat.engines.infra.containers.service import ContainerService, java_home_of


class _UnixHTTPServer(HTTPServer):
    address_family = socket.AF_UNIX

    def server_bind(self) -> None:
        self.socket.bind(self.server_address)
        self.server_name, self.server_port = "localhost", 0


def test_the_reaper_removes_the_listed_containers_through_the_api(tmp_path: Path) -> None:
    """What a killed run's reaper does with its pipe's lines: a container released before
    the end is left alone, one still listed is removed (`DELETE ...?force=true`)."""
    asked: list[str] = []

    class Api(BaseHTTPRequestHandler):
        def do_DELETE(self) -> None:
            asked.append(self.path)
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    path = tmp_path / "api.sock"
    server = _UnixHTTPServer(str(path), Api)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        lines = f"+c unix://{path} aaa\n+c unix://{path} bbb\n-c unix://{path} aaa\n"
        reaper.serve(io.BytesIO(lines.encode()), grace_s=0.1)
    finally:
        server.shutdown()
        server.server_close()
    assert asked == ["/containers/bbb?force=true&v=true"]


def test_a_removal_through_an_api_that_is_gone_is_not_taken_for_done() -> None:
    assert reaper.remove_container("unix:///nonexistent/api.sock", "x") is False


def test_owner_ids_tell_a_live_process_from_a_gone_one() -> None:
    assert owner_alive(owner_id())
    pid, _, start = owner_id().partition("-")
    assert not owner_alive(f"{pid}-{int(start) + 1}")  # the same pid, another process
    assert not owner_alive("not-a-pid")


def test_the_debian_mirror_comes_from_apt_sources_or_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(images.MIRROR_ENV, raising=False)
    listed = tmp_path / "sources.list.d"
    listed.mkdir()
    (listed / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.invalid/debian-security\nSuites: bookworm-security\n\n"
        "Types: deb\nURIs: http://mirror.invalid/debian\nSuites: bookworm\n"
    )
    monkeypatch.setattr(images, "APT_SOURCES", (tmp_path / "sources.list", listed))
    assert images.debian_mirror() == "http://mirror.invalid/debian"
    (tmp_path / "sources.list").write_text(
        "deb [arch=amd64] http://other.invalid/debian bookworm main\n"
    )
    assert images.debian_mirror() == "http://other.invalid/debian"
    monkeypatch.setenv(images.MIRROR_ENV, "http://set.invalid/debian")
    assert images.debian_mirror() == "http://set.invalid/debian"
    monkeypatch.delenv(images.MIRROR_ENV)
    monkeypatch.setattr(images, "APT_SOURCES", (tmp_path / "none",))
    with pytest.raises(ContainerError, match=images.MIRROR_ENV):
        images.debian_mirror()


def test_only_a_jdk_command_runs_in_a_container(tmp_path: Path) -> None:
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "java").write_text("")
    (home / "release").write_text('JAVA_VERSION="17.0.15"\n')
    assert java_home_of([str(home / "bin" / "java"), "-version"]) == home
    assert java_home_of(["/usr/bin/python3", "worker.py"]) is None
    assert java_home_of([]) is None


def test_a_python_reader_runs_in_a_container_when_its_virtualenv_is_of_this_python(
    tmp_path: Path,
) -> None:
    """A worker's virtualenv made from the run's Python runs in the Python image (which holds
    that Python); one made from another Python, or a system Python, runs as a process."""
    import sys

    from lakecompat.engines.infra.containers.service import runs_this_python

    for name, home in (("ours", Path(sys.base_prefix, "bin")), ("other", tmp_path / "py")):
        (tmp_path / name / "bin").mkdir(parents=True)
        (tmp_path / name / "pyvenv.cfg").write_text(f"home = {home}\nversion = 3.11.7\n")
    assert runs_this_python([str(tmp_path / "ours" / "bin" / "python"), "-I", "worker.py"])
    assert not runs_this_python([str(tmp_path / "other" / "bin" / "python"), "worker.py"])
    assert not runs_this_python(["/usr/bin/python3", "worker.py"])
    assert not runs_this_python([])


def test_the_python_image_leaves_out_packages_tests_and_the_static_library(
    tmp_path: Path,
) -> None:
    prefix = tmp_path / "python"
    for folder in (
        "bin",
        "lib/python3.11/site-packages/numpy",
        "lib/python3.11/test",
        "lib/python3.11/config-3.11-x86_64-linux-gnu",
        "lib/python3.11/json",
    ):
        (prefix / folder).mkdir(parents=True)
        (prefix / folder / "a.py").write_text("")
    (prefix / "lib" / "python3.11" / "os.py").write_text("")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        images._add_resolved(tar, prefix, "copied", images._PYTHON_LEFT_OUT)
    with tarfile.open(fileobj=io.BytesIO(buffer.getvalue())) as tar:
        files = {m.name for m in tar.getmembers() if m.isfile()}
    assert files == {
        "copied/bin/a.py",
        "copied/lib/python3.11/json/a.py",
        "copied/lib/python3.11/os.py",
    }


def test_a_container_sees_each_folder_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAKECOMPAT_CACHE", str(tmp_path / "cache"))
    run = tmp_path / "run"
    service = ContainerService.__new__(ContainerService)
    service.log_dir = run / "logs"
    service.cwd = tmp_path / "cache" / "trino" / "483"
    service.scratch = service.cwd / "tmp"
    from lakecompat.engines.infra.containers import service as module

    monkeypatch.setattr(module, "_shared", {run})
    assert service.mounts() == [(tmp_path / "cache").resolve(), run.resolve()]


def test_own_cgroup_is_a_path() -> None:
    assert own_cgroup().startswith("/")


def test_the_reports_header_says_which_engines_ran_in_containers() -> None:
    from lakecompat.harness.report.summary import engine_versions

    info = {
        "engines": {"spark": "3.5.9", "trino": "483"},
        "runs_in": {"spark": "process", "trino": "container localhost/lakecompat-jdk25:1 (Podman)"},
    }
    assert engine_versions(info) == (
        "spark 3.5.9, trino 483 in container localhost/lakecompat-jdk25:1 (Podman)"
    )
    assert engine_versions({**info, "runs_in": None}) == "spark 3.5.9, trino 483"


def test_a_docker_host_that_does_not_answer_is_said_in_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lakecompat.engines.infra.containers import runtime

    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/nothing.sock")
    with pytest.raises(ContainerError) as refused:
        runtime._docker()
    message = str(refused.value)
    assert message.startswith(f"DOCKER_HOST=unix://{tmp_path}/nothing.sock does not answer")
    assert message.endswith("or unset DOCKER_HOST to let lakecompat start Podman")
    assert "\n" not in message


@pytest.mark.parametrize(
    ("given", "containers", "wrong"),
    [
        (["trino=x"], False, "give --containers too"),
        (["spark=x"], True, "expected ENGINE=IMAGE with ENGINE one of"),
        (["trino"], True, "expected ENGINE=IMAGE with ENGINE one of"),
        (["trino=a", "trino=b"], True, "--image trino= is given twice: a and b"),
    ],
)
def test_a_wrong_image_option_is_refused_naming_it(
    given: list[str], containers: bool, wrong: str
) -> None:
    from lakecompat.harness.run.command import user_images

    with pytest.raises(ValueError, match=re.escape(wrong)) as refused:
        user_images(given, containers)
    assert str(refused.value).startswith(f"--image {given[-1].partition('=')[0]}")


def test_image_options_name_the_services_of_their_engines() -> None:
    from lakecompat.engines import image_services
    from lakecompat.harness.run.command import user_images

    assert user_images(["trino=t:1", "metastore=m:2", "trino=t:1"], True) == {
        "trino": "t:1",
        "metastore": "m:2",
    }
    services = image_services()
    assert services["hive"] == ("hiveserver2",) and services["metastore"] == ("hive-metastore",)
    assert "spark" not in services and "hudi-rs" not in services
