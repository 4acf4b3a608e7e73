"""Hive 3 (3.1.x, the Hive line Hudi builds its Hive support for) on Java 17.

Hive 3 expects Java 8; only Java 17 and 25 are here. Its Metastore and HiveServer2 run on
Java 17 from the same Maven classpath (hive-service and its dependencies: the Hive 3
Metastore needs classes of hive-exec too) with lakecompat's small jar of Java classes of its
own (`hive3_java/`, compiled once into the cache) first on the classpath:

- `lakecompat.hive3.ClasspathLoader`, the JVM's system class loader for HiveServer2 (in a jar
  of its own, the only one on `-cp`): Hive 3 casts the application class loader to
  `URLClassLoader`, which it is no longer since Java 9;
- `HiveAuthUtils` and the Metastore's `SecurityUtils`, Hive's socket helpers with the same
  methods, whose server sockets bind to 127.0.0.1: Hive 3.1.3's Metastore has no bind-host
  setting, and HiveServer2 ignores its own (`hive.server2.thrift.bind.host`), so both listened
  on every interface;
- `SerializationUtilities$ArrayListSubListSerializer`, Hive's Kryo serializer of
  `ArrayList.subList` views: Hive's own reads a field of Java 8's `ArrayList` by reflection,
  so on Java 17 no MapReduce job could be planned.

None of them changes what Hive reads or answers. `docs/research/hive.md` says what was tried.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from lakecompat.engines.infra.artifacts import (
    Dependency,
    MavenArtifact,
    cache_dir,
    one_at_a_time,
    resolve_classpath,
)
from lakecompat.engines.infra.hadoop_conf import resources_first
from lakecompat.engines.infra.jdk import classes_jar, compile_sources, find_jdk

#: The Java sources of lakecompat's Hive 3 classes, below their package folders.
SOURCES = Path(__file__).parent / "hive3_java"
#: The system class loader HiveServer2 3 runs with (`-Djava.system.class.loader`).
LOADER_CLASS = "lakecompat.hive3.ClasspathLoader"
#: The system property the socket helpers bind to.
BIND_HOST_PROPERTY = "lakecompat.bind.host"
#: Hadoop's logging bindings compete with Hive's log4j2; Hadoop's protobuf 2.5 and Avro 1.7
#: would shadow newer ones.
_HADOOP_EXCLUSIONS = (
    "ch.qos.reload4j:reload4j",
    "org.slf4j:slf4j-reload4j",
    "org.slf4j:slf4j-log4j12",
    "log4j:log4j",
    "com.google.protobuf:protobuf-java",
    "org.apache.avro:avro",
)
#: What hive-service 3 brings that is not served here (pac4j, pentaho), that a local
#: HiveServer2 does not use (HBase, Tez, LLAP's Tez part, Twill, Groovy, Ivy) or that Hadoop
#: 3.3.6 replaces.
_HIVE_EXCLUSIONS = (
    "org.pac4j:*",
    "org.pentaho:*",
    "org.apache.hadoop:*",
    "org.glassfish:javax.el",
    "org.apache.logging.log4j:log4j-slf4j-impl",
    "org.apache.hbase:*",
    "co.cask.tephra:*",
    "org.apache.twill:*",
    "log4j:log4j",
    "org.codehaus.groovy:groovy-all",
    "org.eclipse.jetty:jetty-runner",
    "junit:junit",
    "org.apache.hive:hive-llap-tez",
    "org.apache.hive:hive-upgrade-acid",
    "com.github.joshelser:dropwizard-metrics-hadoop-metrics2-reporter",
    "org.apache.ivy:ivy",
)


def is_hive3(version: str) -> bool:
    """Whether `version` is a Hive 3 release (3.1.3), which needs this module."""
    return version.split(".")[0] == "3"


def hive3_classpath(version: str, hadoop_version: str) -> list[Path]:
    """The Hive 3 server classpath (Metastore and HiveServer2 alike), lakecompat's Hive 3
    classes first (see the module's text)."""
    hadoop = [
        Dependency(MavenArtifact("org.apache.hadoop", name, hadoop_version), _HADOOP_EXCLUSIONS)
        for name in (
            "hadoop-common",
            "hadoop-mapreduce-client-jobclient",
            "hadoop-mapreduce-client-common",
            "hadoop-hdfs-client",
        )
    ]
    jars = resolve_classpath(
        f"hive3-server-{version}",
        [
            Dependency(MavenArtifact("org.apache.hive", "hive-service", version), _HIVE_EXCLUSIONS),
            *hadoop,
            # The Metastore loads HDFS classes even for file:// paths; the jar alone is enough.
            Dependency(MavenArtifact("org.apache.hadoop", "hadoop-hdfs", hadoop_version), ("*:*",)),
            Dependency(MavenArtifact("org.apache.logging.log4j", "log4j-slf4j-impl", "2.17.1")),
            Dependency(MavenArtifact("org.apache.derby", "derby", "10.14.2.0")),
        ],
    )
    _, patches = hive3_jars(jars)
    return [patches, resources_first(jars), *jars]


@one_at_a_time
def hive3_jars(classpath: list[Path]) -> tuple[Path, Path]:
    """The jar of the system class loader and the jar of the other Hive 3 classes, compiled
    against `classpath` once (named after the sources' digest)."""
    sources = {
        path.relative_to(SOURCES).as_posix(): path.read_text()
        for path in sorted(SOURCES.rglob("*.java"))
    }
    digest = hashlib.sha256(repr(sorted(sources.items())).encode()).hexdigest()[:12]
    folder = cache_dir() / "hive3-java17" / digest
    loader, patches = folder / "loader.jar", folder / "patches.jar"
    if loader.is_file() and patches.is_file():
        return loader, patches
    jdk = find_jdk((17, 21, 11), "compiling lakecompat's Hive 3 classes")
    folder.mkdir(parents=True, exist_ok=True)
    classes = compile_sources(
        jdk, "lakecompat's Hive 3 classes", sources, classpath, folder / "all"
    )
    # Two class folders: the loader's jar must not hold the others, which need Hive's classes
    # (the loader's own parent, which loads that jar, has none of them).
    for name, keep in (("loader", True), ("patches", False)):
        part = folder / f"{name}.{os.getpid()}"
        shutil.rmtree(part, ignore_errors=True)
        for path in classes.rglob("*.class"):
            relative = path.relative_to(classes)
            if relative.as_posix().startswith("lakecompat/hive3/ClasspathLoader") == keep:
                (part / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, part / relative)
        made = classes_jar(part)
        made.replace(folder / f"{name}.jar")
        shutil.rmtree(part, ignore_errors=True)
    shutil.rmtree(classes, ignore_errors=True)
    return loader, patches


def hive3_launch(classpath: list[Path], folder: Path) -> list[str]:
    """The JVM options that run a Hive 3 main class with `classpath` through the system class
    loader (the classpath listed in a file in `folder`), binding to 127.0.0.1; `-cp` holds
    the loader's jar only."""
    loader, _ = hive3_jars(classpath)
    listing = folder / "classpath.txt"
    folder.mkdir(parents=True, exist_ok=True)
    listing.write_text("".join(f"{path}\n" for path in classpath))
    return [
        f"-Djava.system.class.loader={LOADER_CLASS}",
        f"-Dlakecompat.classpath.file={listing}",
        f"-D{BIND_HOST_PROPERTY}=127.0.0.1",
        "-cp",
        str(loader),
    ]
