"""Command-line pieces several commands share: argument types, option groups, the project's
default folders, and the `Command` each command module declares for `harness/cli.py`.

It imports nothing of lakecompat, so every command's module (in the folder of its work) can
use it whatever its layer.
"""

from __future__ import annotations

import argparse
import re
import shlex
import textwrap
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SCENARIOS = PROJECT_ROOT / "scenarios"
DEFAULT_EXPECTATIONS = PROJECT_ROOT / "expectations"
EXIT_CODES = """\
Known outcomes: files expectations/*.yaml say which cells are known not to pass, and why.
Every cell is judged against them: "as expected", "regression" (it does not pass and that is
not known), or "fixed upstream" (known not to pass, and now passes). Reports list regressions
and fixed-upstream cells first.

exit codes:
  0  every cell is as expected (with --strict: and none is fixed upstream)
  1  regressions (with --strict: also cells fixed upstream); the reports name them
  2  bad input (an option's value, such as an unknown --set key; a scenario or expectation
     file; an engine name; a release that does not exist), the harness failed, an engine
     failed (a cell is ENGINE_FAILED), or the run folder holds no finished run (no cells,
     or the run failed or was interrupted)
  130  interrupted (finished cells are kept in the run folder; the message gives the
     command that completes the run)
"""
#: What `add_parser` receives: the top-level parser's subcommands.
Subcommands = argparse._SubParsersAction


@dataclass(frozen=True)
class Command:
    """One `lakecompat` command: its name, what adds its parser, and what handles it (the
    exit code)."""

    name: str
    add_parser: Callable[[Subcommands], None]
    handle: Callable[[argparse.Namespace], int]


_SETTING = re.compile(r"^([a-z][a-z0-9_-]*):([A-Za-z0-9_.\-]+)=([A-Za-z0-9_.,:/\-]*)$")


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, with a description or epilog filled paragraph by paragraph (paragraphs
    are separated by blank lines) and a paragraph with indented lines (a list of exit codes,
    examples) kept as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = textwrap.dedent(text).strip("\n").split("\n\n")
        return "\n\n".join(
            paragraph
            if any(line.startswith(" ") for line in paragraph.splitlines())
            else textwrap.fill(
                " ".join(paragraph.split()), width, initial_indent=indent, subsequent_indent=indent
            )
            for paragraph in paragraphs
        )


