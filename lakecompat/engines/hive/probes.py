"""The causes a failed Hive read meets in each file group of a Hudi table, kept between runs.

A failed read of a Hudi table is told by the causes of all its file groups (each read alone:
`engines.hive.failures`), whichever of them HiveServer2 happened to read first. Reading each
file group alone costs a query per file group (a MapReduce job in the `mapreduce` variant), and
most of a matrix's failed Hive reads are of cached tables read the same way in every run. So
the causes found are kept, under a key made of everything they follow from: the table's files
(their paths and sizes: a table written afresh has new file names), the query, the session's
settings, the Hive and Hudi releases, and this package's code. Only complete answers are kept:
where a read of one file group failed otherwise (a timeout, a lost server), nothing is.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path

#: A cause (the innermost exception) and whether it was met on a row (`failures.in_rows`).
Cause = tuple[str, bool]

_VERSION = "1"


@lru_cache(maxsize=1)
def _code_version() -> str:
    """A hash of this package's source: how Hive is configured, queried and its causes told."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _files_of(table: Path) -> list[tuple[str, int]]:
    """Every file below `table` (the timeline included) as (relative path, size), sorted."""
    found = []
    for folder, _, names in os.walk(table):
        for name in names:
            path = os.path.join(folder, name)
            found.append((os.path.relpath(path, table), os.path.getsize(path)))
    return sorted(found)


class FileGroupCauses:
    """Causes found by reading a table's file groups one by one, kept in `folder` (one small
    JSON file per read; None keeps nothing)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    def key(self, table: Path, sql: str, settings: dict[str, str], hive: str, hudi: str) -> str:
        """What the causes of reading `table` with `sql` follow from, hashed."""
        said = json.dumps(
            [_VERSION, _code_version(), hive, hudi, sorted(settings.items()), sql, _files_of(table)]
        )
        return hashlib.sha256(said.encode()).hexdigest()[:32]

    def get(self, key: str) -> set[Cause] | None:
        """The causes kept under `key`; None when none are (or the file is damaged)."""
        if self.folder is None:
            return None
        try:
            kept = json.loads((self.folder / f"{key}.json").read_text())
            return {(str(cause), bool(rows)) for cause, rows in kept["causes"]}
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, causes: set[Cause]) -> None:
        """Keep `causes` under `key`: written beside the file, then renamed, so a file that
        exists is whole (two HiveServer2 lanes may find the same causes at once)."""
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        target = self.folder / f"{key}.json"
        partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
        partial.write_text(json.dumps({"causes": sorted(causes)}))
        partial.replace(target)
