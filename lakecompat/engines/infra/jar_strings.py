"""The string literals of a jar's classes: where lakecompat finds the setting keys an engine
defines (Spark's SQL configurations, Hudi's `hoodie.*` options, Trino's session properties),
read from the jars the engine runs with rather than written down by hand.

A key defined in Java or Scala is a string literal of the class that defines it
(`buildConf("spark.sql.ansi.enabled")`, `ConfigProperty.key("hoodie.schema.on.read.enable")`,
`booleanProperty("use_parquet_column_names", ...)`), and every string literal of a class is a
`CONSTANT_String` entry of its constant pool. So a class's literals hold its keys, beside
messages and prefixes that no key is spelled like. What a jar holds is read once and kept in
the cache (`jar-strings/`), beside the size and time of the jar it was read from.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import zipfile
from pathlib import Path

from lakecompat.engines.infra.artifacts import cache_dir

FOLDER = "jar-strings"
#: Bytes of the constant pool entries that hold no text, by tag (JVM specification, 4.4).
_SIZES = {3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2}
_SIZES |= {17: 4, 18: 4, 19: 2, 20: 2}
_UTF8, _STRING = 1, 8


def class_literals(data: bytes) -> set[str]:
    """The string literals of one class file (its `CONSTANT_String` entries)."""
    count = struct.unpack_from(">H", data, 8)[0]
    texts: dict[int, bytes] = {}
    literals: list[int] = []
    index, position = 1, 10
    while index < count:
        tag = data[position]
        if tag == _UTF8:
            length = struct.unpack_from(">H", data, position + 1)[0]
            texts[index] = data[position + 3 : position + 3 + length]
            position += 3 + length
        else:
            if tag == _STRING:
                literals.append(struct.unpack_from(">H", data, position + 1)[0])
            position += 1 + _SIZES[tag]
        # A long or a double takes two entries.
        index += 2 if tag in (5, 6) else 1
    # Modified UTF-8 differs from UTF-8 only in characters no key uses.
    return {texts[i].decode("utf-8", "replace") for i in literals if i in texts}


def jar_literals(jar: Path, prefix: str = "", classes: tuple[str, ...] = ()) -> frozenset[str]:
    """The string literals starting with `prefix` of the classes `classes` of `jar` (names
    like `io/trino/SystemSessionProperties`), or of all its classes; kept in the cache."""
    stat = jar.stat()
    stamp = f"{stat.st_size}-{stat.st_mtime_ns}"
    question = hashlib.sha256(f"{prefix}\n{' '.join(classes)}".encode()).hexdigest()[:12]
    kept = cache_dir() / FOLDER / f"{jar.name}-{question}.json"
    try:
        record = json.loads(kept.read_text())
        if record["jar"] == stamp:
            return frozenset(record["literals"])
    except (OSError, ValueError, KeyError):
        pass
    found = _read(jar, prefix, classes)
    kept.parent.mkdir(parents=True, exist_ok=True)
    partial = kept.with_name(f"{kept.name}.{os.getpid()}")
    partial.write_text(json.dumps({"jar": stamp, "literals": sorted(found)}))
    partial.replace(kept)  # whole or not at all, for a process reading it at the same time
    return frozenset(found)


def _read(jar: Path, prefix: str, classes: tuple[str, ...]) -> set[str]:
    found: set[str] = set()
    wanted = {f"{name}.class" for name in classes}
    marker = prefix.encode()
    with zipfile.ZipFile(jar) as archive:
        for entry in archive.infolist():
            if not entry.filename.endswith(".class"):
                continue
            if wanted and entry.filename not in wanted:
                continue
            data = archive.read(entry)
            if marker in data:
                found |= {s for s in class_literals(data) if s.startswith(prefix)}
    return found
