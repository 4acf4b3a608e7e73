"""Reading the project's input files (scenarios, known outcomes): size limit, YAML, errors.

Every problem is an `InputError` whose message reads `<file>: <field>: <what was expected>`,
so a user can find and fix it without reading code.
"""

from __future__ import annotations

import difflib
import types
import typing
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

#: No input file needs more; a larger one is a mistake (or an attempt to exhaust memory).
MAX_FILE_BYTES = 2 * 1024 * 1024


class InputError(ValueError):
    """An input file is invalid; the message names the file, the field and what was expected."""

    def __init__(self, path: Path, field: str, message: str) -> None:
        self.path, self.field = path, field
        where = f"{path}: {field}" if field else str(path)
        super().__init__(f"{where}: {message}")


class _Loader(yaml.SafeLoader):
    """SafeLoader that keeps dates as text, so the models check them and name the field."""


#: The same loader on LibYAML's parser, where PyYAML was built with it (its wheels are): the
#: same documents, about eight times faster than the pure-Python parser, which spent seconds
#: of every run on the known outcomes' files. Its error messages lack the line they point
#: at, so a file it refuses is read again with `_Loader` for the message.
_FastLoader = type("_FastLoader", (getattr(yaml, "CSafeLoader", _Loader),), {})

_Loader.yaml_implicit_resolvers = _FastLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def read_mapping(path: Path, error: type[InputError], shape: str) -> dict[str, Any]:
    """The YAML mapping in `path`; `error` (naming the file) when it is too large, unreadable,
    not YAML or not a mapping. `shape` says what the mapping should hold."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            limit = MAX_FILE_BYTES // 1024 // 1024
            raise error(path, "", f"the file has {size:,} bytes; the limit is {limit} MiB")
        text = path.read_text(encoding="utf-8")
        try:
            data = yaml.load(text, Loader=_FastLoader)
        except yaml.YAMLError:
            data = yaml.load(text, Loader=_Loader)  # raises again, with the line shown
    except (OSError, UnicodeDecodeError) as exc:
        raise error(path, "", f"cannot be read: {exc}") from None
    except (yaml.YAMLError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise error(path, "", f"not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise error(path, "", f"expected a mapping with {shape}")
    return data


def field_path(loc: tuple[Any, ...], skip: Any = None) -> str:
    """A pydantic error location as `steps[1].column`; `skip(position, item)` drops parts
    (such as the tag of a discriminated union)."""
    parts: list[str] = []
    for position, item in enumerate(loc):
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif not (skip and skip(position, item)):
            parts.append(("." if parts else "") + str(item).rstrip("_"))
    return "".join(parts)


def first_error(exc: ValidationError) -> ErrorDetails:
    """The error to report of a file that failed validation: an unknown field before any
    other, since a misspelt field (`too:` for `to:`) also leaves the one it meant missing, and
    "Field required" would hide the typo."""
    errors = exc.errors()
    return next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])


def unknown_field(model: type[BaseModel], loc: tuple[Any, ...]) -> str:
    """`unknown field 'too' (did you mean 'to'?)` for the unknown field at `loc` (a pydantic
    error location in `model`): the closest field known there, or the known fields."""
    name = str(loc[-1])
    known = fields_at(model, loc[:-1])
    closest = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if closest:
        return f"unknown field {name!r} (did you mean {closest[0]!r}?)"
    return f"unknown field {name!r}" + (f"; known fields: {', '.join(known)}" if known else "")


def fields_at(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The fields (as a file spells them: aliases) of the model found at `loc` below `model`;
    none where `loc` leads to no model."""
    annotation: Any = model
    for part in loc:
        annotation = _inner(annotation, part)
        if annotation is None:
            return []
    annotation = _unwrapped(annotation)
    if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return []
    return [info.alias or name for name, info in annotation.model_fields.items()]


def _inner(annotation: Any, part: Any) -> Any:
    """What `annotation` holds at one step of an error location: a list's item, a dict's value,
    a model's field, or the member of a tagged union that the tag (`op: rename_column`)
    chose; None when it holds nothing there."""
    annotation = _unwrapped(annotation)
    origin = typing.get_origin(annotation)
    if origin in (list, tuple, dict):
        return typing.get_args(annotation)[-1 if origin is dict else 0]
    if origin in (typing.Union, types.UnionType):
        return next((m for m in typing.get_args(annotation) if _tagged(m, part)), None)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        fields = annotation.model_fields
        return next(
            (info.annotation for name, info in fields.items() if part in (name, info.alias)), None
        )
    return None


def _unwrapped(annotation: Any) -> Any:
    """`annotation` without `Annotated[...]` and `| None`."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
            continue
        members = [m for m in typing.get_args(annotation) if m is not type(None)]
        if origin in (typing.Union, types.UnionType) and len(members) == 1:
            annotation = members[0]
            continue
        return annotation


def _tagged(member: Any, tag: Any) -> bool:
    """Whether a union member is the model a tagged union's `tag` chooses (a field of the model
    is `Literal[tag]`)."""
    if not (isinstance(member, type) and issubclass(member, BaseModel)):
        return False
    return any(
        typing.get_origin(info.annotation) is typing.Literal
        and tag in typing.get_args(info.annotation)
        for info in member.model_fields.values()
    )
