"""What the writer scripts of every table format share (`lakecompat repro`): where a script
writes its table, how it says which step runs, how it is submitted offline, and Python source
for the values it writes.

A writer script does what lakecompat's writer does for one scenario and table type, spelled
out, and needs nothing of lakecompat: only Spark and the one jar its first lines name.
"""

from __future__ import annotations

import datetime as dt
import math
import shlex
import subprocess
import sys
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

from lakecompat.engines.infra.artifacts import MavenArtifact, maven_repo
from lakecompat.engines.infra.jdk import find_jdk
from lakecompat.engines.spark.process import child_python
from lakecompat.engines.spark.runtime import SPARK_JAVA_VERSIONS
from lakecompat.harness.scenario import model as sc
from lakecompat.harness.scenario.oracle import TableState, evolve

#: Where a script writes its table unless given a path (the reader files use it too).
DEFAULT_ROOT = "/tmp/lakecompat-repro"
#: What a script prints before each step, then the step as `WriteResult.failed_at` names it.
STEP_MARK = "writer.py step: "


class ReproScriptError(ValueError):
    """A scenario a writer script cannot reproduce (yet); the message says why."""


def default_path(scenario_id: str, table_type: str) -> str:
    """Where the script writes the table unless told otherwise."""
    return f"{DEFAULT_ROOT}/{sc.table_name(scenario_id, table_type)}"


def submit_command(
    jar: MavenArtifact,
    script: str = "writer.py",
    also: tuple[MavenArtifact, ...] = (),
    pyspark: str = "",
) -> tuple[dict[str, str], list[str]]:
    """`spark-submit writer.py` as `lakecompat repro` runs it, offline: the environment
    variables, and PySpark's own spark-submit with the cached `jar` (the table format's Spark
    bundle or runtime) and the jars it needs `also`, every socket on 127.0.0.1 (the script's
    TABLE_PATH argument may follow). With `pyspark`, that release's spark-submit, from the
    Python environment lakecompat keeps it in (installed on first use)."""
    if pyspark:
        python = child_python(pyspark)[0]
        submit = spark_submit(python)
    else:
        python, submit = sys.executable, spark_submit()
    variables = {
        "JAVA_HOME": str(find_jdk(SPARK_JAVA_VERSIONS, "Spark 3.5").home),
        # The virtualenv's Python, so that the driver finds PySpark without an activated venv.
        "PYSPARK_PYTHON": python,
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    argv = [
        submit,
        *("--master", "local[2]"),
        *("--jars", ",".join(str(j.local_path(maven_repo())) for j in (jar, *also))),
        *("--driver-java-options", "-Duser.timezone=UTC"),
        *("--conf", "spark.ui.enabled=false"),
        *("--conf", "spark.driver.bindAddress=127.0.0.1", "--conf", "spark.driver.host=127.0.0.1"),
        script,
    ]
    return variables, argv


def spark_submit(python: str = "") -> str:
    """PySpark's spark-submit: of this Python's PySpark, or of the one `python` imports."""
    if not python:
        import pyspark  # only here: the header of a script needs it, nothing else here

        return str(Path(pyspark.__file__).parent / "bin" / "spark-submit")
    found = subprocess.run(
        [python, "-c", "import pyspark; print(pyspark.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    )
    return str(Path(found.stdout.strip()).parent / "bin" / "spark-submit")


def shell(variables: dict[str, str], argv: list[str], indent: str) -> str:
    """The command as shell lines: each variable, the program, each option with its value,
    then the arguments."""
    program, *rest = argv
    lines = [f"{name}={shlex.quote(value)}" for name, value in variables.items()]
    lines.append(shlex.quote(program))
    while rest:
        take = 2 if rest[0].startswith("--") else len(rest)
        lines.append(" ".join(map(shlex.quote, rest[:take])))
        rest = rest[take:]
    lines[-1] += " [TABLE_PATH]"
    return indent + f" \\\\\n{indent}    ".join(lines)


#: The lines of one step of a script: given its index (0: the seed rows), the step, and the
#: table's state before and after it.
StepLines = Callable[[int, Any, TableState, TableState], list[str]]


def script(header: str, spec: sc.ScenarioSpec, step_lines: StepLines, seed_note: str = "") -> str:
    """A writer script: `header`, then the seed rows and each step, each announced with
    `step(...)` as `WriteResult.failed_at` names it (`seed_note` follows the seed rows'
    comment), then a line saying where the table went."""
    lines = [header]
    states = evolve(spec)
    steps: list[Any] = [sc.Insert(op="insert", rows=spec.rows), *spec.steps]
    for index, step in enumerate(steps):
        where = f"steps[{index - 1}] ({step.op})" if index else "the seed rows"
        lines.append(f"# {where}{'' if index else seed_note}")
        lines.append(f"step({where!r})")
        lines += step_lines(index, step, states[max(index - 1, 0)], states[index])
        lines.append("")
    lines.append('print(f"wrote {TABLE} to {PATH}")')
    return "\n".join(lines) + "\n"


def coordinates(jar: MavenArtifact) -> str:
    """`group:artifact:version`, as `spark-submit --packages` takes it."""
    return f"{jar.group}:{jar.artifact}:{jar.version}"


def literal(value: Any, indent: str = "") -> str:
    """Python source for `value`: a list or dict one item per line, the rest as `source`."""
    if isinstance(value, list) and value:
        return "[\n" + "".join(f"{indent}    {source(v)},\n" for v in value) + indent + "]"
    if isinstance(value, dict) and value:
        items = "".join(f"{indent}    {source(k)}: {source(v)},\n" for k, v in value.items())
        return "{\n" + items + indent + "}"
    return source(value)


def source(value: Any) -> str:
    """Python source that gives `value` back (NaN and infinity too)."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{source(k)}: {source(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(source(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(source(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if value is None or isinstance(
        value, dt.datetime | dt.date | Decimal | bytes | str | int | float | bool
    ):
        return repr(value)
    raise ReproScriptError(f"cannot write a value of type {type(value).__name__} in a script")
