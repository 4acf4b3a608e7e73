"""`lakecompat run` (the matrix) and `lakecompat merge` (one run folder from a sharded run's)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from lakecompat.engines import (
    carried_field,
    carried_releases,
    carriers,
    engine_class,
    image_services,
    known_engines,
)
from lakecompat.engines.attached import Attachments, warehouse_folder
from lakecompat.engines.formats import FORMATS as FORMAT_REGISTRY
from lakecompat.engines.formats import ORIGINAL, format_words
from lakecompat.engines.releases import Releases
from lakecompat.harness.options import (
    DEFAULT_SCENARIOS,
    EXIT_CODES,
    Command,
    Subcommands,
    csv,
    expectations_dir,
    judging_options,
    reports_option,
    scenario_options,
    seconds,
    setting,
    table_cache_option,
)
from lakecompat.harness.report.command import judgement
from lakecompat.harness.results.hints import shown
from lakecompat.harness.results.outcomes import Cell, summary_line
from lakecompat.harness.run.fleet import REGISTER_LIMIT
from lakecompat.harness.run.folder import resume_options
from lakecompat.harness.run.merge import merge as merge_shards
from lakecompat.harness.run.options import (
    DEFAULT_FORMATS,
    RunOptions,
    RunResult,
    default_engines,
    default_formats,
    readers_words,
)
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.reads import VARIANT_CHOICES
from lakecompat.harness.run.releases import (
    check_releases,
    environment_releases,
    environment_sources,
)
from lakecompat.harness.run.settings import unchecked_lines
from lakecompat.harness.run.shards import Shard
from lakecompat.harness.scenario.model import TABLE_TYPES
from lakecompat.harness.scenario.shapes import DEFAULT_SHAPES, SHAPES
from lakecompat.harness.writer import FORMATS
from lakecompat.harness.writer.cache import default_location


def add_run_parser(commands: Subcommands) -> None:
    """The `run` command's options."""
    run = commands.add_parser(
        "run",
        help=f"write the scenarios as {format_words('and')} tables, read them with every "
        "engine, and write the reports (reports/runs/<id>/)",
        description=f"Write every selected scenario as a table of each format "
        f"({format_words('and')}; --formats: some of them), read each table with every "
        "engine that reads its format, "
        "and write the run folder (reports/runs/<id>/) with its reports. A completed run of "
        "the default matrix (no --scenarios, --engines, --formats, --table-types, --shapes, "
        "--variants default, --set or --shard, the project's scenario folder) also becomes "
        "reports/latest/.",
        epilog=EXIT_CODES,
    )
    scenario_options(run)
    run.add_argument(
        "--formats",
        type=csv,
        default=None,
        help=f"comma-separated table formats to write each scenario in (known: "
        f"{', '.join(FORMATS)}; default: {','.join(DEFAULT_FORMATS)}, less a format none of "
        "--engines reads); each format's tables are read by the engines that read it",
    )
    run.add_argument(
        "--engines",
        type=csv,
        default=None,
        help=f"comma-separated engines to read with (known: {', '.join(known_engines())}; "
        f"default: {readers_words()})",
    )
    run.add_argument(
        "--table-types",
        type=csv,
        default=TABLE_TYPES,
        metavar="TYPES",
        help="comma-separated table types: cow (copy-on-write), mor (merge-on-read; for "
        "Iceberg, delete files instead of rewritten data files); default: cow,mor",
    )
    shapes_option(run)
    run.add_argument(
        "--variants",
        choices=VARIANT_CHOICES,
        default="all",
        help="all (the default): read SELECT * under every variant of each engine (its "
        "reader settings that change what it reads), and filters and projections also under "
        "those that match old files' columns otherwise; default: under each engine's default "
        "settings only (quicker: what a user who changed no setting reads)",
    )
    reports_option(
        run, "folder for run folders, and latest/ of the default matrix (default: ./reports)"
    )
    for table_format in FORMAT_REGISTRY.values():
        run.add_argument(
            f"--{table_format.name}-version",
            metavar="VERSION",
            dest=f"{table_format.name}_version",
            help=f"{table_format.release_help[:1].upper()}{table_format.release_help[1:]}; "
            f"default: ${table_format.release_env} or {table_format.default_release}",
        )
    for table_format in FORMAT_REGISTRY.values():
        text = table_format.version_help
        run.add_argument(
            f"--{table_format.version_option.replace('_', '-')}",
            metavar=table_format.version_metavar,
            dest=table_format.version_option,
            help=f"{text[:1].upper()}{text[1:]}",
        )
    for name, table_format in carriers():
        run.add_argument(
            f"--{name}-{table_format}-version",
            metavar="VERSION",
            dest=f"{carried_field(name, table_format)}_version",
            help=engine_class(name).carries[table_format],
        )
    run.add_argument(
        "--query-timeout",
        type=seconds,
        default=300,
        metavar="SECONDS",
        help="kill and restart an engine whose query (one cell's read) runs longer; the cell "
        "is ERROR 'timeout after N s' (default: 300; 0: no limit). Registering a table and "
        f"the control check may take the longer of this and {REGISTER_LIMIT:g} s",
    )
    run.add_argument(
        "--step-timeout",
        type=seconds,
        default=900,
        metavar="SECONDS",
        help="kill and restart Spark when one writer step runs longer; the table's cells are "
        "ERROR (default: 900; 0: no limit)",
    )
    table_cache_option(run)
    run.add_argument(
        "--keep-tables",
        action="store_true",
        help="keep the tables (of every format) in the run folder (tables/) after the run; by "
        "default they are deleted with the engines' scratch data once the reports are written",
    )
    run.add_argument(
        "--resume",
        type=Path,
        metavar="RUN_DIR",
        help="complete an interrupted run: run only its missing cells, with the options it was "
        "started with (scenarios, engines, table types, settings, known outcomes), into the "
        "same folder",
    )
    run.add_argument(
        "--shard",
        metavar="K/N",
        help="run only the K-th of N shares of the tables (scenario x table format x table "
        "type), the same "
        "share on every machine for the same options; the baselines run in every shard. "
        "Merge the N run folders with `lakecompat merge`",
    )
    run.add_argument(
        "--shard-costs",
        type=Path,
        metavar="FILE",
        help="balance the shards by the seconds each table took in an earlier run: its "
        "costs.json (or its run folder); default: an estimate from steps and cells",
    )
    run.add_argument(
        "--set",
        dest="settings",
        type=setting,
        action="append",
        default=[],
        metavar="ENGINE:KEY=VALUE",
        help="a reader setting for every variant of one engine, e.g. spark:"
        "spark.sql.parquet.enableVectorizedReader=false; repeatable. Each key is checked before "
        "anything starts, and one the engine does not take stops the run: "
        f"{_settings_help()}. A key that cannot be checked is said on the run's output and, "
        "like every setting, in the reports' header. Compare the run with another using "
        "`lakecompat diff`",
    )
    judging_options(
        run,
        "default: the project's expectations/ when the project's scenarios run, else none",
    )
    run.add_argument(
        "--containers",
        action="store_true",
        help="run the engines in containers instead of as local processes: the JVM services "
        "(Hive Metastore, HiveServer2, Trino, Presto, Flink), Spark's JVMs (the writer's and "
        "the reader's) and the Python readers' workers, in images of Debian, the engine's JDK "
        "and this Python, built here on first use (needs Podman, or a Docker daemon: "
        "DOCKER_HOST), on the host's network, the tables mounted at their own paths. Every "
        "cell records where it ran (`runs_in`)",
    )
    run.add_argument(
        "--image",
        action="append",
        default=[],
        metavar="ENGINE=IMAGE",
        help="with --containers: run ENGINE's services (trino, hive, presto, flink, or "
        "metastore: the run's Hive Metastore) in your own IMAGE (on this machine, or pulled "
        "from your registry) with that image's operating system and `java` (its JAVA_HOME's, "
        "else the one on its PATH), instead of the image built here; the engine's jars and "
        "configuration are lakecompat's, mounted. Repeatable, e.g. "
        "--image trino=trinodb/trino:483",
    )
    run.add_argument("--quiet", action="store_true", help="no progress output, only the summary")
    run.add_argument(
        "--verbose",
        action="store_true",
        help="list every known failure as it is measured too (by default the progress lists "
        "regressions and cells fixed upstream, and counts the known failures)",
    )
    _attach_options(run)


