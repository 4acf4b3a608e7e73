"""`lakecompat explore`: generated evolution sequences, run like scenarios, each failure shrunk.

The catalog holds the changes people thought of; this looks for the rest. Rounds run until the
budget is spent. In each round Hypothesis (`harness.explore_gen`) generates sequences until one
fails in a way not found before, then shrinks it: its shrinker keeps a smaller sequence only
when that one still has a failure not found before, so the sequence it ends with is the
smallest it could find for the failures it has. A failure's *signature* is the engine, the
outcome and the reason class (the reason with names, numbers and quoted values taken out).

Every sequence is written and read on engines started once for the whole exploration; each
table gets a name of its own, so no engine answers from what it read before. For each
signature the folder gets one minimal example as a scenario file, ready for the catalog, and
`explore.md` lists which signatures a catalog run already has and which are new.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import Any

import yaml

from lakecompat.engines import engine_class
from lakecompat.engines.context import RunContext
from lakecompat.engines.spark.runtime import SparkRuntime
from lakecompat.harness.explore.generate import sequences
from lakecompat.harness.results.outcomes import Cell, Outcome
from lakecompat.harness.run.cells import read_table
from lakecompat.harness.run.fleet import EngineSpec, Fleet
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.releases import environment_releases
from lakecompat.harness.scenario.load import load_scenario
from lakecompat.harness.scenario.model import Scenario, ScenarioSpec
from lakecompat.harness.writer import create_writer

#: (engine, outcome, reason class): what makes two failures the same.
Signature = tuple[str, str, str]
#: Reasons that are about the exploration's table, not an engine (not findings).
_NOT_FINDINGS = (
    "the table does not hold",
    "timeout after",
    "could not register the table: timeout after",
)


class OutOfBudget(Exception):
    """The exploration's time is spent."""


#: What differs between two tables that fail the same way, in the order it is taken out of a
#: reason (a path before the file name in it, a file name before the ids in it): each with
#: the placeholder it becomes.
_PER_TABLE = (
    # A URI (file:/, s3a://, hdfs://) or an absolute path of two or more parts.
    (re.compile(r"\b[a-z][a-z0-9+.-]*:/+[^\s'\"`]*|(?<![\w.])/[^\s/'\"`]+/[^\s'\"`]*"), "<path>"),
    # Data, log and metadata files: Hudi's `<file id>_<write token>_<instant>.parquet` and
    # `.<file id>_<instant>.log.1_0-1-0`, Iceberg's `00000-0-<uuid>-00001.parquet`.
    (
        re.compile(
            r"\.?[\w.-]+\.(?:parquet|orc|avro|hfile|metadata\.json|log(?:\.\d+)?(?:_[\d-]+)?)"
            r"(?![\w-]|\.\w)"
        ),
        "<file>",
    ),
    # Which task of which stage on which host failed: Spark's words before the cause.
    (re.compile(r"(?<=Job aborted due to stage failure: )Task .*? executor [^)]*\): "), ""),
    # The run's tables: `t_explore_e12_mor_rt`.
    (re.compile(r"\bt_explore_e\d+_(?:cow|mor)(?:_ro|_rt)?\b"), "<table>"),
    # Moments: `2026-12-01 20:30:15.123`, `2026-12-01T20:30:15Z`, Hudi instants.
    (
        re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?"),
        "<time>",
    ),
    (re.compile(r"(?<!\d)(?:19|20)\d{12,15}(?!\d)"), "<instant>"),
    # Ids: UUIDs (a Hudi file id's `-0` with them), Trino's query ids, long hex strings.
    (
        re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?:-\d+)?\b"),
        "<id>",
    ),
    (re.compile(r"\b\d{8}_\d{6}_\d{5}_[a-z0-9]{5}\b"), "<id>"),
    (re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{8,}\b"), "<id>"),
)


def reason_class(reason: str) -> str:
    """The reason without what varies between examples: paths, file names, table names,
    moments and ids (so that one failure on two tables, or two files, is one signature),
    column names, numbers, quoted values, and how often one kind of difference repeats (two
    renamed columns fail as one does)."""
    text = reason.splitlines()[0] if reason else ""
    for pattern, placeholder in _PER_TABLE:
        text = pattern.sub(placeholder, text)
    # The column lists name the sequence's own columns.
    text = re.sub(r"column order differs: got [^;]*; expected [^;]*", "column order differs", text)
    parts = set()
    for part in text.split("; "):
        part = re.sub(r"`[^`]*`", "`?`", part)
        part = re.sub(r"'[^']*'", "'?'", part)
        part = re.sub(r"\b(c|r)\d+\b", "?", part)
        part = re.sub(r"\d+(\.\d+)?", "N", part)
        parts.add(part)
    return "; ".join(sorted(parts))[:200]


