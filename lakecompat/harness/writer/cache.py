"""The table cache: a table is written once, and every later run that needs the same table
reads a copy of it.

A cached table is keyed by everything that determines it: the table format, the scenario
(its id, which names the table, and its content), the table type, the writer's releases and
settings, and the version of lakecompat's writer code (a hash of the source files the writing
runs). Any change to one of them is another key, so the table is written afresh. An entry holds
the table's folder as the writer left it and `result.json`: what the writer recorded about it
(statements, commit times, live files, the refused step), with the table's folder written as
`@TABLE_DIR@` so that the entry does not depend on where it was written.

A format whose tables cannot move (Iceberg: its metadata names every file by absolute path)
has its tables written straight into their entry, and runs read them there; such an entry is
written under a lock, its `result.json` last, so a half-written entry is never read.

The cache lives in `<cache>/tables/<format>/` (`$LAKECOMPAT_CACHE`, else
`~/.cache/lakecompat`); deleting the folder clears it. A writer crash or timeout is never
cached; a refused schema change is (it is a result of the writer's releases). Entries are
written to a temporary folder and renamed into place, so runs that share the cache (shards
on one machine) never see half an entry.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from lakecompat.engines.infra.artifacts import cache_dir
from lakecompat.engines.table import TableRef
from lakecompat.harness.locks import locked
from lakecompat.harness.scenario.model import Scenario
from lakecompat.harness.scenario.schema import Schema
from lakecompat.harness.writer.base import T, TableWriter, WriteResult

#: Bump when the layout of an entry changes (old entries are then ignored).
ENTRY_VERSION = 1
_TABLE_DIR = "@TABLE_DIR@"
#: The package folder (`lakecompat/`) that `WRITER_CODE` names paths below.
_PROJECT = Path(__file__).resolve().parents[2]
#: The source that decides what a written table holds: the writers, the scenario model and the
#: oracle (statements and expected states), Spark's session and the shared infrastructure
#: (JDK, jars, Hadoop's file system), the table reference and the error texts a result keeps.
WRITER_CODE = (
    "harness/writer",
    "harness/scenario",
    "engines/spark",
    "engines/infra",
    "engines/table.py",
    "engines/errors.py",
)
#: Source in those folders that does not take part in writing: this module (a change to what
#: an entry holds bumps `ENTRY_VERSION` instead), the writer scripts of `lakecompat repro`, the
#: query shapes (the bloom filter columns they give the writer are in the key as its
#: `table_settings`), the comparison of an answer with the oracle's, Spark as a reader (and its
#: reading parts), and the reading of YAML files (what it reads of a scenario is in the key as
#: `scenario_content`), the
#: choice of the readers' services' ports, the Hadoop configuration files of the Hive
#: services (the Metastore and HiveServer2 only), and the reading of the keys a jar defines
#: (for checking `--set` keys), and the starting and stopping of processes (the supervisor
#: and the reaper that ends a killed run's services), and the containers the readers' services
#: run in with `--containers` (a folder: every file below it).
NOT_WRITER_CODE = (
    "harness/writer/cache.py",
    "engines/infra/supervisor.py",
    "engines/infra/reaper.py",
    "engines/infra/containers/",
    "engines/infra/ports.py",
    "engines/infra/jar_strings.py",
    "engines/spark/settings.py",
    "engines/infra/hadoop_conf.py",
    "harness/scenario/input_files.py",
    "harness/writer/script_text.py",
    "harness/writer/hudi/script.py",
    "harness/writer/iceberg/script.py",
    "harness/writer/delta/script.py",
    "harness/scenario/shapes.py",
    "harness/scenario/type_shapes.py",
    "harness/scenario/compare.py",
    "harness/scenario/changelog.py",
    "engines/spark/reader.py",
    "engines/spark/hudi.py",
    "engines/spark/iceberg.py",
    "engines/spark/delta.py",
)


def default_location() -> Path:
    """Where the table cache lives: `tables/` in lakecompat's cache folder."""
    return cache_dir() / "tables"


