"""Reading the project's input files (scenarios, known outcomes): size limit, YAML, errors.

Every problem is an `InputError` whose message reads `<file>: <field>: <what was expected>`,
so a user can find and fix it without reading code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

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
