"""Integration: a damaged file in the artifact cache is detected and fetched again with mvn."""

from __future__ import annotations

from pathlib import Path

import pytest

from engines.infra.artifacts import (
    Dependency,
    MavenArtifact,
    fetch,
    resolve_classpath,
    sha1_matches,
)

pytestmark = pytest.mark.integration
#: Tiny artifacts nothing else in the project uses, so damaging them harms no other test.
TINY = MavenArtifact("javax.inject", "javax.inject", "1")
TINY_TOO = MavenArtifact("aopalliance", "aopalliance", "1.0")


def damage(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_damaged_artifact_is_fetched_again() -> None:
    messages: list[str] = []
    path = fetch(TINY, messages.append)
    assert sha1_matches(path)
    good = path.read_bytes()
    damage(path)
    assert not sha1_matches(path)
    assert fetch(TINY, messages.append) == path
    assert path.read_bytes() == good
    assert any("does not match its recorded SHA-1" in m for m in messages)


def test_a_damaged_classpath_jar_is_fetched_again() -> None:
    messages: list[str] = []
    (jar,) = resolve_classpath("lakecompat-test-tiny", [Dependency(TINY_TOO)], messages.append)
    good = jar.read_bytes()
    damage(jar)
    assert resolve_classpath("lakecompat-test-tiny", [Dependency(TINY_TOO)], messages.append) == [
        jar
    ]
    assert jar.read_bytes() == good
    assert any(str(jar) in m and "damaged" in m for m in messages)