def signatures(cells: list[Cell]) -> dict[Signature, Cell]:
    """The failures among `cells`, one cell per signature (the first)."""
    found: dict[Signature, Cell] = {}
    for cell in cells:
        if cell.outcome not in (Outcome.WRONG, Outcome.ERROR):
            continue
        if cell.reason.startswith(_NOT_FINDINGS):
            continue
        engine = "writer" if cell.reason.startswith("the writer failed") else cell.engine
        found.setdefault((engine, cell.outcome.value, reason_class(cell.reason)), cell)
    return found


@dataclass
class Finding:
    """One signature and the smallest sequence found with it."""

    signature: Signature
    spec: dict[str, Any]
    cell: Cell
    #: False when the budget ran out while the sequence was being shrunk.
    shrunk: bool
    covered: bool | None = None


@dataclass
class Exploration:
    """What an exploration ran and found."""

    seed: int
    engines: tuple[str, ...]
    examples: int = 0
    seconds: float = 0.0
    findings: dict[Signature, Finding] = field(default_factory=dict)
    #: Stopped by Ctrl-C or SIGTERM: what was found so far is kept.
    interrupted: bool = False
    #: Which catalog run the findings were compared with, as explore.md says it.
    compared: str = ""


class Lab:
    """Engines started once; each sequence written as a table of its own and read by all."""

    def __init__(
        self,
        home: Path,
        engines: tuple[str, ...],
        progress: Progress,
        timeout: float,
        table_cache: Path | None = None,
    ) -> None:
        """`table_cache`: the table cache's folder (an exploration with the same seed reads
        the sequences it wrote before from there); None: every sequence is written."""
        self.home = home
        self.table_cache = table_cache
        self.engines = engines
        self.progress = progress
        self.timeout = timeout
        self.count = 0

    @contextmanager
    def running(self) -> Iterator[Lab]:
        # The releases the environment names, as `lakecompat run` chooses them.
        releases = environment_releases()
        runtime = SparkRuntime(self.home / "logs", releases=releases)
        context = RunContext(self.home, runtime, releases=releases)
        self.writer = create_writer(runtime, self.home / "tables", 900, cache=self.table_cache)
        self.fleet = Fleet(self.progress, self.timeout, threading.Event())
        specs = [EngineSpec(engine_class(name)) for name in self.engines]
        with ExitStack() as stack:
            stack.callback(context.close)
            stack.callback(self.writer.close)
            self.states = stack.enter_context(self.fleet.running(context, specs, {}))
            self.fleet.control_checks(self.writer, self.states)
            failed = [s for s in self.states if s.failure]
            if failed:
                raise RuntimeError(
                    "; ".join(f"{s.engine.name}: {s.failure}" for s in failed)
                    + " (see the logs in "
                    + str(self.home / "logs")
                    + ")"
                )
            yield self

    def cells(self, spec: dict[str, Any]) -> list[Cell]:
        """Write `spec` (a new table) and read it with every engine and variant (`SELECT *`)."""
        self.count += 1
        scenario = Scenario(f"explore/e{self.count}", Path(), ScenarioSpec.model_validate(spec))
        table_type = spec["table_types"][0]
        written = self.writer.write(scenario, table_type)
        found = []
        try:
            for state in self.states:
                registered = self.fleet.register(state, written)
                versions = self.writer.versions
                # Exploration reads `SELECT *`: query shapes would multiply each example's cost.
                found += read_table(
                    self.fleet, scenario, written, state, versions, registered, shapes=("all",)
                )
        finally:
            shutil.rmtree(written.table.path, ignore_errors=True)
        return found


def explore(
    lab: Lab,
    budget: float,
    seed: int,
    max_examples: int = 200,
) -> Exploration:
    """Rounds of generate-then-shrink until `budget` seconds are spent, a round finds nothing
    new in `max_examples` sequences, or the user interrupts (what was found is kept)."""
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis.errors import NoSuchExample

    result = Exploration(seed, lab.engines)
    started = time.monotonic()
    deadline = started + budget
    memo: dict[str, dict[Signature, Cell]] = {}
    random = Random(seed)

    def failures(spec: dict[str, Any]) -> dict[Signature, Cell]:
        text = _key(spec)
        if text not in memo:
            if time.monotonic() > deadline:
                raise OutOfBudget
            memo[text] = signatures(lab.cells(spec))
            result.examples += 1
        return memo[text]

    number = 0
    while time.monotonic() < deadline:
        number += 1
        best: dict[str, Any] = {}

        def new_failure(
            spec: dict[str, Any], best: dict[str, Any] = best, number: int = number
        ) -> bool:
            new = {s: c for s, c in failures(spec).items() if s not in result.findings}
            if new:
                best["spec"] = spec
            lab.progress.note(
                f"round {number}, sequence {result.examples}: {spec['title']} "
                f"({spec['table_types'][0]}): {len(new)} new failure(s)"
            )
            return bool(new)

        options = settings(
            database=None,
            max_examples=max_examples,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.generate, Phase.shrink],
        )
        shrunk = True
        try:
            spec = find(sequences(), new_failure, settings=options, random=random)
        except NoSuchExample:
            break
        except (OutOfBudget, KeyboardInterrupt) as stop:
            result.interrupted = isinstance(stop, KeyboardInterrupt)
            if "spec" not in best:
                break
            spec, shrunk = best["spec"], False
        for signature, cell in memo[_key(spec)].items():
            if signature not in result.findings:
                result.findings[signature] = Finding(signature, spec, cell, shrunk)
        if result.interrupted:
            break
    result.seconds = time.monotonic() - started
    return result


