"""Hive 3 on Java 17: which releases need lakecompat's Hive 3 classes, and how a JVM is
started through the class loader (the classes themselves run in the Hive 3 integration test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakecompat.engines.metastore import hive3
from lakecompat.engines.metastore.hive3 import LOADER_CLASS, SOURCES, hive3_launch, is_hive3


@pytest.mark.parametrize(
    ("version", "three"), [("3.1.3", True), ("4.0.1", False), ("2.3.10", False)]
)
def test_only_hive_3_releases_take_the_hive_3_path(version: str, three: bool) -> None:
    assert is_hive3(version) is three


def test_the_sources_are_ours_and_name_the_classes_they_replace() -> None:
    names = sorted(p.relative_to(SOURCES).as_posix() for p in SOURCES.rglob("*.java"))
    assert names == [
        "lakecompat/hive3/ClasspathLoader.java",
        "lakecompat/hive3/LoopbackSockets.java",
        "org/apache/hadoop/hive/common/auth/HiveAuthUtils.java",
        "org/apache/hadoop/hive/metastore/utils/SecurityUtils.java",
        "org/apache/hadoop/hive/ql/exec/SerializationUtilities$ArrayListSubListSerializer.java",
    ]
    for path in SOURCES.rglob("*.java"):
        assert "lakecompat" in path.read_text()  # each says why it exists


def test_a_hive_3_jvm_loads_the_listed_classpath_through_the_loader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loader, patches = tmp_path / "loader.jar", tmp_path / "patches.jar"
    monkeypatch.setattr(hive3, "hive3_jars", lambda classpath: (loader, patches))
    jars = [patches, tmp_path / "hive-exec-3.1.3.jar"]
    flags = hive3_launch(jars, tmp_path / "conf")
    listing = tmp_path / "conf" / "classpath.txt"
    assert flags == [
        f"-Djava.system.class.loader={LOADER_CLASS}",
        f"-Dlakecompat.classpath.file={listing}",
        "-Dlakecompat.bind.host=127.0.0.1",
        "-cp",
        str(loader),
    ]
    assert listing.read_text().splitlines() == [str(j) for j in jars]