def _settings_help() -> str:
    """What each engine's `--set` keys are, from the engines that take settings."""
    helps = (engine_class(name).settings_help for name in known_engines())
    return "; ".join(text for text in helps if text)


def run(args: argparse.Namespace) -> int:
    """Run the matrix (or complete an interrupted run), print the summary, judge it."""
    # The runner brings Spark along: imported once a run is asked for, not for --help.
    from lakecompat.harness.run.resume import resume
    from lakecompat.harness.run.runner import Runner

    if args.resume:
        if _attachments(args).any:
            raise ValueError(
                "--resume attaches to the services the run was started with (run.json's "
                "`attached`); do not give --spark-master, --trino, --hiveserver2, "
                "--hiveserver2-log, --metastore or --warehouse with it"
            )
        options = resume_options(args.resume, args.scenario_dir, args.reports)
        options.query_timeout, options.step_timeout = args.query_timeout, args.step_timeout
        options.keep_tables = args.keep_tables
        if args.no_table_cache:
            options.table_cache = None
        result = resume(options, _progress(args))
        return _finish(result, args)
    options = RunOptions(
        **selection(args),
        variants=args.variants,
        releases=_releases(args).over(environment_releases()),
        versions=_versions(args),
        engine_settings=_engine_settings(args.settings),
        query_timeout=args.query_timeout,
        step_timeout=args.step_timeout,
        keep_tables=args.keep_tables,
        shard=Shard.parse(args.shard) if args.shard else None,
        shard_costs=args.shard_costs,
        attachments=_attachments(args),
        containers=args.containers,
        images=user_images(args.image, args.containers),
    )
    if args.containers and options.attachments.any:
        raise ValueError(
            "--containers starts the engines in containers; it cannot be given with "
            "--spark-master, --trino, --hiveserver2, --metastore or --warehouse, which attach "
            "to engines already running"
        )
    if args.shard_costs and not args.shard:
        raise ValueError("--shard-costs balances shards: give --shard K/N too")
    check_releases(options, {**environment_sources(), **_release_options(args)})
    runner = Runner(options, _progress(args))
    for line in unchecked_lines(options):
        print(f"lakecompat run: {line}", file=sys.stderr)
    return _finish(runner.run(), args)


