"""Reader settings given with `--set ENGINE:KEY=VALUE`: the keys an engine takes, read from its
jars before it starts (`engines.infra.jar_strings`), and the error for a key it does not take.

Each engine checks its own keys (`Engine.check_settings`); what they share is here: a set of
known keys with where it comes from, the closest known key to a misspelt one, the Hudi options
of a Hudi bundle, and the session properties of a Trino-like coordinator (system properties,
and `<catalog>.<property>` for a catalog's).
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from lakecompat.engines.attached import Attachments
from lakecompat.engines.infra.artifacts import MavenArtifact, fetch
from lakecompat.engines.infra.jar_strings import jar_literals
from lakecompat.engines.releases import Releases


class SettingError(ValueError):
    """A key (or value) `--set` gives an engine that the engine does not take; the message
    names the engine and the key, and says what it takes or the closest key it knows."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class SettingsScope:
    """What a check of an engine's settings knows before anything starts."""

    #: The engine whose settings are checked (its registry name).
    engine: str
    #: The run's releases (`engines.releases`): the engine's own, and the format releases it
    #: reads with.
    releases: Releases = field(default_factory=Releases)
    #: The table formats the run writes.
    formats: tuple[str, ...] = ("hudi",)
    #: The services the run attaches to instead of starting them.
    attachments: Attachments = field(default_factory=Attachments)

    def release(self, default: str) -> str:
        """The engine's release in the run (`default`: its own default)."""
        return self.releases.engine(self.engine, default)

    def reads_with(self, table_format: str) -> str:
        """The release of `table_format`'s library the engine reads with."""
        return self.releases.reads_with(self.engine, table_format)


@dataclass(frozen=True)
class Keys:
    """Keys an engine takes, as its jars define them, and what they are (`a session property
    of Trino 483`): the words an error uses. A name holding `%s` (Hudi's
    `hoodie.%s.consume.mode`) stands for every name with one part there."""

    names: frozenset[str]
    what: str

    def __contains__(self, key: object) -> bool:
        return key in self.names or any(p.fullmatch(str(key)) for p in self._patterns())

    def closest(self, key: str) -> str | None:
        """The known name most like `key`, if one is like it at all."""
        plain = [name for name in self.names if "%s" not in name]
        found = difflib.get_close_matches(key, plain, n=1, cutoff=0.75)
        return found[0] if found else None

    def _patterns(self) -> list[re.Pattern[str]]:
        return [
            re.compile(re.escape(name).replace("%s", r"[^.]+"))
            for name in self.names
            if "%s" in name
        ]


def unknown_key(engine: str, key: str, keys: Keys, takes: str, shown: str = "") -> SettingError:
    """The error for `key`, which is not in `keys`: the closest known key (written as
    `shown` + the name, for a name that `key` carries a prefix of), else what `engine` takes."""
    closest = keys.closest(key.removeprefix(shown))
    hint = f"did you mean {shown}{closest}?" if closest else takes
    return SettingError(key, f"unknown key {key} for {engine}: not {keys.what} ({hint})")


@functools.cache
def hudi_keys(bundle: MavenArtifact, release: str) -> Keys:
    """The `hoodie.*` options Hudi `release` defines, from one of its bundles."""
    names = jar_literals(fetch(bundle), "hoodie.")
    return Keys(
        frozenset(n for n in names if _HUDI_KEY.fullmatch(n)), f"an option of Hudi {release}"
    )


#: A Hudi option: dotted words (a literal of the bundle that is not a message or a prefix).
_HUDI_KEY = re.compile(r"hoodie(\.(%s|[A-Za-z0-9_-]+))+")
#: A session property's name (a literal of its class that is not a message).
_PROPERTY = re.compile(r"[a-z][a-z0-9_]*")


@functools.cache
def session_properties(jar: MavenArtifact, class_name: str, what: str) -> Keys:
    """The session properties one class of a Trino-like coordinator defines."""
    names = jar_literals(fetch(jar), classes=(class_name,))
    return Keys(frozenset(n for n in names if _PROPERTY.fullmatch(n)), what)


#: The setting that picks the catalog a Trino-like reader queries in (not a session property).
CATALOG = "catalog"


def check_session_settings(
    engine: str,
    settings: dict[str, str],
    system: Callable[[], Keys],
    catalogs: dict[str, Callable[[], Keys]],
) -> None:
    """Every setting of a Trino-like reader is `catalog=<one of catalogs>`, a system session
    property (`system()`), or `<catalog>.<property>` of one of `catalogs` (each catalog's
    properties read only when a key names it); else a `SettingError`."""
    known = ", ".join(sorted(catalogs))
    takes = (
        f"{engine} takes system session properties, <catalog>.<property> for the catalogs "
        f"{known}, and catalog=<catalog>"
    )
    for key, value in settings.items():
        catalog, dot, name = key.partition(".")
        if key == CATALOG:
            if value not in catalogs:
                raise SettingError(
                    key, f"{value} is not a catalog of the run's {engine} (its catalogs: {known})"
                )
        elif not dot:
            if key not in system():
                raise unknown_key(engine, key, system(), takes)
        elif catalog not in catalogs:
            raise SettingError(
                key,
                f"unknown key {key} for {engine}: {catalog} is not a catalog of the run's "
                f"{engine} (its catalogs: {known}; a key without a catalog is a system session "
                "property)",
            )
        elif name not in catalogs[catalog]():
            raise unknown_key(engine, key, catalogs[catalog](), takes, shown=f"{catalog}.")
