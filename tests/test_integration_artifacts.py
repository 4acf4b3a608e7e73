"""Integration: a damaged file in the artifact cache is detected and fetched again with mvn."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lakecompat.engines.infra.artifacts import (
    Dependency,
    MavenArtifact,
    cache_dir,
    fetch,
    resolve_classpath,
    sha1_matches,
)

pytestmark = pytest.mark.integration
#: Tiny artifacts on no engine's classpath: fetching one again gives its jar a new modification
#: time, and a JVM's class archive is only valid for the jar times it was written with (so
#: damaging javax.inject and aopalliance, which Trino and HiveServer2 load, had every suite
#: write those servers' archives again).
TINY = MavenArtifact("org.hamcrest", "hamcrest-core", "1.3")
TINY_TOO = MavenArtifact("org.hamcrest", "hamcrest", "2.2")
OWN_CLASSPATH = "lakecompat-test-tiny"


def check_on_no_engines_classpath(jar: Path) -> None:
    """`jar` is on none of the classpaths the cache holds but this test's own."""
    for listing in (cache_dir() / "classpaths").glob("*/classpath.txt"):
        if listing.parent.name != OWN_CLASSPATH:
            assert str(jar) not in listing.read_text().strip().split(os.pathsep), (
                f"{jar} is on {listing.parent.name}'s classpath: give this test another artifact"
            )


def damage(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_damaged_artifact_is_fetched_again() -> None:
    messages: list[str] = []
    path = fetch(TINY, messages.append)
    check_on_no_engines_classpath(path)
    assert sha1_matches(path)
    good = path.read_bytes()
    damage(path)
    assert not sha1_matches(path)
    assert fetch(TINY, messages.append) == path
    assert path.read_bytes() == good
    assert any("does not match its recorded SHA-1" in m for m in messages)


def test_a_damaged_classpath_jar_is_fetched_again() -> None:
    messages: list[str] = []
    (jar,) = resolve_classpath(OWN_CLASSPATH, [Dependency(TINY_TOO)], messages.append)
    check_on_no_engines_classpath(jar)
    good = jar.read_bytes()
    damage(jar)
    assert resolve_classpath(OWN_CLASSPATH, [Dependency(TINY_TOO)], messages.append) == [jar]
    assert jar.read_bytes() == good
    assert any(str(jar) in m and "damaged" in m for m in messages)