@lru_cache(maxsize=8)
def writer_code_version(project: Path = _PROJECT, table_format: str = "hudi") -> str:
    """A hash of the source files of `WRITER_CODE` below `project` that write `table_format`'s
    tables: any edit to their code writes that format's tables afresh (comments, docstrings and
    layout aside: `code_of`). Another format's writer (`harness/writer/<other>/`) is left out,
    so a change to one format keeps the other's cached tables."""
    digest = hashlib.sha256()
    others = {
        f"harness/writer/{child.name}/"
        for child in (project / "harness/writer").iterdir()
        if child.is_dir() and child.name != table_format and (child / "__init__.py").exists()
    }
    for part in WRITER_CODE:
        root = project / part
        files = sorted(root.rglob("*.py")) if root.is_dir() else [root]
        for path in files:
            relative = path.relative_to(project).as_posix()
            skipped = (*others, *(o for o in NOT_WRITER_CODE if o.endswith("/")))
            if relative in NOT_WRITER_CODE or any(relative.startswith(o) for o in skipped):
                continue
            digest.update(str(path.relative_to(project)).encode())
            stat = path.stat()
            digest.update(_code_digest(path, stat.st_mtime_ns, stat.st_size))
    return digest.hexdigest()[:16]


@lru_cache(maxsize=512)
def _code_digest(path: Path, mtime_ns: int, size: int) -> bytes:
    """`code_of(path)` hashed, once per process for each version of the file (both formats'
    versions share most files)."""
    return hashlib.sha256(code_of(path)).digest()


def code_of(path: Path) -> bytes:
    """What a Python source file does, as bytes to hash: its syntax tree without comments,
    docstrings or layout (line numbers, spacing, line breaks), so that an edit to those alone
    keeps the cached tables. Another Python release may give another tree: its tables are
    written afresh once."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            # A string standing alone as a statement does nothing (a docstring, `__doc__`
            # aside, which no writer reads).
            kept = [s for s in body if not _is_bare_string(s)]
            node.body = kept or [ast.Pass()]
    return ast.dump(tree).encode()


def _is_bare_string(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def key_parts(writer: TableWriter, scenario: Scenario, table_type: str) -> dict[str, Any]:
    """Everything that determines a written table, as recorded in the entry."""
    spec = scenario.spec.model_dump_json(by_alias=True)
    return {
        "format": writer.format,
        "scenario": scenario.id,
        "scenario_content": hashlib.sha256(spec.encode()).hexdigest()[:16],
        "table_type": table_type,
        "releases": writer.versions,
        "settings": writer.settings,
        "table_settings": writer.table_settings(scenario),
        "writer_code": writer_code_version(table_format=writer.format),
        "entry_version": ENTRY_VERSION,
    }


def cache_key(parts: dict[str, Any]) -> str:
    """The entry's name: a hash of its key parts."""
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


