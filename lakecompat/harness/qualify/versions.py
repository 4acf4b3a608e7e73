"""Version points as data: which releases of the writers and the readers a run uses.

A version point names, where it changes them, the Hudi release Spark writes Hudi tables with
and the table version it writes, the Hudi jars HiveServer2 and Spark read with (older than the
writer's: version skew), the Iceberg release Spark writes and reads Iceberg tables with and the
format version it writes, and the releases of Trino, Hive and the Python readers. Points come
from a file (`versions.yaml`) or from the command line (`--point NAME:hudi=1.1.1,trino=476`); a
field a point leaves out keeps the run's default.

    # versions.yaml
    baseline: hudi-1.1     # default: the first point
    candidate: hudi-1.2    # default: the last point
    engines: [spark, hive] # default: the formats' default readers (--engines wins)
    scenarios: ['rename_column/*']  # default: every scenario (--scenarios wins)
    points:
      - name: hudi-1.1
        hudi: 1.1.1
      - name: hudi-1.2
        hudi: 1.2.0
      - name: hudi-1.2-readers-0.15      # a format's releases in one map
        hudi: {release: 1.2.0, table_version: 6, hive: 0.15.0}
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)

from lakecompat.engines import (
    carried_field,
    carried_releases,
    carriers,
    engine_class,
    known_engines,
)
from lakecompat.engines.formats import FORMATS, ORIGINAL, format_named
from lakecompat.engines.infra.iceberg_jars import FORMAT_VERSIONS
from lakecompat.engines.releases import Releases
from lakecompat.harness.scenario.input_files import (
    InputError,
    field_path,
    first_error,
    read_mapping,
    unknown_field,
)

_VERSION = Field(pattern=r"^[0-9][0-9A-Za-z.\-]*$", max_length=40)
#: A format's version option may be a name (Delta's column mapping mode: `id`); the format
#: checks its value before anything starts (`TableFormat.check_version`).
_OPTION = Field(pattern=r"^[0-9A-Za-z][0-9A-Za-z.\-_]*$", max_length=40)
_NAME = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._\-]*$", max_length=60)
#: The engines a point can set a release of (`trino: 476`, `hudi_rs: 0.4.0`), by field name
#: (the engine's name, `_` for `-`): those whose class names the environment variable that
#: selects it (`Engine.release_env`).
RELEASED = {
    name.replace("-", "_"): engine_class(name)
    for name in known_engines()
    if engine_class(name).release_env
}
#: What a point may set, and what each field means (for errors and help): for each table
#: format its writer's release (`hudi`), its version option (`table_version`) and the release
#: of its jars a reader carries apart from the writer's (`hive_hudi`); then each engine's
#: release (`trino`).
FIELDS = {
    **{
        field: text
        for table_format in FORMATS.values()
        for field, text in (
            (table_format.name, table_format.release_help),
            (table_format.version_option, table_format.version_help),
            *(
                (carried_field(name, fmt), engine_class(name).carries[fmt])
                for name, fmt in carriers()
                if fmt == table_format.name
            ),
        )
    },
    **{name: cls.release_help for name, cls in RELEASED.items()},
}
#: The table format each writer field concerns alone (`_formats_of`).
FORMAT_FIELDS = {
    field: table_format.name
    for table_format in FORMATS.values()
    for field in (
        table_format.name,
        table_format.version_option,
        *(carried_field(n, f) for n, f in carriers() if f == table_format.name),
    )
}
#: The fields that set a format's version option (`table_version`, `column_mapping`).
VERSION_OPTIONS = frozenset(f.version_option for f in FORMATS.values())
PLAN_FIELDS = ("points", "baseline", "candidate", "engines", "scenarios")


def format_map_fields(table_format: str) -> dict[str, str]:
    """What a point's map of `table_format`'s releases gives, and the field each stands for:
    `release` (the writer's), the format's version option, and the release of its jars each
    engine that carries them reads with (`hive: 0.15.0` for `hive_hudi`)."""
    chosen = format_named(table_format)
    return {
        "release": chosen.name,
        chosen.version_option: chosen.version_option,
        **{name: carried_field(name, fmt) for name, fmt in carriers() if fmt == table_format},
    }


class VersionsError(InputError):
    """A versions file or `--point` is invalid; the message names the file and the field."""


class _Point(BaseModel):
    """One point: a name and the releases it changes (the fields are `FIELDS`); a release
    written as a YAML number (`trino: 483`, `table_version: 6`) is read as its text."""

    model_config = ConfigDict(extra="forbid", frozen=True, coerce_numbers_to_str=True)

    name: Annotated[str, _NAME]

    @model_validator(mode="before")
    @classmethod
    def _format_maps(cls, data: Any) -> Any:
        """A format's releases in one map (`hudi: {release: 1.2.0, table_version: 6, hive:
        0.15.0}`) as the fields they stand for (`hudi`, `table_version`, `hive_hudi`); the
        flat fields keep loading."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for table_format in FORMATS.values():
            given = data.get(table_format.name)
            if not isinstance(given, dict):
                continue
            del data[table_format.name]
            fields = format_map_fields(table_format.name)
            for key, release in given.items():
                if key not in fields:
                    raise ValueError(
                        f"{table_format.name}.{key}: not a release of {table_format.title}; "
                        f"a {table_format.name} map gives {', '.join(fields)}"
                    )
                if fields[key] in data:
                    raise ValueError(
                        f"{table_format.name}.{key} and {fields[key]} set the same release: "
                        "give one of them"
                    )
                data[fields[key]] = release
        return data

    def releases(self) -> dict[str, str]:
        """The releases this point sets, by field."""
        return {k: v for k, v in self.model_dump(exclude={"name"}).items() if v is not None}

    def describe(self) -> str:
        """`hudi 1.1.1, trino 476`, or `defaults` when the point sets nothing."""
        return ", ".join(f"{k} {v}" for k, v in self.releases().items()) or "defaults"

    @field_validator("format_version", check_fields=False)
    @classmethod
    def _check_format_version(cls, value: str | None) -> str | None:
        if value is not None and value not in FORMAT_VERSIONS:
            raise ValueError(
                f"{value!r} is not a format version the Iceberg writer writes "
                f"({' or '.join(FORMAT_VERSIONS)})"
            )
        return value


#: A point's model: `name` and one optional release per field of `FIELDS`, so an engine with a
#: release of its own is a field here without a line of this module changing.
VersionPoint = create_model(
    "VersionPoint",
    __base__=_Point,
    **{
        field: (Annotated[str, _OPTION if field in VERSION_OPTIONS else _VERSION] | None, None)
        for field in FIELDS
    },
)


class VersionPlan(BaseModel):
    """The points of a qualification, which two the report compares, and the engines and
    scenarios the plan is meant for (the command line's `--engines` and `--scenarios` win)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    points: list[VersionPoint] = Field(min_length=2)
    baseline: Annotated[str, _NAME] | None = None
    candidate: Annotated[str, _NAME] | None = None
    #: The engines to read with (None: the default readers of the formats qualified).
    engines: list[str] | None = Field(default=None, min_length=1)
    #: Globs over scenario ids, as `--scenarios` takes them (None: every scenario).
    scenarios: list[str] | None = Field(default=None, min_length=1)

    @field_validator("engines", "scenarios", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        """`spark,hive` as `--engines` takes it, or a YAML list."""
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("engines")
    @classmethod
    def _check_engines(cls, names: list[str] | None) -> list[str] | None:
        unknown = [name for name in names or () if name not in known_engines()]
        if unknown:
            raise ValueError(f"unknown engine {unknown[0]!r}; known: {', '.join(known_engines())}")
        return names

    @model_validator(mode="after")
    def _check_names(self) -> VersionPlan:
        names = [point.name for point in self.points]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"point names must differ; repeated: {', '.join(repeated)}")
        for role in ("baseline", "candidate"):
            chosen = getattr(self, role)
            if chosen is not None and chosen not in names:
                raise ValueError(f"{role} {chosen!r} is not a point (points: {', '.join(names)})")
        if self.baseline_point().name == self.candidate_point().name:
            raise ValueError("the baseline and the candidate are the same point")
        return self

    def baseline_point(self) -> VersionPoint:
        """The point the candidate is compared with (default: the first)."""
        return self._point(self.baseline, 0)

    def candidate_point(self) -> VersionPoint:
        """The point being qualified (default: the last)."""
        return self._point(self.candidate, -1)

    def _point(self, name: str | None, default: int) -> VersionPoint:
        if name is None:
            return self.points[default]
        return next(point for point in self.points if point.name == name)

    def formats(self) -> tuple[str, ...]:
        """The table formats the points concern: a format is qualified when a point sets one
        of its writer's fields (`hudi`, `iceberg`, ...) or the release of a reader that reads
        that format alone; a point that sets only readers of both (Trino, Daft), or nothing,
        qualifies Hudi's tables."""
        fields = {field for point in self.points for field in point.releases()}
        chosen = {table_format for field in fields for table_format in _formats_of(field)}
        return tuple(f for f in FORMATS if f in chosen) or (ORIGINAL,)


def _formats_of(field: str) -> tuple[str, ...]:
    """The format a field concerns alone (none for a reader of several formats)."""
    if field in FORMAT_FIELDS:
        return (FORMAT_FIELDS[field],)
    formats = RELEASED[field].formats
    return formats if len(formats) == 1 else ()


def load_versions(path: Path) -> VersionPlan:
    """The version plan in `path`; `VersionsError` naming the file and field when invalid."""
    data = read_mapping(path, VersionsError, "'points:' (a list of version points)")
    return _validate(data, path)


def parse_points(texts: list[str]) -> VersionPlan:
    """Points from the command line: `NAME:hudi=1.1.1,trino=476` each, baseline first."""
    points: list[dict[str, Any]] = []
    for text in texts:
        name, _, rest = text.partition(":")
        point: dict[str, Any] = {"name": name.strip()}
        for part in filter(None, (p.strip() for p in rest.split(","))):
            key, equals, value = part.partition("=")
            if not equals:
                keys = ", ".join(FIELDS)
                message = f"{part!r} is not KEY=VERSION (keys: {keys})"
                raise VersionsError(Path("--point"), text, message)
            point[key.strip()] = value.strip()
        points.append(point)
    return _validate({"points": points}, Path("--point"))


def _validate(data: dict[str, Any], path: Path) -> VersionPlan:
    try:
        return VersionPlan.model_validate(data)
    except ValidationError as exc:
        error = first_error(exc)
        message = error["msg"]
        if error["type"] == "extra_forbidden":
            message = unknown_field(VersionPlan, error["loc"])
            raise VersionsError(path, field_path(error["loc"][:-1]), message) from None
        if error["type"] == "value_error":
            message = message.removeprefix("Value error, ")
        elif error["type"] == "string_pattern_mismatch":
            message = f"{error['input']!r} is not a release number such as 1.2.0 or 483"
            if error["loc"][-1] in ("name", "baseline", "candidate"):
                message = f"{error['input']!r}: use letters, digits and . _ -"
        raise VersionsError(path, field_path(error["loc"]), message) from None


def point_releases(point: VersionPoint) -> Releases:
    """The releases `point` names: each format's writer release, each engine's, and the
    format releases a reader carries apart from the writer's."""
    fields = point.releases()
    formats = {name: fields[name] for name in FORMATS if name in fields}
    engines = {cls.name: fields[field] for field, cls in RELEASED.items() if field in fields}
    return Releases(formats, engines, carried_releases(fields.get))


def point_versions(point: VersionPoint) -> dict[str, str]:
    """The version options `point` sets, by format (`{"hudi": "6"}` for `table_version: 6`)."""
    fields = point.releases()
    return {
        f.name: fields[f.version_option] for f in FORMATS.values() if f.version_option in fields
    }


def slug(name: str) -> str:
    """A point name safe in a folder name."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)
