"""The releases a run writes and reads with, chosen once before it starts (`Releases`):
from the command line, the environment variables that name them (each format's
`TableFormat.release_env`, each engine's `Engine.release_env`), a version point, or the
record of the run a resume completes. Whether each release exists is asked here too, before
anything is fetched. Nothing here or after changes the process environment: the value is
handed to the writers and the engines."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from lakecompat.engines import carried_field, engine_class, known_engines
from lakecompat.engines.formats import FORMATS, ORIGINAL, format_named
from lakecompat.engines.infra.artifacts import MavenArtifact, ProvisioningError, check_release
from lakecompat.engines.releases import Releases
from lakecompat.harness.run.options import RunOptions


def _variables() -> list[tuple[str, str, str]]:
    """(kind, name, variable) of every release an environment variable can name: each
    format's writer release (`format`) and each engine's (`engine`)."""
    found = [("format", f.name, f.release_env) for f in FORMATS.values() if f.release_env]
    for name in known_engines():
        variable = engine_class(name).release_env
        if variable:
            found.append(("engine", name, variable))
    return found


def environment_releases(environ: Mapping[str, str] | None = None) -> Releases:
    """The releases the environment variables of `environ` (default: this process's) name:
    each format's and each engine's whose variable is set."""
    environ = os.environ if environ is None else environ
    named = [(kind, name, environ[var]) for kind, name, var in _variables() if environ.get(var)]
    formats = {name: release for kind, name, release in named if kind == "format"}
    engines = {name: release for kind, name, release in named if kind == "engine"}
    return Releases(formats, engines)


def environment_sources(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """How the environment names each release it names, by field (`hudi`, `trino`):
    `LAKECOMPAT_TRINO_VERSION=476`, for messages."""
    environ = os.environ if environ is None else environ
    return {
        name.replace("-", "_"): f"{variable}={environ[variable]}"
        for _, name, variable in _variables()
        if environ.get(variable)
    }


def differences(recorded: Releases, here: Releases) -> list[str]:
    """`VARIABLE=release (here: other)` for each release of `recorded` that differs from what
    `here` (this shell's choice) names, for the user to see which releases a resume keeps."""
    found = []
    for name, release in recorded.formats.items():
        table_format = format_named(name)
        if here.format(name) != release:
            found.append(f"{table_format.release_env}={release} (here: {here.format(name)})")
    for name, release in recorded.engines.items():
        cls = engine_class(name)
        now = here.engine(name, cls.default_release)
        if now != release:
            found.append(f"{cls.release_env}={release} (here: {now or 'unset'})")
    return found


def check_releases(options: RunOptions, named: Mapping[str, str] | None = None) -> None:
    """Every release the run names exists, before any engine starts or any run folder is made:
    a `ProvisioningError` of one sentence naming the option (or variable) and the releases.

    `named`: how each release was chosen, by field (`{"hudi": "--hudi-version 9.9.9"}`, a
    version point's `{"trino": "version point new: trino 999"}`); the fields are a version
    point's (each format's name and version option, `<engine>_<format>`, an engine's name
    with `_` for `-`). A release named nowhere there is said as its field and release."""
    said = dict(named or {})
    releases = options.releases
    for name, release in releases.formats.items():
        table_format = format_named(name)
        if name in options.formats or name == ORIGINAL:
            given = said.get(name, f"{name} {release}")
            if table_format.release_artifact is not None:
                artifact = _release_artifact(table_format.release_artifact, release, given)
                check_release(artifact, given, table_format.title)
    for engine, formats in releases.carried.items():
        for table_format, release in formats.items():
            field = carried_field(engine, table_format)
            given = said.get(field, f"{field} {release}")
            artifact = format_named(table_format).release_artifact
            if artifact is not None:
                found = _release_artifact(artifact, release, given)
                check_release(found, given, format_named(table_format).title)
    for name, version in options.versions.items():
        table_format = format_named(name)
        if version and table_format.check_version is not None:
            option = table_format.version_option
            given = said.get(option, f"--{option.replace('_', '-')} {version}")
            table_format.check_version(releases.format(name), version, given)
    for name in options.engines:
        release = releases.engines.get(name)
        if release:
            field = name.replace("-", "_")
            engine_class(name).check_release(release, said.get(field, f"{field} {release}"))


def _release_artifact(
    artifact: Callable[[str], MavenArtifact], release: str, given: str
) -> MavenArtifact:
    """`artifact(release)`, its refusal (a release line lakecompat cannot run, such as a
    Delta release without a known Spark) said with how the release was `given`."""
    try:
        return artifact(release)
    except ProvisioningError as exc:
        raise ProvisioningError(f"{given}: {exc}") from None
