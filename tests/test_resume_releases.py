"""A resumed run reads with the releases its run.json records, not those the shell names;
the releases are a value handed down, never put in the process environment."""

from __future__ import annotations

import os

import pytest

from lakecompat.engines.infra.iceberg_jars import ICEBERG_VERSION_ENV
from lakecompat.engines.releases import Releases
from lakecompat.harness.run.folder import recorded_releases
from lakecompat.harness.run.releases import differences, environment_releases

RUN_JSON = {
    "engines": {"spark": "3.5.9", "hive": "4.0.1", "trino": "476", "pyiceberg": "0.11.1"},
    "writer": {"spark": "3.5.9", "hudi": "1.1.1"},
    "writers": {"iceberg": {"iceberg": "1.12.0", "format_version": "2", "spark": "3.5.9"}},
    "hive_hudi": "0.15.0",
}


def test_each_engine_whose_release_can_be_chosen_and_each_writer_release_are_recorded() -> None:
    releases = recorded_releases(RUN_JSON)
    assert releases.engines == {"hive": "4.0.1", "trino": "476", "pyiceberg": "0.11.1"}
    assert releases.formats == {"hudi": "1.1.1", "iceberg": "1.12.0"}
    assert releases.carried_by("hive") == {"hudi": "0.15.0"}
    assert releases.reads_with("hive", "hudi") == "0.15.0"
    assert releases.reads_with("spark", "hudi") == "1.1.1"


def test_an_attached_engine_keeps_the_release_of_its_service() -> None:
    attached = {**RUN_JSON, "attached": {"trino": "http://127.0.0.1:8080", "name": "ci"}}
    assert "trino" not in recorded_releases(attached).engines
    assert "hive" in recorded_releases(attached).engines


def test_a_run_from_before_iceberg_or_of_an_unknown_engine_records_what_it_can() -> None:
    releases = recorded_releases({"engines": {"hudi-rs": "0.5.0", "gone": "1.0"}})
    assert releases == Releases({}, {"hudi-rs": "0.5.0"}, {})
    assert recorded_releases({}) == Releases()


def test_the_environment_is_read_once_and_never_written(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAKECOMPAT_HIVE_VERSION", "3.1.3")
    monkeypatch.delenv("LAKECOMPAT_PYICEBERG_VERSION", raising=False)
    monkeypatch.delenv(ICEBERG_VERSION_ENV, raising=False)
    here = environment_releases()
    assert here.engines.get("hive") == "3.1.3"
    recorded = recorded_releases(RUN_JSON)
    changed = differences(recorded, here)
    assert "LAKECOMPAT_HIVE_VERSION=4.0.1 (here: 3.1.3)" in changed
    assert "LAKECOMPAT_PYICEBERG_VERSION=0.11.1 (here: 0.12.0)" in changed
    assert f"{ICEBERG_VERSION_ENV}=1.12.0 (here: 1.10.0)" in changed
    assert differences(recorded, recorded) == []
    assert os.environ["LAKECOMPAT_HIVE_VERSION"] == "3.1.3"
    assert "LAKECOMPAT_PYICEBERG_VERSION" not in os.environ


def test_releases_named_first_win_and_a_reader_carrying_the_writers_release_carries_none() -> None:
    flags = Releases({"hudi": "1.1.1"}, {}, {"spark": {"hudi": "1.1.1"}})
    chosen = flags.over(Releases({"hudi": "1.0.2", "iceberg": "1.12.0"}, {"trino": "476"}))
    assert chosen.formats == {"hudi": "1.1.1", "iceberg": "1.12.0"}
    assert chosen.engine("trino", "483") == "476"
    assert chosen.engine("hive", "3.1.3") == "3.1.3"
    assert chosen.carried_by("spark") == {}


def test_a_resumed_run_keeps_each_formats_version_option() -> None:
    from lakecompat.harness.run.folder import _version_options

    assert _version_options(RUN_JSON) == {"iceberg": "2"}
    six = {"writer": {"hudi": "1.2.0", "table_version": "6"}}  # a run from before `writers`
    assert _version_options(six) == {"hudi": "6"}