def user_images(given: list[str], containers: bool) -> dict[str, str]:
    """`--image ENGINE=IMAGE` options as engine → image; a wrong one is refused, named."""
    images: dict[str, str] = {}
    for option in given:
        engine, _, image = option.partition("=")
        engine, image = engine.strip(), image.strip()
        if not containers:
            raise ValueError(
                f"--image {option}: --image chooses the image of an engine's container; "
                "give --containers too"
            )
        if engine not in image_services() or not image:
            raise ValueError(
                f"--image {option}: expected ENGINE=IMAGE with ENGINE one of "
                f"{', '.join(image_services())} (Spark and the Python readers run in images built "
                "here), e.g. --image trino=trinodb/trino:483"
            )
        if engine in images and images[engine] != image:
            raise ValueError(f"--image {engine}= is given twice: {images[engine]} and {image}")
        images[engine] = image
    return images


def shapes_option(parser: argparse.ArgumentParser) -> None:
    """`--shapes`: which query shapes to read."""
    parser.add_argument(
        "--shapes",
        type=csv,
        default=DEFAULT_SHAPES,
        help="comma-separated query shapes: all (SELECT *, every query type and variant); "
        "project (the key and the changed columns), filter (= a value old rows hold, or IS "
        "NULL), range (BETWEEN), partition (a partition filter) and count (count(*) of "
        "filter), each on the snapshot under the engine's default settings, filter also with "
        f"pushdown off; default: {','.join(DEFAULT_SHAPES)}",
    )