class CachedWriter(TableWriter):
    """A writer that reads tables from the cache where it can and writes (and keeps) the rest.

    Every other call goes to the wrapped writer.
    """

    def __init__(self, writer: TableWriter, location: Path) -> None:
        super().__init__(writer.tables_dir, writer.step_timeout)
        self.inner = writer
        self.format = writer.format  # type: ignore[misc] - the wrapped writer's format
        self.location = location

    @property
    def versions(self) -> dict[str, str]:
        return self.inner.versions

    @property
    def settings(self) -> dict[str, Any]:
        return self.inner.settings

    def table_settings(self, scenario: Scenario) -> dict[str, Any]:
        return self.inner.table_settings(scenario)

    def entry(self, scenario: Scenario, table_type: str) -> Path:
        """The folder of the entry for this scenario's table."""
        return self._entry(key_parts(self.inner, scenario, table_type))

    def _entry(self, parts: dict[str, Any]) -> Path:
        folder = f"{parts['scenario'].replace('/', '__')}__{parts['table_type']}"
        return self.location / self.format / folder / cache_key(parts)

    def write(self, scenario: Scenario, table_type: str) -> WriteResult:
        """The cached table (copied into this run's tables folder), else a fresh write that is
        then kept."""
        parts = key_parts(self.inner, scenario, table_type)
        entry = self._entry(parts)
        if not self.inner.relocatable:
            return self._in_place(entry, parts, scenario, table_type)
        cached = self._load(entry)
        if cached is not None:
            return cached
        written = self.inner.write(scenario, table_type)
        # A crash, a timeout or files that could not be listed say nothing about the table.
        if not written.crashed and not (written.files or {}).get("error"):
            self._store(entry, written, parts)
        return written

    def _in_place(
        self, entry: Path, parts: dict[str, Any], scenario: Scenario, table_type: str
    ) -> WriteResult:
        """The entry's table read where it is, else written into the entry and kept there
        (under a lock: shards that need the same table write it once)."""
        cached = self._load_in_place(entry)
        if cached is not None:
            return cached
        entry.parent.mkdir(parents=True, exist_ok=True)
        with locked(entry.parent / f".{entry.name}.lock"):
            cached = self._load_in_place(entry)  # another run wrote it meanwhile
            if cached is not None:
                return cached
            shutil.rmtree(entry, ignore_errors=True)  # a damaged or half-written entry
            written = self.inner.write_into(entry / "tables", scenario, table_type)
            if written.crashed or (written.files or {}).get("error"):
                shutil.rmtree(entry, ignore_errors=True)
                return written
            document = {
                "key": parts,
                "written_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "result": _result_to(written, written.table.path),
            }
            with contextlib.suppress(OSError):  # not kept: the table is written again next time
                incoming = entry / ".result.json"
                incoming.write_text(json.dumps(document, indent=1))
                incoming.rename(entry / "result.json")
            return written

    def _load_in_place(self, entry: Path) -> WriteResult | None:
        """The result of an entry whose table stays in it; None when there is none."""
        try:
            data = json.loads((entry / "result.json").read_text())
            name = data["result"]["table"]["name"]
            result = _result_from(data["result"], entry / "tables" / name)
        except (OSError, KeyError, TypeError, ValueError):
            return None
        with contextlib.suppress(OSError):
            os.utime(entry / "result.json")  # used now: what `prune` goes by
        return replace(result, cached=True, step_seconds=[])

    def _load(self, entry: Path) -> WriteResult | None:
        """The entry's result with its table copied into place; None when there is no entry
        (or it cannot be read: then it is written afresh)."""
        result_file = entry / "result.json"
        try:
            data = json.loads(result_file.read_text())
        except (OSError, ValueError):
            return None
        try:
            name = data["result"]["table"]["name"]
            target = self.tables_dir / name
            if target.exists():
                shutil.rmtree(target)
            if (entry / "table").is_dir():
                shutil.copytree(entry / "table", target, symlinks=True)
            result = _result_from(data["result"], target)
        except (OSError, KeyError, TypeError, ValueError):
            return None  # a damaged entry: write the table again (and replace the entry)
        with contextlib.suppress(OSError):
            os.utime(result_file)  # used now: what `prune` goes by
        return replace(result, cached=True, step_seconds=[])

    def _store(self, entry: Path, written: WriteResult, parts: dict[str, Any]) -> None:
        """Keep the written table and its result; a failure to keep it only costs a rewrite."""
        if entry.exists():
            shutil.rmtree(entry, ignore_errors=True)  # a damaged entry, written again
        entry.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".incoming-", dir=entry.parent))
        try:
            source = written.table.path
            if source.is_dir():
                shutil.copytree(source, staging / "table", symlinks=True)
            document = {
                "key": parts,
                "written_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "result": _result_to(written, source),
            }
            (staging / "result.json").write_text(json.dumps(document, indent=1))
            staging.rename(entry)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)  # another run stored it first, or no room

    def write_parquet(
        self, name: str, schema: Schema, rows: list[dict[str, Any]], key: str
    ) -> TableRef:
        """The plain Parquet table of the control check, copied from the cache (a run whose
        engines read only cached tables then starts no writer at all), else written and kept.
        """
        content = json.dumps([repr(schema), rows, key], sort_keys=True, default=str)
        parts = {
            "format": self.format,
            "scenario": f"parquet/{name}",
            "scenario_content": hashlib.sha256(content.encode()).hexdigest()[:16],
            "table_type": "cow",
            "releases": self.inner.versions,
            "writer_code": writer_code_version(table_format=self.format),
            "entry_version": ENTRY_VERSION,
        }
        entry = self._entry(parts)
        cached = self._load(entry)
        if cached is not None:
            return cached.table
        table = self.inner.write_parquet(name, schema, rows, key)
        if table.path != self.tables_dir / name:  # written where a copy would not go
            return table
        self._store(entry, WriteResult(table, sql=[], step_seconds=[], instants=[]), parts)
        return table

    def script(self, scenario: Scenario, table_type: str) -> str:
        return self.inner.script(scenario, table_type)

    def in_spark(self, fn: Callable[..., T], *args: Any) -> T:
        return self.inner.in_spark(fn, *args)

    def not_applicable(self, scenario: Scenario) -> str | None:
        return self.inner.not_applicable(scenario)

    def holds(self, scenario: Scenario, table_type: str) -> bool:
        return (self.entry(scenario, table_type) / "result.json").is_file()

    def prepare(self, scenarios: list[Scenario]) -> None:
        """Warm up only what the tables that are not cached need."""
        missing = [s for s in scenarios if not all(self.holds(s, t) for t in s.spec.table_types)]
        self.inner.prepare(missing)

    def close(self) -> None:
        self.inner.close()


