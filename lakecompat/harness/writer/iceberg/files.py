"""What an Iceberg table's live files really hold, and its snapshots, read from its metadata.

The live files are the current snapshot's manifest entries that are not deleted (Iceberg's
`entries` metadata table, read by the writer's Spark): each data file with its data sequence
number, and each delete file (position deletes, deletion vectors) with the data file it
applies to where the entry names it. A data file's columns come from its own Parquet footer.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from lakecompat.harness.writer.base import DataFile
from lakecompat.harness.writer.table_files import (
    TableFileError,
    local_path,
    parquet_columns,
    relative_path,
)

#: Manifest entry status of a file the snapshot removed.
_DELETED = 2
#: `data_file.content`: 0 data, 1 position deletes, 2 equality deletes.
_DATA = 0


def current_metadata(table_path: Path) -> dict[str, Any]:
    """The table's current metadata (`metadata/v<N>.metadata.json`, N from
    `version-hint.text`, as Iceberg's Hadoop catalog keeps it)."""
    folder = table_path / "metadata"
    try:
        version = (folder / "version-hint.text").read_text().strip()
        return json.loads((folder / f"v{version}.metadata.json").read_text())
    except (OSError, ValueError) as exc:
        raise TableFileError(f"{folder}: no current Iceberg metadata: {exc}") from None


def current_snapshot(table_path: Path) -> tuple[str, str] | None:
    """(data sequence number, zero-padded; snapshot id) of the table's current snapshot, or
    None before its first: the writer's instant after a step."""
    metadata = current_metadata(table_path)
    current = metadata.get("current-snapshot-id")
    for snapshot in metadata.get("snapshots", []):
        if snapshot["snapshot-id"] == current:
            return sequence(snapshot.get("sequence-number", 0)), str(current)
    return None


def sequence(number: int) -> str:
    """A data sequence number as text that sorts as the number does."""
    return f"{number:012d}"


def live_files(entries: list[dict[str, Any]], table_path: Path) -> list[DataFile]:
    """Every live data and delete file of the rows of the `entries` metadata table
    (`status`, `sequence_number` and the `data_file` struct)."""
    found: list[DataFile] = []
    for entry in entries:
        if entry["status"] == _DELETED:
            continue
        data_file = entry["data_file"]
        path = local_path(data_file["file_path"])
        shown = relative_path(path, table_path)
        number = sequence(entry.get("sequence_number") or 0)
        if data_file["content"] == _DATA:
            found.append(DataFile(shown, "data", shown, number, parquet_columns(path)))
            continue
        target = data_file.get("referenced_data_file")
        group = relative_path(local_path(target), table_path) if target else shown
        found.append(DataFile(shown, "delete", group, number, ()))
    return found


def delete_files_note(paths: list[str]) -> str:
    """What the live delete files of a table (one path per delete entry) are: deletion
    vectors in Puffin files (format version 3) or position-delete files (version 2)."""
    puffin = sum(1 for p in paths if p.endswith(".puffin"))
    kinds = [
        f"{puffin} deletion vector(s) in Puffin files" if puffin else "",
        f"{len(paths) - puffin} position-delete file(s)" if len(paths) > puffin else "",
    ]
    return "deletes: " + ", ".join(k for k in kinds if k)


def snapshot_log(table_path: Path) -> dict[str, tuple[int, str]]:
    """Each snapshot of the table's current metadata: its id (as text) → (commit time in
    milliseconds since the epoch, operation: `append`, `overwrite`, `delete`, ...)."""
    found = {}
    for snapshot in current_metadata(table_path).get("snapshots", []):
        operation = snapshot.get("summary", {}).get("operation", "")
        found[str(snapshot["snapshot-id"])] = (int(snapshot["timestamp-ms"]), operation)
    return found


def appended_states(
    instants: list[tuple[str, str] | None], reference: int, log: dict[str, tuple[int, str]]
) -> tuple[int, ...]:
    """The states after `reference` (indexes of `instants`, the snapshot after each step)
    whose step committed an `append` snapshot: what an incremental (append) scan reads."""
    found = []
    for index in range(reference + 1, len(instants)):
        current, before = instants[index], instants[index - 1]
        if current is None or current == before:
            continue  # a schema change commits no snapshot
        if log.get(current[1], (0, ""))[1] == "append":
            found.append(index)
    return tuple(found)


def committed_states(instants: list[tuple[str, str] | None], reference: int) -> tuple[int, ...]:
    """The states after `reference` whose step committed a snapshot (a schema change commits
    none), in order: the snapshots a changelog read from the reference returns."""
    return tuple(
        index
        for index in range(reference + 1, len(instants))
        if instants[index] is not None and instants[index] != instants[index - 1]
    )


def moment_after(
    instants: list[tuple[str, str] | None], reference: int, log: dict[str, tuple[int, str]]
) -> str | None:
    """A moment at which the table was in its `reference` state (UTC, milliseconds): halfway
    between the reference snapshot's commit and the next snapshot's, or the reference's own
    commit time when no snapshot came after it; None without a reference snapshot."""
    if instants[reference] is None or instants[reference][1] not in log:
        return None
    committed = log[instants[reference][1]][0]
    later = [
        log[i[1]][0]
        for i in instants[reference + 1 :]
        if i is not None and i != instants[reference]
    ]
    moment = (committed + later[0]) // 2 if later else committed
    shown = dt.datetime.fromtimestamp(moment / 1000, dt.UTC)
    return shown.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment % 1000:03d}"