def selection(args: argparse.Namespace) -> dict[str, Any]:
    """The run options `run` and `qualify` share: which cells, where reports go, judged how."""
    unknown = [t for t in args.table_types if t not in TABLE_TYPES]
    if unknown:
        raise ValueError(f"unknown table type {unknown[0]!r}; use cow and/or mor")
    odd = [s for s in args.shapes if s not in SHAPES]
    if odd:
        raise ValueError(f"unknown query shape {odd[0]!r} in --shapes; known: {', '.join(SHAPES)}")
    formats = _formats(args)
    return {
        "scenarios_dir": args.scenario_dir,
        "pattern": args.scenarios,
        "formats": formats,
        "engines": tuple(args.engines or default_engines(formats)),
        "table_types": args.table_types,
        "shapes": tuple(args.shapes),
        "reports_dir": args.reports,
        "expectations_dir": expectations_dir(args),
        "table_cache": None if args.no_table_cache else default_location(),
    }


def _formats(args: argparse.Namespace) -> tuple[str, ...]:
    """`--formats`, or the formats written without it: Hudi's alone for `qualify` (its version
    points set Hudi releases), else `default_formats`."""
    if not hasattr(args, "formats"):
        return (ORIGINAL,)
    if args.formats is None:
        return default_formats(args.engines, _attachments(args).any)
    formats = tuple(args.formats)
    strange = [f for f in formats if f not in FORMATS]
    if strange or not formats:
        named = f"unknown table format {strange[0]!r}" if strange else "no table format"
        raise ValueError(f"{named} in --formats; known: {', '.join(FORMATS)}")
    return formats


def add_merge_parser(commands: Subcommands) -> None:
    """The `merge` command's options."""
    merge = commands.add_parser(
        "merge",
        help="make one run folder from the run folders of a sharded run",
        description="Merge the run folders of the N shards of one run (`lakecompat run "
        "--shard K/N`) into a new run folder under --reports, with every report as if one "
        "run had measured every cell. Refuses shards of different runs, a shard given twice, "
        "a missing shard and an unfinished one (complete it with `lakecompat run --resume`). "
        "The exit code judges the merged run like `lakecompat run` does.",
        epilog=EXIT_CODES,
    )
    merge.add_argument(
        "shard_dirs", type=Path, nargs="+", metavar="RUN", help="the run folder of every shard"
    )
    reports_option(
        merge,
        "folder for the merged run folder, and latest/ of the default matrix (default: ./reports)",
    )
    merge.add_argument(
        "--scenario-dir",
        type=Path,
        default=DEFAULT_SCENARIOS,
        metavar="DIR",
        help=f"folder of the scenario files the shards ran (default: {DEFAULT_SCENARIOS})",
    )
    merge.add_argument(
        "--strict",
        action="store_true",
        help="also exit 1 when a known failure now passes (fixed upstream); the known outcomes "
        "are those the shards recorded",
    )


def merge(args: argparse.Namespace) -> int:
    """Merge the shards' run folders into one, and judge it."""
    result = merge_shards(args.shard_dirs, args.reports, args.scenario_dir)
    print(f"merged {len(args.shard_dirs)} shards: {summary_line(result.cells)}")
    code = judgement(result.judged, args.strict)
    _where(result)
    return code


def _attach_options(run: argparse.ArgumentParser) -> None:
    """The options that attach engines a user already runs (docs/attached-engines.md)."""
    group = run.add_argument_group(
        "engines you already run",
        "Attach to running services instead of starting them. lakecompat never starts, stops "
        "or restarts them; it registers its tables in a database named after the run and drops "
        "it at the end (unless --keep-tables). A run that attaches to any of them writes Hudi "
        "tables only (the Iceberg tables are read by the engines lakecompat starts, for now).",
    )
    group.add_argument(
        "--spark-master",
        metavar="spark://HOST:PORT",
        help="a Spark standalone master: the writer and the Spark reader run their jobs there "
        "(the driver runs here, on 127.0.0.1)",
    )
    group.add_argument(
        "--trino",
        metavar="URL",
        help="a Trino coordinator (http://HOST:PORT) with catalogs `hudi` and `hive` on the "
        "--metastore; needs --metastore",
    )
    group.add_argument(
        "--hiveserver2",
        metavar="HOST:PORT",
        help="a HiveServer2 (binary transport, NOSASL) with the writer's Hudi bundle on its "
        "classpath",
    )
    group.add_argument(
        "--hiveserver2-log",
        type=Path,
        metavar="FILE",
        help="the attached HiveServer2's log, where it is on this machine: a failed MapReduce "
        "job's cause is read from it (HiveServer2 tells clients only 'return code 2')",
    )
    group.add_argument(
        "--metastore",
        metavar="thrift://HOST:PORT",
        help="a Hive Metastore: the run registers its tables there, and engines lakecompat "
        "starts read it",
    )
    group.add_argument(
        "--warehouse",
        metavar="FOLDER",
        help="where the tables go (in <FOLDER>/<run id>-<random>/): a local folder or file: URI "
        "that every engine can read; default: the run folder's tables/",
    )