def _result_to(written: WriteResult, table_dir: Path) -> dict[str, Any]:
    """`written` as JSON, with the table's folder written as `@TABLE_DIR@`."""
    data = asdict(written)
    data["table"]["path"] = _TABLE_DIR
    data.pop("cached", None)
    data.pop("crashed", None)
    return json.loads(json.dumps(data).replace(str(table_dir), _TABLE_DIR))


def _result_from(data: dict[str, Any], table_dir: Path) -> WriteResult:
    """A result stored by `_result_to`, its table in `table_dir`."""
    data = json.loads(json.dumps(data).replace(_TABLE_DIR, str(table_dir)))
    table = data.pop("table")
    table["path"] = Path(table["path"])
    table["columns"] = tuple(tuple(column) for column in table.get("columns", ()))
    if table.get("reference_instant") is not None:
        table["reference_instant"] = tuple(table["reference_instant"])
    for states in ("appended", "committed"):
        if table.get(states) is not None:
            table[states] = tuple(table[states])
    table["partition_by"] = tuple(table.get("partition_by", ()))
    table["partitions"] = tuple(table.get("partitions", ()))
    instants = [tuple(i) if i is not None else None for i in data.pop("instants", [])]
    return WriteResult(TableRef(**table), instants=instants, **data)


def prune(location: Path, older_than_days: float = 30) -> int:
    """Delete the entries no run has used for `older_than_days` (those of older writer code or
    releases, mostly); the number deleted."""
    limit = time.time() - older_than_days * 86_400
    removed = 0
    for result_file in location.glob("*/*/*/result.json"):
        with contextlib.suppress(OSError):
            if result_file.stat().st_mtime < limit:
                shutil.rmtree(result_file.parent)
                removed += 1
    for folder in location.glob("*/*/*"):  # a table written in place by a run that was killed
        with contextlib.suppress(OSError):
            if (
                folder.is_dir()
                and not (folder / "result.json").exists()
                and folder.stat().st_mtime < time.time() - 86_400
            ):
                shutil.rmtree(folder)
    for stale in location.glob("*/*/.incoming-*"):  # a run killed while storing
        with contextlib.suppress(OSError):
            if stale.stat().st_mtime < time.time() - 86_400:
                shutil.rmtree(stale)
    return removed
