"""Hadoop-style configuration files (`*-site.xml`), a console-only log4j2 setup, and Hadoop's
configuration files gathered into one jar for a JVM's classpath."""

from __future__ import annotations

import hashlib
import os
import zipfile
from pathlib import Path
from xml.etree import ElementTree
from xml.sax.saxutils import escape

from lakecompat.engines.infra.artifacts import cache_dir, one_at_a_time

LOG4J2_CONSOLE = """\
status = WARN
appenders = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
rootLogger.level = INFO
rootLogger.appenderRefs = console
rootLogger.appenderRef.console.ref = console
loggers = datanucleus
logger.datanucleus.name = DataNucleus
logger.datanucleus.level = ERROR
"""


def site_xml(properties: dict[str, str]) -> str:
    """A Hadoop configuration document with one <property> per entry."""
    body = "".join(
        f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>\n"
        for k, v in properties.items()
    )
    return f'<?xml version="1.0"?>\n<configuration>\n{body}</configuration>\n'


def write_conf(folder: Path, files: dict[str, str]) -> Path:
    """Write configuration files into `folder` (on a JVM classpath, or named by a service's
    `*_CONF_DIR` variable)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


#: The files a Hadoop `Configuration` looks up by name on the classpath whenever it loads its
#: defaults (with `JobConf`, `HdfsConfiguration` and `YarnConfiguration` loaded, as in
#: HiveServer2, every new `Configuration` reads all of them).
HADOOP_RESOURCES = (
    "core-default.xml",
    "core-site.xml",
    "hdfs-default.xml",
    "hdfs-site.xml",
    "mapred-default.xml",
    "mapred-site.xml",
    "yarn-default.xml",
    "yarn-site.xml",
)
_EMPTY = '<?xml version="1.0"?>\n<configuration/>\n'
#: Hadoop's own defaults, copied without what its parser passes over; the site files as found.
_DEFAULTS = tuple(name for name in HADOOP_RESOURCES if name.endswith("-default.xml"))
#: Part of the jar's cache key: what `resources_first` makes of the files it finds.
_LAYOUT = "2: descriptions and comments left out, stored uncompressed"


def without_descriptions(document: bytes) -> bytes:
    """`document` (a Hadoop configuration file) without its properties' `<description>`s and
    its comments: the same properties, values and `<final>` marks, a third of the text.

    Hadoop's parser passes over both, but it still reads them: HiveServer2 3 loads the four
    `*-default.xml` files (600 KB) for every new `Configuration`, at least once a query. A
    document this cannot read, or one that uses XML namespaces (`xi:include`), is kept as it
    is."""
    if b"xmlns" in document:
        return document
    try:
        root = ElementTree.fromstring(document)  # comments are not kept
    except ElementTree.ParseError:
        return document
    for prop in root.iter("property"):
        for description in prop.findall("description"):
            prop.remove(description)
    return ElementTree.tostring(root, encoding="utf-8", xml_declaration=True)


@one_at_a_time
def resources_first(classpath: list[Path]) -> Path:
    """A jar to put first on `classpath`, holding what a lookup of each of Hadoop's
    configuration files finds on `classpath` (its first copy; an empty configuration where
    there is none, which adds nothing either): the same files and so the same configuration,
    but each lookup ends in the first jar. Without it, a lookup opened every jar in turn (all
    205 of HiveServer2 3's for each missing `*-site.xml`), and Hive 3 makes a new
    `Configuration` for every query. Hadoop's `*-default.xml` are copied without what its
    parser passes over (`without_descriptions`), and the jar is stored uncompressed. Made once
    per classpath, in the cache."""
    # What a JVM can read on a classpath: folders and jars (a listed `.pom` is passed over).
    classpath = [entry for entry in classpath if entry.suffix == ".jar" or entry.is_dir()]
    key = "\n".join([_LAYOUT, *map(str, classpath)])
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    made = cache_dir() / "hadoop-resources" / f"{digest}.jar"
    if made.is_file():
        return made
    found: dict[str, bytes] = {}
    for entry in classpath:
        if entry.is_dir():
            for name in HADOOP_RESOURCES:
                if name not in found and (entry / name).is_file():
                    found[name] = (entry / name).read_bytes()
            continue
        with zipfile.ZipFile(entry) as archive:
            names = set(archive.namelist())
            for name in HADOOP_RESOURCES:
                if name not in found and name in names:
                    found[name] = archive.read(name)
    made.parent.mkdir(parents=True, exist_ok=True)
    part = made.with_name(f"{made.name}.{os.getpid()}")
    with zipfile.ZipFile(part, "w", zipfile.ZIP_STORED) as out:
        for name in HADOOP_RESOURCES:
            text = found.get(name, _EMPTY.encode())
            out.writestr(name, without_descriptions(text) if name in _DEFAULTS else text)
    part.replace(made)
    return made
