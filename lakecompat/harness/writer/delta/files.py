"""What a Delta table's live files really hold, its versions and its protocol, read from its log.

A Delta table's log (`_delta_log/<version>.json`, one file per commit) lists the actions of each
commit: data files added and removed, each added file with its deletion vector (the rows of the
file deleted since), the table's schema and properties (`metaData`) and the features readers and
writers need (`protocol`). The writer's tables are young: every commit file is still there, so
the live files are those of a replay from version 0. A data file's columns come from its own
Parquet footer; under column mapping, they carry physical names (`col-<uuid>`), shown beside
the column's name in the table.
"""

from __future__ import annotations

import datetime as dt
import json
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lakecompat.harness.writer.base import DataFile
from lakecompat.harness.writer.table_files import TableFileError, parquet_columns

LOG_FOLDER = "_delta_log"
#: A Parquet column's physical name under column mapping, in a field's metadata.
PHYSICAL_NAME = "delta.columnMapping.physicalName"
_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"


def versions(table_path: Path) -> list[int]:
    """The table's commit versions, oldest first."""
    folder = table_path / LOG_FOLDER
    return sorted(int(p.stem) for p in folder.glob("*.json") if p.stem.isdigit())


def version_instant(version: int) -> tuple[str, str]:
    """A version as the writer's instants hold it: (text that sorts as the number does, the
    number)."""
    return f"{version:020d}", str(version)


def current_version(table_path: Path) -> tuple[str, str] | None:
    """The table's newest version as an instant, or None before its first commit."""
    found = versions(table_path)
    return version_instant(found[-1]) if found else None


def commit_actions(table_path: Path, version: int) -> list[dict[str, Any]]:
    """The actions of one commit (each a one-key dict: `add`, `remove`, `metaData`, ...)."""
    path = table_path / LOG_FOLDER / f"{version:020d}.json"
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except (OSError, ValueError) as exc:
        raise TableFileError(f"{path}: cannot read this Delta commit: {exc}") from None


def commit_times(table_path: Path, version: int) -> tuple[int, int]:
    """(the commit's own timestamp, its commit file's modification time), in milliseconds
    since the epoch: Delta's Spark reader times a version by its file, delta-rs by either."""
    path = table_path / LOG_FOLDER / f"{version:020d}.json"
    stamp = next(
        (
            int(a["commitInfo"]["timestamp"])
            for a in commit_actions(table_path, version)
            if "commitInfo" in a
        ),
        0,
    )
    modified = path.stat().st_mtime_ns // 1_000_000
    return stamp or modified, modified


def moment_after(
    table_path: Path, instants: Sequence[tuple[str, str] | None], reference: int
) -> str | None:
    """A moment at which the table was at its `reference` state (UTC, milliseconds): halfway
    between the reference version's commit and the next version's, by both of their times;
    the reference's own time when no version came after it; None without a reference."""
    if instants[reference] is None:
        return None
    version = int(instants[reference][1])
    low = max(commit_times(table_path, version))
    if (version + 1) in versions(table_path):
        moment = (low + min(commit_times(table_path, version + 1))) // 2
    else:
        moment = low
    shown = dt.datetime.fromtimestamp(moment / 1000, dt.UTC)
    return shown.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment % 1000:03d}"


def committed_states(instants: Sequence[tuple[str, str] | None], reference: int) -> tuple[int, ...]:
    """The states after `reference` whose step committed a version, in order: what a change
    data feed read from the version after the reference returns the changes of (a schema
    change commits a version with no changes)."""
    return tuple(
        index
        for index in range(reference + 1, len(instants))
        if instants[index] is not None and instants[index] != instants[index - 1]
    )


@dataclass
class TableLog:
    """The table's state after replaying its log: the live data files (by path and deletion
    vector), the version each data file was first added in, its schema, properties and
    protocol."""

    live: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    added_in: dict[str, int] = field(default_factory=dict)
    #: The version whose commit added each data file last (a delete adds it again with its
    #: new deletion vector).
    added_last: dict[str, int] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    protocol: dict[str, Any] = field(default_factory=dict)


def replay(table_path: Path) -> TableLog:
    """The table's log replayed from version 0 (the writer's tables keep every commit file)."""
    log = TableLog()
    for version in versions(table_path):
        actions = commit_actions(table_path, version)
        for action in actions:
            if "metaData" in action:
                log.metadata = action["metaData"]
            elif "protocol" in action:
                log.protocol = action["protocol"]
            elif "remove" in action:
                removed = action["remove"]
                log.live.pop((removed["path"], _vector_id(removed)), None)
        for action in actions:
            if "add" in action:
                added = action["add"]
                log.live[(added["path"], _vector_id(added))] = added
                log.added_in.setdefault(added["path"], version)
                log.added_last[added["path"]] = version
    return log


