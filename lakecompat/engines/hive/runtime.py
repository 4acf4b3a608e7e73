"""HiveServer2 as a process: its classpath from Maven (Hive, Hadoop and the Hudi bundle), the
JVM options it needs on Java 17, and a HiveServer2 someone else runs (`--hiveserver2`).
"""

from __future__ import annotations

import contextlib
import socket
from pathlib import Path
from typing import Any

from lakecompat.engines.attached import answers
from lakecompat.engines.infra.artifacts import (
    Dependency,
    MavenArtifact,
    ProvisioningError,
    excerpt_jar,
    fetch,
    resolve_classpath,
)
from lakecompat.engines.infra.hudi_jars import hudi_bundle
from lakecompat.engines.infra.local_fs import local_fs_jar
from lakecompat.engines.metastore.hive3 import hive3_classpath, is_hive3
from lakecompat.engines.metastore.service import HADOOP_VERSION, hadoop

# HiveServer2 reflects into these JDK packages; Java 17 closes them by default.
OPENS = ("java.lang", "java.net", "java.nio", "java.util", "java.util.concurrent.atomic")
# Hive 3's Kryo also serializes plans holding these (a DATE literal: java.time).
HIVE3_OPENS = (
    "java.lang.reflect",
    "java.math",
    "java.text",
    "java.time",
    "java.util.concurrent",
    "java.util.regex",
    "sun.nio.ch",
)


# Hadoop's protobuf 2.5 and Avro 1.7 would shadow the newer ones inside hive-exec.
HADOOP_OLD = ("com.google.protobuf:protobuf-java", "org.apache.avro:avro")
#: Ahead of hive-exec 3 on HiveServer2's classpath, for the Hudi bundle (see `hive3_server`).
HIVE3_READER_JARS = (
    MavenArtifact("org.apache.avro", "avro", "1.11.3"),
    MavenArtifact("org.apache.parquet", "parquet-hadoop-bundle", "1.13.1"),
)
#: Kryo unshaded, which the Hudi bundle expects, for Hive 3 (Hive 4's classpath resolves it).
KRYO = (
    MavenArtifact("com.esotericsoftware", "kryo-shaded", "4.0.2"),
    MavenArtifact("com.esotericsoftware", "minlog", "1.3.0"),
)


class AttachedHive:
    """A HiveServer2 someone else runs: `kill()` cancels what the run's sessions are doing."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        #: The session whose statement runs now, which `kill()` ends.
        self.current: Any = None

    @property
    def running(self) -> bool:
        return answers(self.host, self.port)

    def kill(self) -> None:
        """End the statement running now (a timeout) by shutting its session's socket: the
        waiting call returns at once, and HiveServer2 closes the session. (A thrift client
        cannot send a cancel while it waits for the statement's answer.) The server stays."""
        connection = self.current
        handle = getattr(
            getattr(getattr(connection, "_transport", None), "_trans", None), "handle", None
        )
        if handle is not None:
            with contextlib.suppress(OSError):
                handle.shutdown(socket.SHUT_RDWR)

    def stop(self) -> None:
        """Nothing: the server is not lakecompat's."""


def hiveserver2_classpath(version: str, hudi: str) -> list[Path]:
    """HiveServer2 with local MapReduce, plus the Hudi input formats of Hudi `hudi` (the
    writer's release, or an older one for version skew)."""
    server = hive3_server(version) if is_hive3(version) else hive4_server(version)
    # Hive names the jar holding `ExecDriver` as each MapReduce job's jar, and local MapReduce
    # copies that jar into a staging folder for every job: 83 MB of hive-exec per query of the
    # `mapreduce` variant. A small jar holding only `ExecDriver`, ahead of hive-exec on the
    # classpath, is found first, so the copy is a few kilobytes. Same classes, same answers.
    exec_jar = next((jar for jar in server if jar.name == f"hive-exec-{version}.jar"), None)
    if exec_jar is None:
        raise ProvisioningError(f"the HiveServer2 {version} classpath has no hive-exec jar")
    server = [
        excerpt_jar(exec_jar, "org/apache/hadoop/hive/ql/exec/mr/ExecDriver"),
        local_fs_jar(server),
        *server,
    ]
    return [*server, fetch(hudi_bundle(hudi))]


def hive3_server(version: str) -> list[Path]:
    """HiveServer2 3's jars (`engines.metastore.hive3`), with what the Hudi bundle needs ahead
    of hive-exec, which holds Avro 1.8 and Parquet 1.10 unrelocated: the bundle's Hudi reads
    schemas with Avro 1.11 and Parquet 1.11 or later (`hudi-hadoop-mr-bundle`, the bundle Hudi
    documents for Hive, is not served here; Spark's bundle is what HiveServer2 reads with)."""
    patches, *jars = hive3_classpath(version, HADOOP_VERSION)
    ahead = [fetch(artifact) for artifact in HIVE3_READER_JARS]
    # The Hudi bundle expects Kryo unshaded; Hive only has it relocated.
    kryo = [fetch(artifact) for artifact in KRYO]
    return [patches, *ahead, *jars, *kryo]


def hive4_server(version: str) -> list[Path]:
    """HiveServer2 4's jars."""
    return resolve_classpath(
        f"hiveserver2-{version}",
        [
            # pac4j (SAML login) needs artifacts that are not on Maven Central.
            Dependency(
                MavenArtifact("org.apache.hive", "hive-service", version),
                ("org.pac4j:*", "org.apache.hadoop:hadoop-client-api"),
            ),
            hadoop("hadoop-common", *HADOOP_OLD),
            hadoop("hadoop-mapreduce-client-jobclient", *HADOOP_OLD),
            hadoop("hadoop-mapreduce-client-common", *HADOOP_OLD),
            hadoop("hadoop-hdfs-client", *HADOOP_OLD),
            Dependency(MavenArtifact("org.apache.hadoop", "hadoop-hdfs", HADOOP_VERSION), ("*:*",)),
            # The Hudi bundle expects Kryo unshaded; Hive only has it relocated.
            Dependency(MavenArtifact("com.esotericsoftware", "kryo-shaded", "4.0.2")),
        ],
    )
