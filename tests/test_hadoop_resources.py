"""The jar of Hadoop's configuration files that goes first on HiveServer2 3's classpath."""

from __future__ import annotations

import zipfile
from pathlib import Path
from xml.etree import ElementTree

import pytest

from lakecompat.engines.infra.hadoop_conf import (
    HADOOP_RESOURCES,
    resources_first,
    without_descriptions,
)


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
        assert archive.read("core-default.xml").endswith(b"<configuration>core</configuration>")
        assert archive.read("yarn-default.xml").endswith(b"<configuration>yarn</configuration>")
        assert archive.read("mapred-site.xml") == b"<configuration>mine</configuration>"
        # Missing before, empty now: a configuration without properties.
        assert b"<configuration/>" in archive.read("core-site.xml")
    # Made once per classpath; another classpath gets a jar of its own.
    assert resources_first(classpath) == made
    assert resources_first(classpath[2:]) != made


DEFAULTS = """<?xml version="1.0"?>
<?xml-stylesheet type="text/xsl" href="configuration.xsl"?>
<!-- Licensed to the Apache Software Foundation: <description>not a property</description> -->
<configuration>
<property>
  <name>fs.defaultFS</name>
  <value>file:///</value>
  <description>The name of the default file system. A URI whose
  scheme and authority determine the FileSystem implementation &amp; more.</description>
</property>
<!-- a comment between properties -->
<property>
  <name>io.serializations</name>
  <value>a&amp;b,&lt;c&gt;</value>
  <final>true</final>
  <description/>
</property>
<property><name>empty.value</name><value></value></property>
</configuration>
"""


def _properties(document: bytes) -> list[tuple[str | None, ...]]:
    root = ElementTree.fromstring(document)
    return [
        tuple(p.findtext(child) for child in ("name", "value", "final"))
        for p in root.iter("property")
    ]


def test_the_copies_keep_every_property_and_leave_out_descriptions_and_comments() -> None:
    stripped = without_descriptions(DEFAULTS.encode())
    assert _properties(stripped) == _properties(DEFAULTS.encode())
    assert _properties(stripped) == [
        ("fs.defaultFS", "file:///", None),
        ("io.serializations", "a&b,<c>", "true"),
        ("empty.value", "", None),
    ]
    assert b"description" not in stripped
    assert b"<!--" not in stripped
    assert stripped.startswith(b"<?xml")


def test_a_document_it_cannot_read_or_with_namespaces_is_kept_as_it_is() -> None:
    broken = b"<configuration><property><name>x</name></configuration>"
    assert without_descriptions(broken) == broken
    # Hadoop's files declare XInclude's namespace for `xi:include`; any declaration counts.
    included = (
        b'<configuration xmlns:xi="urn:lakecompat:test:xinclude">'
        b'<xi:include href="more.xml"/><property><name>x</name><value>1</value>'
        b"<description>d</description></property></configuration>"
    )
    assert without_descriptions(included) == included
