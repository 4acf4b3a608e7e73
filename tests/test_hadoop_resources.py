"""The jar of Hadoop's configuration files that goes first on HiveServer2 3's classpath."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from engines.infra.hadoop_conf import HADOOP_RESOURCES, resources_first


def jar(path: Path, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


def test_it_holds_what_a_lookup_finds_first_and_nothing_where_there_is_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAKECOMPAT_CACHE", str(tmp_path / "cache"))
    (tmp_path / "classes").mkdir()
    (tmp_path / "listed.pom").write_text("<project/>")
    (tmp_path / "classes" / "mapred-site.xml").write_text("<configuration>mine</configuration>")
    classpath = [
        jar(tmp_path / "a.jar", {"org/x/A.class": "x"}),
        tmp_path / "classes",  # a folder: its files count like a jar's
        tmp_path / "listed.pom",  # not a jar: passed over, as a JVM passes it over
        jar(tmp_path / "common.jar", {"core-default.xml": "<configuration>core</configuration>"}),
        jar(tmp_path / "later.jar", {"core-default.xml": "<configuration>later</configuration>"}),
        jar(tmp_path / "yarn.jar", {"yarn-default.xml": "<configuration>yarn</configuration>"}),
    ]
    made = resources_first(classpath)
    with zipfile.ZipFile(made) as archive:
        assert sorted(archive.namelist()) == sorted(HADOOP_RESOURCES)
        assert archive.read("core-default.xml") == b"<configuration>core</configuration>"
        assert archive.read("yarn-default.xml") == b"<configuration>yarn</configuration>"
        assert archive.read("mapred-site.xml") == b"<configuration>mine</configuration>"
        # Missing before, empty now: a configuration without properties.
        assert b"<configuration/>" in archive.read("core-site.xml")
    # Made once per classpath; another classpath gets a jar of its own.
    assert resources_first(classpath) == made
    assert resources_first(classpath[2:]) != made
