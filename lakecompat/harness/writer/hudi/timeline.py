"""A Hudi table's timeline and folders as files on disk: completed instants, the table
version, partition folders, and the procedure calls that list the live file slices.
"""

from __future__ import annotations

import re
from pathlib import Path

from lakecompat.engines.table import TableRef

#: Hudi's marker file in every partition folder (and in the table folder without partitions).
_PARTITION_MARKER = ".hoodie_partition_metadata"


#: Hudi's own folder (timeline, metadata table), which holds partition markers of its own.
_METADATA_FOLDER = ".hoodie"


#: More file slices than any scenario table has (the procedure lists 10 by default).
_MAX_SLICES = 100_000


# A completed instant: `<requested>_<completed>.<action>` (Hudi 1.x) or `<requested>.<action>`.
_COMPLETED = re.compile(r"^(\d{14,})(?:_(\d{14,}))?\.(commit|deltacommit|replacecommit)$")


def listing_statements(table: TableRef, hudi_version: str) -> list[str]:
    """The `show_fsview_latest` calls that list a table's live file slices.

    Hudi 1.x lists every partition in one call; before 1.0 the procedure needs the partition
    (`partition_path`, '' for a table without partitions), so there is one call per partition:
    the folders that hold Hudi's partition marker file.
    """
    head = f"CALL show_fsview_latest(table => '{table.name}', limit => {_MAX_SLICES}"
    if int(hudi_version.split(".")[0]) >= 1:
        return [head + ")"]
    markers = sorted(table.path.rglob(_PARTITION_MARKER))
    partitions = [
        m.parent.relative_to(table.path).as_posix()
        for m in markers
        if _METADATA_FOLDER not in m.relative_to(table.path).parts
    ]
    return [f"{head}, partition_path => '{p if p != '.' else ''}')" for p in partitions]


def completed_instants(table_path: Path) -> dict[str, str]:
    """Requested time -> completion time of every completed commit in the table's timeline.

    Hudi 0.x timelines (in `.hoodie/`) know one time per instant; it stands for both. A 1.x
    timeline (`.hoodie/timeline/`) wins where a table upgraded from 0.x still has both.
    """
    found: dict[str, str] = {}
    for folder in (table_path / ".hoodie", table_path / ".hoodie" / "timeline"):
        if folder.is_dir():
            for entry in sorted(folder.iterdir()):
                match = _COMPLETED.match(entry.name)
                if match:
                    found[match.group(1)] = match.group(2) or match.group(1)
    return found


def latest_instant(table_path: Path) -> tuple[str, str] | None:
    """(requested, completed) time of the newest completed commit in the table's timeline."""
    found = completed_instants(table_path)
    return max(found.items()) if found else None


def completed_as_now(
    table_path: Path, instants: list[tuple[str, str] | None]
) -> list[tuple[str, str] | None]:
    """`instants` with the completion times the table's timeline holds now: upgrading a table
    from Hudi 0.x to 1.x gives the commits written before it completion times of their own."""
    now = completed_instants(table_path)
    return [None if i is None else (i[0], now.get(i[0], i[1])) for i in instants]


def table_version(table_path: Path) -> str:
    """The table version in `.hoodie/hoodie.properties` (6 for Hudi 0.14-0.15, 8 for 1.0),
    or "?" when it cannot be read."""
    try:
        text = (table_path / ".hoodie" / "hoodie.properties").read_text()
    except OSError:
        return "?"
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "hoodie.table.version":
            return value.strip()
    return "?"


def partition_folders(table_path: Path, depth: int) -> tuple[str, ...]:
    """The Hive-style partition folders (`a=1/b=x`) that hold data files, sorted."""
    if depth == 0:
        return ()
    found = set()
    for data_file in table_path.rglob("*"):
        relative = data_file.relative_to(table_path).parts
        if data_file.is_file() and len(relative) == depth + 1 and not relative[0].startswith("."):
            found.add("/".join(relative[:depth]))
    return tuple(sorted(found))
