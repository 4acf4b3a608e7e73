"""Loading scenario files: validation against the model, a dry run of the steps by the oracle,
and one error naming the file and the field for anything wrong.
"""

from __future__ import annotations

import difflib
import fnmatch
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lakecompat.engines.formats import format_names
from lakecompat.harness.scenario.input_files import (
    InputError,
    field_path,
    first_error,
    read_mapping,
    unknown_field,
)
from lakecompat.harness.scenario.model import (
    OPS,
    SCENARIO_ID,
    Scenario,
    ScenarioSpec,
    changes,
    table_name,
)
from lakecompat.harness.scenario.oracle import StepError, evolve


class ScenarioError(InputError):
    """A scenario file is invalid; the message names the file, the field and what was expected."""


def load_scenario(path: Path, root: Path) -> Scenario:
    """Read and validate one scenario file, including a dry run of its steps by the oracle."""
    data = read_mapping(path, ScenarioError, "title, key, schema, rows, steps")
    try:
        spec = ScenarioSpec.model_validate(data)
    except ValidationError as exc:
        first = first_error(exc)
        loc = first["loc"]
        if first["type"] == "extra_forbidden":
            message = unknown_field(ScenarioSpec, loc)
            if loc[:-1] == ("formats",):
                message = _unknown_format(str(loc[-1]))
            elif len(loc) == 1 and loc[0] in format_names():
                message = (
                    f"unknown field {loc[0]!r}: what a scenario gives a format goes under "
                    f"`formats:` (formats: {{{loc[0]}: {{...}}}})"
                )
            raise ScenarioError(path, _field_path(loc[:-1]), message) from None
        raise ScenarioError(path, _field_path(loc), first["msg"]) from None
    scenario_id = path.relative_to(root).with_suffix("").as_posix()
    if not SCENARIO_ID.match(scenario_id):
        raise ScenarioError(
            path,
            "",
            f"the scenario id {scenario_id!r} (the path below {root}) may use only a-z, 0-9 "
            "and _ in its folder and file names, because it becomes a table name",
        )
    scenario = Scenario(scenario_id, path, spec)
    try:
        evolve(spec)
    except StepError as exc:
        raise ScenarioError(path, exc.field, str(exc)) from None
    if set(spec.needs or ()) - {"older_writer_files"} and not changes(spec):
        raise ScenarioError(
            path,
            "needs",
            "old and new files are about a schema change, and no step changes the schema "
            "(leave `needs` out)",
        )
    if "older_writer_files" in (spec.needs or ()) and spec.upgrade is None:
        raise ScenarioError(
            path, "needs", "older_writer_files needs an upgrade_writer step, and there is none"
        )
    return scenario


def load_scenarios(root: Path, pattern: str | None = None) -> list[Scenario]:
    """Every scenario below `root` whose id matches the glob `pattern`, baselines first."""
    if not root.is_dir():
        raise ScenarioError(root, "", "scenario folder not found")
    paths = sorted(p for p in root.rglob("*.y*ml") if p.suffix in (".yaml", ".yml"))
    scenarios = [load_scenario(p, root) for p in paths]
    _check_table_names(scenarios)
    if pattern:
        globs = [g.strip() for g in pattern.split(",") if g.strip()]
        scenarios = [s for s in scenarios if any(fnmatch.fnmatch(s.id, g) for g in globs)]
    return sorted(scenarios, key=lambda s: (not s.spec.baseline, s.id))


def _check_table_names(scenarios: list[Scenario]) -> None:
    """Two scenario ids must not give the same table name (`a/b_c` and `a_b/c` would)."""
    seen: dict[str, Scenario] = {}
    for scenario in scenarios:
        name = table_name(scenario.id, "cow")
        if name in seen:
            raise ScenarioError(
                scenario.path,
                "",
                f"its tables would have the names of {seen[name].path}'s ({name}); rename one",
            )
        seen[name] = scenario


def _unknown_format(name: str) -> str:
    """What an unknown name under `formats:` is: no table format (the closest one, if any)."""
    closest = difflib.get_close_matches(name, format_names(), n=1, cutoff=0.6)
    hint = f" (did you mean {closest[0]!r}?)" if closest else ""
    return f"no table format {name!r}{hint}; the formats are: {', '.join(format_names())}"


def _field_path(loc: tuple[Any, ...]) -> str:
    # The step's tag (its `op`) is not a field a user wrote, nor is pydantic's `[key]` after a
    # mapping's key (a step setting's name): leave them out.
    return field_path(
        loc,
        lambda position, item: (
            (position == 2 and loc[0] == "steps" and item in OPS) or item == "[key]"
        ),
    )