def _attachments(args: argparse.Namespace) -> Attachments:
    """The attachment options as given (checked by the runner)."""
    return Attachments(
        spark_master=args.spark_master,
        trino=args.trino,
        hiveserver2=args.hiveserver2,
        hiveserver2_log=args.hiveserver2_log.resolve() if args.hiveserver2_log else None,
        metastore=args.metastore,
        warehouse=warehouse_folder(args.warehouse) if args.warehouse else None,
    )


def _releases(args: argparse.Namespace) -> Releases:
    """The releases the command line names: `--<format>-version` of each format, and
    `--<engine>-<format>-version` of each format an engine carries jars of."""
    formats = {name: getattr(args, f"{name}_version") for name in FORMAT_REGISTRY}
    carried = carried_releases(lambda field: getattr(args, f"{field}_version"))
    return Releases({k: v for k, v in formats.items() if v}, {}, carried)


def _release_options(args: argparse.Namespace) -> dict[str, str]:
    """How the command line names each release it names, by field (`hudi`, `hive_hudi`):
    `--hudi-version 1.1.1`, for messages."""
    said = {
        name: f"--{name}-version {getattr(args, f'{name}_version')}"
        for name in FORMAT_REGISTRY
        if getattr(args, f"{name}_version")
    }
    for name, table_format in carriers():
        field = carried_field(name, table_format)
        if getattr(args, f"{field}_version"):
            said[field] = f"--{name}-{table_format}-version {getattr(args, f'{field}_version')}"
    return said


def _versions(args: argparse.Namespace) -> dict[str, str]:
    """Each format's version option the command line gives (`--table-version 6`), by format."""
    return {
        f.name: str(getattr(args, f.version_option))
        for f in FORMAT_REGISTRY.values()
        if getattr(args, f.version_option, None)
    }


def _engine_settings(settings: list[tuple[str, str, str]]) -> dict[str, dict[str, str]]:
    grouped: dict[str, dict[str, str]] = {}
    for engine, key, value in settings:
        grouped.setdefault(engine, {})[key] = value
    return grouped


def tables_line(cells: list[Cell]) -> str:
    """How many of the run's tables (of every format) came from the table cache; "" when none
    did."""
    tables = {(c.format, c.scenario, c.table_type): c.table_from for c in cells}
    cached = sum(1 for source in tables.values() if source == "cache")
    if not cached:
        return ""
    return (
        f"tables: {cached} of {len(tables)} read from the table cache, "
        f"{len(tables) - cached} written (--no-table-cache writes every one)"
    )


def _progress(args: argparse.Namespace) -> Progress:
    return Progress(quiet=args.quiet, verbose=args.verbose)


def _finish(result: RunResult, args: argparse.Namespace) -> int:
    """The run's last lines: its cells, the regressions, the verdicts, where its report is."""
    print(summary_line(result.cells))
    line = tables_line(result.cells)
    if line:
        print(line)
    code = judgement(result.judged, args.strict)
    _where(result)
    return code


def _where(result: RunResult) -> None:
    """Where the run's report is (its own folder's), and whether `latest/` is this run."""
    print(f"report: {shown(result.run_dir / 'matrix.html')} (and matrix.md, summary.md)")
    if result.latest is not None:
        print(result.latest.line())


RUN = Command("run", add_run_parser, run)
MERGE = Command("merge", add_merge_parser, merge)
