"""`--set ENGINE:KEY=VALUE`: each setting checked before anything starts, and how a run says
which settings it read with.

An engine checks its own keys against the keys its jars define (`Engine.check_settings`); a
key only the running engine knows is taken unchecked, and the run says so: on its output, in
`run.json` (`unchecked_settings`) and in the reports' header, beside every setting given
(`harness.report.summary.settings_notes`).
"""

from __future__ import annotations

from lakecompat.engines import engine_class
from lakecompat.engines.settings import SettingError, SettingsScope
from lakecompat.harness.options import OptionError
from lakecompat.harness.run.options import RunOptions


def check_settings(options: RunOptions) -> dict[str, dict[str, str]]:
    """Every engine `--set` names is one the run reads with and that takes settings, and
    every key one that engine takes, where that can be known before it starts; else an
    `OptionError` naming the setting. The keys each engine takes unchecked, with why."""
    unchecked: dict[str, dict[str, str]] = {}
    for name, settings in options.engine_settings.items():
        first = next(iter(settings))
        if name not in options.engines:
            engines = ", ".join(options.engines)
            why = f"this run does not read with {name} (its engines: {engines})"
            raise OptionError("--set", setting_text(name, first, settings[first]), why)
        cls = engine_class(name)
        if not cls.takes_settings:
            why = f"{name} reads with no settings"
            raise OptionError("--set", setting_text(name, first, settings[first]), why)
        scope = SettingsScope(
            engine=name,
            releases=options.releases,
            formats=options.formats,
            attachments=options.attachments,
        )
        try:
            taken = cls.check_settings(settings, scope)
        except SettingError as exc:
            given = setting_text(name, exc.key, settings[exc.key])
            raise OptionError("--set", given, str(exc)) from None
        if taken:
            unchecked[name] = taken
    return unchecked


def setting_text(engine: str, key: str, value: str) -> str:
    """A setting as `--set` takes it: `ENGINE:KEY=VALUE`."""
    return f"{engine}:{key}={value}"


def unchecked_lines(options: RunOptions) -> list[str]:
    """One line for each setting the run takes unchecked, saying why, for its output."""
    return [
        f"--set {setting_text(engine, key, options.engine_settings[engine][key])}: not checked "
        f"before the run ({why}); a key {engine} does not know may be ignored"
        for engine, keys in options.unchecked_settings.items()
        for key, why in keys.items()
    ]