def _key(spec: dict[str, Any]) -> str:
    """A sequence as text, to run each one once."""
    return json.dumps(spec, sort_keys=True, default=str)


def mark_covered(result: Exploration, catalog_cells: list[Cell]) -> None:
    """Which findings a catalog run already has (the same signature)."""
    covered = set(signatures(catalog_cells))
    for finding in result.findings.values():
        finding.covered = finding.signature in covered


def write_findings(result: Exploration, out: Path) -> list[Path]:
    """One scenario file per finding (valid, checked by loading it) and `explore.md` and
    `explore.json`; the scenario files' paths."""
    folder = out / "scenarios" / "explored"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    ordered = sorted(result.findings.values(), key=lambda f: f.signature)
    for number, finding in enumerate(ordered, 1):
        engine, outcome, _ = finding.signature
        reason = finding.cell.reason.splitlines()[0] if finding.cell.reason else ""
        spec = {
            "title": finding.spec["title"],
            "description": f"Found by lakecompat explore (seed {result.seed}): {engine} "
            f"gives {outcome} ({finding.cell.table_type} {finding.cell.query_type}, "
            f"{finding.cell.variant}): {reason}",
            **{k: v for k, v in finding.spec.items() if k != "title"},
        }
        path = folder / f"{engine.replace('-', '_')}_{outcome.lower()}_{number}.yaml"
        path.write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True))
        load_scenario(path, out / "scenarios")  # ready for the catalog: it must load
        written.append(path)
    (out / "explore.json").write_text(json.dumps(_record(result, written, out), indent=1) + "\n")
    (out / "explore.md").write_text(_markdown(result, written, out))
    return written


def _record(result: Exploration, paths: list[Path], out: Path) -> dict[str, Any]:
    ordered = sorted(result.findings.values(), key=lambda f: f.signature)
    return {
        "seed": result.seed,
        "engines": list(result.engines),
        "sequences_run": result.examples,
        "seconds": round(result.seconds, 1),
        "compared_with": result.compared,
        "findings": [
            {
                "engine": f.signature[0],
                "outcome": f.signature[1],
                "reason_class": f.signature[2],
                "reason": f.cell.reason,
                "cell": f"{f.cell.table_type}.{f.cell.query_type}[{f.cell.variant}]",
                "steps": len(f.spec["steps"]),
                "shrunk": f.shrunk,
                "in_catalog": f.covered,
                "scenario": str(path.relative_to(out)),
            }
            for f, path in zip(ordered, paths, strict=True)
        ],
    }


def _markdown(result: Exploration, paths: list[Path], out: Path) -> str:
    ordered = sorted(result.findings.values(), key=lambda f: f.signature)
    new = sum(1 for f in ordered if f.covered is False)
    lines = [
        "# lakecompat explore",
        "",
        f"Seed {result.seed}, engines {', '.join(result.engines)}: {result.examples} sequences "
        f"in {result.seconds:.0f} s, {len(ordered)} failure signatures"
        + (
            f", {new} not in the catalog run" if any(f.covered is not None for f in ordered) else ""
        ),
        "",
        *([result.compared, ""] if result.compared else []),
        "| engine | outcome | reason (class) | smallest sequence | in the catalog | scenario |",
        "|---|---|---|---|---|---|",
    ]
    for finding, path in zip(ordered, paths, strict=True):
        covered = {True: "yes", False: "**new**", None: "not compared"}[finding.covered]
        shrunk = "" if finding.shrunk else " (not fully shrunk: budget)"
        lines.append(
            f"| {finding.signature[0]} | {finding.signature[1]} | {finding.signature[2]} | "
            f"{finding.spec['title'].removeprefix('Generated: ')}{shrunk} | {covered} | "
            f"`{path.relative_to(out)}` |"
        )
    return "\n".join(lines) + "\n"
