"""Provisioning without a JVM or network: JDK discovery from fake homes, the artifact cache."""

from __future__ import annotations

import os
import subprocess
import zipfile
from pathlib import Path

import pytest

from lakecompat.engines.infra import artifacts, jdk
from lakecompat.engines.infra.artifacts import (
    MavenArtifact,
    ProvisioningError,
    cache_dir,
    excerpt_jar,
    fetch,
    maven_repo,
)

BUNDLE = MavenArtifact("org.apache.hudi", "hudi-spark3.5-bundle_2.12", "0.15.0")
SOURCES = MavenArtifact("org.apache.hudi", "hudi-common", "0.15.0", classifier="sources")


def executable(path: Path, text: str = "#!/bin/sh\nexit 0\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def make_jdk(home: Path, version: str) -> Path:
    """A directory that looks like a JDK of `version` to engines.infra.jdk."""
    executable(home / "bin" / "java")
    (home / "release").write_text(f'IMPLEMENTOR="Test"\nJAVA_VERSION="{version}"\n')
    return home


@pytest.fixture
def jvm_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty JVM root, no JAVA_HOME and a PATH without java: nothing of the host leaks in."""
    root = tmp_path / "jvm"
    root.mkdir()
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    monkeypatch.setattr(jdk, "JVM_ROOT", root)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(empty_bin))
    return root


@pytest.mark.parametrize(
    ("version", "major"), [("17.0.2", 17), ("11", 11), ("1.8.0_392", 8), ("21.0.1+12", 21)]
)
def test_jdk_major_reads_the_release_file(tmp_path: Path, version: str, major: int) -> None:
    assert jdk.jdk_major(make_jdk(tmp_path, version)) == major


def test_jdk_major_is_none_for_what_is_not_a_jdk(tmp_path: Path) -> None:
    no_java = tmp_path / "no-java"
    no_java.mkdir()
    (no_java / "release").write_text('JAVA_VERSION="17"\n')
    no_release = tmp_path / "no-release"
    executable(no_release / "bin" / "java")
    no_version = make_jdk(tmp_path / "no-version", "17")
    (no_version / "release").write_text('IMPLEMENTOR="Test"\n')
    assert [jdk.jdk_major(h) for h in (no_java, no_release, no_version)] == [None, None, None]


def test_finds_jdks_in_jvm_root(jvm_root: Path) -> None:
    make_jdk(jvm_root / "java-11", "11.0.20")
    make_jdk(jvm_root / "java-17", "17.0.8")
    (jvm_root / "broken").mkdir()
    assert jdk.installed_jdks() == [
        jdk.Jdk(jvm_root / "java-11", 11),
        jdk.Jdk(jvm_root / "java-17", 17),
    ]


def test_finds_java_home_and_java_on_path(
    tmp_path: Path, jvm_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = make_jdk(tmp_path / "opt" / "jdk-21", "21")
    on_path = make_jdk(tmp_path / "tools" / "jdk-11", "11")
    monkeypatch.setenv("JAVA_HOME", str(home))
    monkeypatch.setenv("PATH", str(on_path / "bin"))
    assert jdk.installed_jdks() == [jdk.Jdk(home, 21), jdk.Jdk(on_path, 11)]


def test_symlinked_homes_count_once(jvm_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = make_jdk(jvm_root / "java-17-openjdk", "17")
    (jvm_root / "default-java").symlink_to(real)
    monkeypatch.setenv("JAVA_HOME", str(jvm_root / "default-java"))
    assert jdk.installed_jdks() == [jdk.Jdk(real, 17)]


@pytest.mark.parametrize(("allowed", "chosen"), [((17, 11), 17), ((11, 17), 11), ((21, 11), 11)])
def test_find_jdk_prefers_allowed_versions_in_order(
    jvm_root: Path, allowed: tuple[int, ...], chosen: int
) -> None:
    for major in (8, 11, 17):
        make_jdk(jvm_root / f"java-{major}", str(major))
    found = jdk.find_jdk(allowed, "Spark")
    assert (found.major, found.home, found.java) == (
        chosen,
        jvm_root / f"java-{chosen}",
        jvm_root / f"java-{chosen}" / "bin" / "java",
    )


def test_find_jdk_takes_java_home_first_among_equals(
    tmp_path: Path, jvm_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_jdk(jvm_root / "java-17", "17")
    home = make_jdk(tmp_path / "my-jdk-17", "17")
    monkeypatch.setenv("JAVA_HOME", str(home))
    assert jdk.find_jdk((17,), "Spark").home == home


def test_find_jdk_error_says_what_was_found_and_what_is_needed(jvm_root: Path) -> None:
    make_jdk(jvm_root / "java-21", "21")
    make_jdk(jvm_root / "java-8", "1.8.0_392")
    with pytest.raises(ProvisioningError) as caught:
        jdk.find_jdk((17, 11), "Spark 3.5")
    message = str(caught.value)
    assert "Spark 3.5 needs Java 17 or 11" in message
    assert f"{jvm_root / 'java-21'} (Java 21)" in message
    assert f"{jvm_root / 'java-8'} (Java 8)" in message
    assert "openjdk-17-jdk-headless" in message
    assert "JAVA_HOME" in message


def test_find_jdk_error_when_nothing_is_installed(jvm_root: Path) -> None:
    with pytest.raises(ProvisioningError) as caught:
        jdk.find_jdk((17,), "Spark")
    assert "Spark needs Java 17, but no such JDK is installed (found: none)" in str(caught.value)


@pytest.mark.parametrize(
    ("mode", "option"),
    [
        ("always [madvise] never\n", ("-XX:+UseTransparentHugePages",)),
        ("[always] madvise never\n", ()),  # the kernel gives them anyway
        ("always madvise [never]\n", ()),
    ],
)
def test_huge_pages_are_asked_for_where_the_kernel_gives_them_on_request(
    tmp_path: Path, mode: str, option: tuple[str, ...]
) -> None:
    (tmp_path / "enabled").write_text(mode)
    assert jdk.huge_pages(tmp_path / "enabled") == option
    assert jdk.huge_pages(tmp_path / "missing") == ()  # a kernel without them


def test_every_installed_jdk_starts_with_the_option_and_its_heap_on_huge_pages() -> None:
    # Where the kernel says madvise (this machine), the option is there and the heap gets 2 MB
    # pages; elsewhere no option is passed, and the JVM starts as before.
    asked = jdk.huge_pages()
    assert bool(asked) == ("[madvise]" in jdk.THP_MODE.read_text())
    majors = set()
    for found in jdk.installed_jdks():
        done = subprocess.run(
            [str(found.java), *asked, "-Xlog:pagesize", "-Xmx64m", "-version"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        heap = [line for line in done.stdout.splitlines() if "] Heap:" in line]
        assert len(heap) == 1, done.stdout[-2000:]
        assert ("page_size=2M" in heap[0]) == bool(asked), (found, heap[0])
        majors.add(found.major)
    assert {17, 25} <= majors  # Spark, Hive and the Metastore on 17; Trino on 25


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv(artifacts.CACHE_ENV, str(root))
    return root


def test_cache_dir_honours_the_environment(cache: Path) -> None:
    assert cache_dir() == cache
    assert cache.is_dir()
    assert maven_repo() == cache / "m2"


@pytest.mark.parametrize("value", [None, ""])
def test_cache_dir_defaults_below_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    if value is None:
        monkeypatch.delenv(artifacts.CACHE_ENV, raising=False)
    else:
        monkeypatch.setenv(artifacts.CACHE_ENV, value)
    assert cache_dir() == tmp_path / ".cache" / "lakecompat"
    assert cache_dir().is_dir()


def test_maven_coordinates_and_file_names() -> None:
    assert BUNDLE.coords == "org.apache.hudi:hudi-spark3.5-bundle_2.12:0.15.0:jar"
    assert BUNDLE.filename == "hudi-spark3.5-bundle_2.12-0.15.0.jar"
    assert SOURCES.coords == "org.apache.hudi:hudi-common:0.15.0:jar:sources"
    assert SOURCES.filename == "hudi-common-0.15.0-sources.jar"


def test_local_path_follows_the_maven_layout(tmp_path: Path) -> None:
    folder = tmp_path.joinpath("org", "apache", "hudi", "hudi-spark3.5-bundle_2.12", "0.15.0")
    assert BUNDLE.local_path(tmp_path) == folder / "hudi-spark3.5-bundle_2.12-0.15.0.jar"


@pytest.fixture
def no_mvn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty_bin = tmp_path / "no-mvn-bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))


def put_in_cache(artifact: MavenArtifact) -> Path:
    path = artifact.local_path(maven_repo())
    path.parent.mkdir(parents=True)
    path.write_bytes(b"PK")
    return path


def test_fetch_uses_the_cache_without_maven(cache: Path, no_mvn: None) -> None:
    cached = put_in_cache(BUNDLE)
    said: list[str] = []
    assert fetch(BUNDLE, said.append) == cached
    assert said == []


def test_fetch_without_maven_names_mvn(cache: Path, no_mvn: None) -> None:
    said: list[str] = []
    with pytest.raises(ProvisioningError, match=r"Maven \(`mvn`\) is not on PATH"):
        fetch(BUNDLE, said.append)
    assert said == [f"fetching {BUNDLE.coords} with mvn (first use; cached in {cache / 'm2'})"]


def fake_mvn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> Path:
    """Put a shell script called `mvn` first on PATH; it records its arguments in `args`."""
    bin_dir = tmp_path / "fake-bin"
    log = tmp_path / "args"
    executable(bin_dir / "mvn", f'#!/bin/sh\nprintf "%s\\n" "$@" > "{log}"\n{body}\n')
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    return log


def test_fetch_runs_maven_once_then_uses_the_cache(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = BUNDLE.local_path(cache / "m2")
    log = fake_mvn(
        tmp_path,
        monkeypatch,
        f'mkdir -p "{target.parent}" && touch "{target}"\n'
        'echo "[INFO] Downloaded from central: org/example/x.jar (1 kB at 1 MB/s)"',
    )
    said: list[str] = []
    assert fetch(BUNDLE, said.append) == target
    assert said[1:] == ["  Downloaded from central: org/example/x.jar (1 kB at 1 MB/s)"]
    assert log.read_text().splitlines() == [
        "-B",
        "--strict-checksums",
        f"-Dmaven.repo.local={cache / 'm2'}",
        "dependency:get",
        f"-Dartifact={BUNDLE.coords}",
        "-Dtransitive=false",
    ]
    log.unlink()
    assert fetch(BUNDLE, said.append) == target
    assert not log.exists()


def test_fetch_reports_a_failing_maven_with_its_output(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_mvn(tmp_path, monkeypatch, 'echo "[ERROR] Could not resolve artifact"\nexit 3')
    with pytest.raises(ProvisioningError) as caught:
        fetch(BUNDLE, lambda _: None)
    message = str(caught.value)
    assert "failed (exit 3)" in message
    assert "[ERROR] Could not resolve artifact" in message


def test_fetch_notices_a_successful_maven_that_left_no_file(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_mvn(tmp_path, monkeypatch, "exit 0")
    with pytest.raises(ProvisioningError, match=r"mvn reported success but .* is missing"):
        fetch(BUNDLE, lambda _: None)


def _jar(path: Path, entries: dict[str, str], sha1: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in entries.items():
            archive.writestr(name, text)
    path.with_name(path.name + ".sha1").write_text(sha1 + "\n")
    return path


def test_excerpt_jar_holds_the_manifest_and_the_entries_below_a_prefix(
    tmp_path: Path, cache: Path
) -> None:
    entries = {"META-INF/MANIFEST.MF": "Implementation-Version: 4\n", "a/B.class": "b"}
    jar = _jar(tmp_path / "lib-1.jar", {**entries, "a/B$1.class": "i", "a/C.class": "c"}, "ab" * 20)
    said: list[str] = []
    excerpt = excerpt_jar(jar, "a/B", said.append)
    assert excerpt == cache / "excerpts" / f"lib-1-{'ab' * 6}-a.B.jar"
    with zipfile.ZipFile(excerpt) as made:
        assert sorted(made.namelist()) == ["META-INF/MANIFEST.MF", "a/B$1.class", "a/B.class"]
        assert made.read("META-INF/MANIFEST.MF") == b"Implementation-Version: 4\n"
    assert said == [f"copying a/B* out of lib-1.jar into {cache / 'excerpts'}"]
    made_at = excerpt.stat().st_mtime_ns
    assert excerpt_jar(jar, "a/B", said.append) == excerpt
    assert excerpt.stat().st_mtime_ns == made_at and len(said) == 1, "made again"
    newer = _jar(tmp_path / "lib-1.jar", {**entries, "a/B.class": "c"}, "cd" * 20)
    with zipfile.ZipFile(excerpt_jar(newer, "a/B", said.append)) as made:
        assert made.read("a/B.class") == b"c"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, r"could not copy a/B\* out of .*broken\.jar"),
        ({"META-INF/MANIFEST.MF": "x", "c/D.class": "d"}, r"broken\.jar has no entries below a/B"),
    ],
    ids=["not-a-jar", "no-such-entries"],
)
def test_excerpt_jar_names_the_jar_and_leaves_no_file(
    tmp_path: Path, cache: Path, content: dict[str, str] | None, problem: str
) -> None:
    jar = tmp_path / "broken.jar"
    if content is None:
        jar.write_bytes(b"not a zip")
    else:
        _jar(jar, content, "ef" * 20)
    with pytest.raises(ProvisioningError, match=problem):
        excerpt_jar(jar, "a/B", lambda _: None)
    assert not list(cache.glob("excerpts/*"))


_HOLD_THE_LOCK = """
import sys, time
from lakecompat.engines.infra.artifacts import one_at_a_time

@one_at_a_time
def fetch_slowly():
    print("holding", flush=True)
    time.sleep(float(sys.argv[1]))

fetch_slowly()
"""


def test_two_processes_sharing_a_cache_provision_one_after_the_other(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another lakecompat process holding the cache's provisioning lock makes this one wait
    (saying so once the wait lasts `QUIET_WAIT`) until it is done, and the lock is this
    process's again afterwards; a shorter wait (a process checking its jars) goes unsaid."""
    import subprocess
    import sys
    import time

    project = Path(__file__).resolve().parent.parent

    def hold(seconds: str) -> subprocess.Popen[str]:
        holder = subprocess.Popen(
            [sys.executable, "-c", _HOLD_THE_LOCK, seconds],
            cwd=project,
            env={**os.environ, "LAKECOMPAT_CACHE": str(cache), "PYTHONPATH": str(project)},
            stdout=subprocess.PIPE,
            text=True,
        )
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
        return holder

    said: list[str] = []
    monkeypatch.setattr(artifacts, "say_on_stderr", said.append)
    monkeypatch.setattr(artifacts, "QUIET_WAIT", 0.3)
    holder = hold("1.5")
    try:
        started = time.monotonic()
        waited = artifacts.one_at_a_time(lambda: time.monotonic() - started)
        assert waited() >= 0.5  # it ran once the other process had let go
        assert holder.wait(timeout=30) == 0
        assert len(said) == 1 and "waiting for another lakecompat process" in said[0]
        assert str(cache / "provisioning.lock") in said[0]
        # Nested provisioning in one process takes the lock once, without waiting on itself.
        inner = artifacts.one_at_a_time(lambda: "inner")
        assert artifacts.one_at_a_time(inner)() == "inner"
    finally:
        holder.kill()
        holder.wait()
    monkeypatch.setattr(artifacts, "QUIET_WAIT", 5.0)
    brief = hold("0.5")
    try:
        assert artifacts.one_at_a_time(lambda: "after a brief wait")() == "after a brief wait"
        assert len(said) == 1  # nothing more was said
    finally:
        brief.kill()
        brief.wait()