def _vector_id(action: dict[str, Any]) -> str:
    """The unique id of a file action's deletion vector ("" without one)."""
    vector = action.get("deletionVector")
    if not vector:
        return ""
    offset = vector.get("offset")
    text = f"{vector['storageType']}{vector['pathOrInlineDv']}"
    return f"{text}@{offset}" if offset is not None else text


def vector_file(vector: dict[str, Any]) -> str:
    """The file a deletion vector is stored in, relative to the table (`storageType` `u`: a
    random prefix and a Z85-coded UUID), its absolute path (`p`), or `inline`."""
    kind, where = vector["storageType"], vector["pathOrInlineDv"]
    if kind == "p":
        return where
    if kind != "u":
        return "inline"
    prefix, coded = where[:-20], where[-20:]
    raw = bytearray()
    for start in range(0, 20, 5):
        number = 0
        for char in coded[start : start + 5]:
            number = number * 85 + _Z85.index(char)
        raw += number.to_bytes(4, "big")
    name = f"deletion_vector_{_uuid(bytes(raw))}.bin"
    return f"{prefix}/{name}" if prefix else name


def _uuid(raw: bytes) -> str:
    text = raw.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def physical_names(metadata: dict[str, Any]) -> dict[str, str]:
    """The table's top-level columns by their physical name in data files (column mapping),
    from the schema in `metaData`; empty without column mapping."""
    try:
        schema = json.loads(metadata.get("schemaString") or "{}")
    except ValueError:
        return {}
    found = {}
    for column in schema.get("fields", []):
        physical = (column.get("metadata") or {}).get(PHYSICAL_NAME)
        if physical:
            found[physical] = column["name"]
    return found


def live_files(table_path: Path, log: TableLog) -> list[DataFile]:
    """Every live data file of the table, and each deletion vector as a file of deletes
    applying to its data file; under column mapping, a column of a file is shown as its
    table's name, its physical name in brackets (a column the table dropped: its physical
    name alone, `dropped`)."""
    names = physical_names(log.metadata)
    found: list[DataFile] = []
    for (raw_path, _), added in sorted(log.live.items()):
        shown = urllib.parse.unquote(raw_path)
        first = version_instant(log.added_in.get(raw_path, 0))[0]
        columns = tuple(_named(c, names) for c in parquet_columns(table_path / shown))
        found.append(DataFile(shown, "data", shown, first, columns))
        vector = added.get("deletionVector")
        if vector:
            version = version_instant(log.added_last[raw_path])[0]
            found.append(DataFile(vector_file(vector), "delete", shown, version, ()))
    return found


def _named(column: str, names: dict[str, str]) -> str:
    """`name type` of a file's column as the evidence shows it under column mapping."""
    physical, _, kind = column.partition(" ")
    if not names:
        return column
    if physical in names:
        return f"{names[physical]} [{physical}] {kind}"
    return f"[{physical}, dropped] {kind}"


def deletes_note(log: TableLog) -> str:
    """How many of the table's data files have a deletion vector and how many rows they
    delete, or "" with none."""
    vectors = [a["deletionVector"] for a in log.live.values() if a.get("deletionVector")]
    if not vectors:
        return ""
    rows = sum(int(v.get("cardinality", 0)) for v in vectors)
    return f"deletes: {len(vectors)} deletion vector(s), {rows} row(s) deleted"


def protocol_note(log: TableLog) -> str:
    """The table's protocol and features, and its column mapping mode: `Delta protocol:
    reader version 3 (columnMapping, deletionVectors), writer version 7 (...)`."""
    protocol, configuration = log.protocol, log.metadata.get("configuration") or {}
    reader = protocol.get("minReaderVersion", "?")
    writer = protocol.get("minWriterVersion", "?")
    reading = protocol.get("readerFeatures")
    writing = protocol.get("writerFeatures")
    text = f"Delta protocol: reader version {reader}"
    text += f" ({', '.join(reading)})" if reading else ""
    text += f", writer version {writer}"
    text += f" ({', '.join(writing)})" if writing else ""
    mode = configuration.get("delta.columnMapping.mode", "none")
    chosen = [f"column mapping {mode}"]
    for key, said in (
        ("delta.enableDeletionVectors", "deletion vectors"),
        ("delta.enableChangeDataFeed", "change data feed"),
        ("delta.enableTypeWidening", "type widening"),
    ):
        if configuration.get(key) == "true":
            chosen.append(said)
    return f"{text}; {', '.join(chosen)}"