class Parser(argparse.ArgumentParser):
    """argparse's parser with bad input said in one line, without the usage block: a value an
    option refuses as `<command>: <option> <value>: <what it expects>`, any other mistake (an
    unknown option, a missing value) as `<command>: <what is wrong> (...)`. Its help fills
    paragraphs (`HelpFormatter`). Its subcommands' parsers are of this class too (argparse
    makes them of the parent's class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def add_argument(self, *names: Any, **kwargs: Any) -> argparse.Action:
        return super().add_argument(*names, **self._checked(names, kwargs))

    def add_argument_group(self, *args: Any, **kwargs: Any) -> Any:
        group = super().add_argument_group(*args, **kwargs)
        add = group.add_argument
        group.add_argument = lambda *names, **options: add(  # type: ignore[method-assign]
            *names, **self._checked(names, options)
        )
        return group

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (`{self.prog} --help` lists the options)\n")

    def refuse(self, option: str, value: str, expected: str) -> NoReturn:
        """Exit 2 with the one line that names the option, the value given and what it takes."""
        self.exit(2, f"{self.prog}: {option} {shlex.quote(value)}: {expected}\n")

    def _checked(self, names: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """`kwargs` with its `type` (and `choices`) checked by a function that refuses a bad
        value itself: argparse would print the usage block before its message."""
        convert, choices = kwargs.get("type"), kwargs.get("choices")
        if convert is None and choices is None:
            return kwargs
        option = max(names, key=len) if str(names[0]).startswith("-") else kwargs.get("metavar")
        label = str(option or names[0])

        def check(text: str) -> Any:
            try:
                value = convert(text) if convert else text
            except (argparse.ArgumentTypeError, TypeError, ValueError) as exc:
                self.refuse(label, text, _expected(convert, exc))
            if choices is not None and value not in choices:
                self.refuse(label, text, f"expected one of: {_listed(choices)}")
            return value

        return {**kwargs, "type": check}


def _expected(convert: Any, exc: Exception) -> str:
    """What a refused value should have been: the type function's own words
    (`ArgumentTypeError`), else what the built-in type takes."""
    if isinstance(exc, argparse.ArgumentTypeError):
        return str(exc)
    builtin = {int: "expected a whole number", float: "expected a number"}
    return builtin.get(convert) or f"expected a {getattr(convert, '__name__', 'value')} ({exc})"


def _listed(choices: Collection[Any]) -> str:
    return ", ".join(str(choice) for choice in choices)


class OptionError(ValueError):
    """An option's value refused once the command line is parsed (an engine setting, a
    release): `lakecompat` prints it as `lakecompat <command>: <option> <value>: <why>`."""

    def __init__(self, option: str, value: str, why: str) -> None:
        super().__init__(f"{option} {shlex.quote(value)}: {why}")


def setting(value: str) -> tuple[str, str, str]:
    """`ENGINE:KEY=VALUE`, restricted to characters that are safe in a SET statement."""
    match = _SETTING.match(value.strip())
    if match is None:
        raise argparse.ArgumentTypeError(
            "expected ENGINE:KEY=VALUE, e.g. spark:spark.sql.parquet.enableVectorizedReader=false "
            "(keys and values may use letters, digits and . _ - , : /)"
        )
    engine, key, value = match.groups()
    return engine, key, value


def seconds(value: str) -> float:
    """A number of seconds from 0 to 86400."""
    try:
        number = float(value)
    except ValueError:
        number = -1
    if not 0 <= number <= 86_400:
        raise argparse.ArgumentTypeError("expected a number of seconds from 0 to 86400")
    return number


def duration(text: str) -> float:
    """`20m`, `90s`, `1h` or plain seconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", text)
    if not match or float(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError("expected a duration like 20m, 90s or 1h")
    return float(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]


def csv(value: str) -> tuple[str, ...]:
    """A comma-separated list."""
    return tuple(part.strip() for part in value.split(",") if part.strip())


def reports_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """`--reports`: the folder of run folders and `latest/`."""
    parser.add_argument(
        "--reports", type=Path, default=Path("reports"), metavar="DIR", help=help_text
    )


def judging_options(parser: argparse.ArgumentParser, default: str) -> None:
    """`--expectations` and `--strict`: what the cells are judged against, and how."""
    parser.add_argument(
        "--expectations",
        type=Path,
        metavar="DIR",
        help=f"folder of known-outcome files (*.yaml) to judge the cells against; {default}",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="also exit 1 when a known failure now passes (fixed upstream), so the "
        "expectations get updated",
    )


def scenario_options(parser: argparse.ArgumentParser) -> None:
    """`--scenarios` and `--scenario-dir`: which scenario files."""
    parser.add_argument(
        "--scenarios",
        metavar="PATTERN",
        help="comma-separated globs over scenario ids, e.g. 'rename_column/*' "
        "(an id is the file path below the scenario folder, without .yaml)",
    )
    parser.add_argument(
        "--scenario-dir",
        type=Path,
        default=DEFAULT_SCENARIOS,
        metavar="DIR",
        help=f"folder of scenario files (default: {DEFAULT_SCENARIOS})",
    )


def expectations_dir(args: argparse.Namespace) -> Path | None:
    """The given folder; the project's own for the project's scenarios; else none."""
    if args.expectations:
        return args.expectations
    return DEFAULT_EXPECTATIONS if args.scenario_dir == DEFAULT_SCENARIOS else None


def table_cache_option(parser: argparse.ArgumentParser) -> None:
    """`--no-table-cache`: write every table afresh instead of reading earlier writes."""
    parser.add_argument(
        "--no-table-cache",
        action="store_true",
        help="write every table afresh, and keep none. By default a table is written once and "
        "kept in the table cache ($LAKECOMPAT_CACHE/tables, default ~/.cache/lakecompat/tables); "
        "a later run needing the same table (same scenario content, table type, writer "
        "releases and settings, and writer code) reads a copy of it instead",
    )
