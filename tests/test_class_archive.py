"""Class archives with a real JVM: written at a clean exit, mapped by the next start, never
kept half-written, and never made where the JVM cannot archive."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from lakecompat.engines.infra.artifacts import CACHE_ENV, cache_dir
from lakecompat.engines.infra.class_archive import (
    FOLDER,
    KEPT_PER_SERVER,
    NO_ARCHIVE,
    SWITCH,
    WRITING_GRACE_S,
    ClassArchive,
    class_archive,
)
from lakecompat.engines.infra.jdk import Jdk, classes_jar, compile_java, installed_jdks

HELLO = """package lakecompat;
public class Hello {
    public static void main(String[] args) { System.out.println("hello " + args.length); }
}
"""


@pytest.fixture
def jdk() -> Jdk:
    full = [j for j in installed_jdks() if (j.home / "bin" / "javac").is_file()]
    assert full, "no full JDK installed"
    return max(full, key=lambda j: j.major)


@pytest.fixture
def hello(jdk: Jdk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(SWITCH, raising=False)
    return classes_jar(compile_java(jdk, "lakecompat.Hello", HELLO, [], tmp_path / "classes"))


def java(jdk: Jdk, archive: ClassArchive, jar: Path, *extra: str) -> int:
    done = subprocess.run(
        [str(jdk.java), *archive.flags, *extra, "-cp", str(jar), "lakecompat.Hello"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.strip() == "hello 0", done.stdout + done.stderr
    return done.returncode


def test_the_first_start_writes_the_archive_and_the_next_maps_it(jdk: Jdk, hello: Path) -> None:
    first = class_archive("hello", jdk, [str(hello)], [])
    assert first.path is not None and first.pending is not None
    assert not first.path.exists()
    first.settle(java(jdk, first, hello))
    assert first.path.is_file() and not first.pending.exists()
    second = class_archive("hello", jdk, [str(hello)], [])
    assert second == ClassArchive(first.path)
    # A stop waits long enough for the first JVM to write the archive, not for the others.
    assert first.stop_grace_s == WRITING_GRACE_S > second.stop_grace_s == NO_ARCHIVE.stop_grace_s
    # -Xshare:on makes a JVM that cannot map the archive fail instead of going on without it.
    assert java(jdk, second, hello, "-Xshare:on") == 0


def test_a_jvm_ended_by_a_signal_leaves_no_archive(jdk: Jdk, hello: Path) -> None:
    archive = class_archive("hello", jdk, [str(hello)], [])
    assert archive.path is not None and archive.pending is not None
    java(jdk, archive, hello)
    archive.settle(-9)  # as if killed while it wrote
    assert not archive.path.exists() and not archive.pending.exists()
    archive.pending.write_bytes(b"\0" * 64)  # half-written: no magic number in front
    archive.settle(0)
    assert not archive.path.exists() and not archive.pending.exists()


def test_each_classpath_and_jvm_option_set_has_its_own_archive(jdk: Jdk, hello: Path) -> None:
    plain = class_archive("hello", jdk, [str(hello)], [])
    quick = class_archive("hello", jdk, [str(hello)], ["-XX:TieredStopAtLevel=1"])
    assert plain.path is not None and quick.path is not None and plain.path != quick.path
    hello.write_bytes(hello.read_bytes() + b"\0")  # the jar changed
    changed = class_archive("hello", jdk, [str(hello)], [])
    assert changed.path is not None and changed.path != plain.path


def test_no_archive_for_a_folder_of_classes_or_when_switched_off(
    jdk: Jdk, hello: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The JVM refuses to archive a classpath with a folder of classes on it.
    assert class_archive("hello", jdk, [str(tmp_path / "classes"), str(hello)], []) == NO_ARCHIVE
    monkeypatch.setenv(SWITCH, "off")
    assert class_archive("hello", jdk, [str(hello)], []) == NO_ARCHIVE
    assert NO_ARCHIVE.flags == []


def test_a_server_keeps_its_most_recently_used_archives_only(jdk: Jdk, hello: Path) -> None:
    folder = cache_dir() / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    magic = (0xF00BABA8).to_bytes(4, "little")
    old = [folder / f"hello-java{jdk.major}-{index:016x}.jsa" for index in range(5)]
    other = folder / f"trino-java{jdk.major}-{0:016x}.jsa"
    for age, path in enumerate([*old, other]):
        path.write_bytes(magic)
        os.utime(path, (time.time() - 3600 * (age + 1),) * 2)  # old[0] used last
    archive = class_archive("hello", jdk, [str(hello)], [])
    assert archive.path is not None and archive.pending is not None  # a new classpath
    # With the one this start writes, the server keeps KEPT_PER_SERVER archives.
    assert [p for p in old if p.exists()] == old[: KEPT_PER_SERVER - 1]
    assert other.exists()
