"""Hadoop-style configuration files (`*-site.xml`) and a console-only log4j2 setup."""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import escape

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
