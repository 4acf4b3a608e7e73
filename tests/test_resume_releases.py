"""A resumed run reads with the releases its run.json records, not those the shell selects."""

from __future__ import annotations

import os

import pytest

from engines.infra.iceberg_jars import ICEBERG_VERSION_ENV
from harness.run.releases import differences, in_force, recorded_releases

RUN_JSON = {
    "engines": {"spark": "3.5.9", "hive": "4.0.1", "trino": "476", "pyiceberg": "0.11.1"},
    "writers": {"iceberg": {"iceberg": "1.12.0", "format_version": "2", "spark": "3.5.9"}},
}


def test_each_engine_a_variable_selects_and_the_iceberg_runtime_are_recorded() -> None:
    assert recorded_releases(RUN_JSON) == {
        "LAKECOMPAT_HIVE_VERSION": "4.0.1",
        "LAKECOMPAT_TRINO_VERSION": "476",
        "LAKECOMPAT_PYICEBERG_VERSION": "0.11.1",
        ICEBERG_VERSION_ENV: "1.12.0",
    }


def test_an_attached_engine_keeps_the_release_of_its_service() -> None:
    attached = {**RUN_JSON, "attached": {"trino": "http://127.0.0.1:8080", "name": "ci"}}
    assert "LAKECOMPAT_TRINO_VERSION" not in recorded_releases(attached)
    assert "LAKECOMPAT_HIVE_VERSION" in recorded_releases(attached)


def test_a_run_from_before_iceberg_or_of_an_unknown_engine_records_what_it_can() -> None:
    assert recorded_releases({"engines": {"hudi-rs": "0.5.0", "gone": "1.0"}}) == {
        "LAKECOMPAT_HUDI_RS_VERSION": "0.5.0"
    }
    assert recorded_releases({}) == {}


def test_the_releases_are_in_force_inside_the_block_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LAKECOMPAT_HIVE_VERSION", "3.1.3")
    monkeypatch.delenv("LAKECOMPAT_PYICEBERG_VERSION", raising=False)
    releases = recorded_releases(RUN_JSON)
    changed = differences(releases)
    assert "LAKECOMPAT_HIVE_VERSION=4.0.1 (here: 3.1.3)" in changed
    assert "LAKECOMPAT_PYICEBERG_VERSION=0.11.1 (here: 0.12.0)" in changed
    with in_force(releases):
        assert os.environ["LAKECOMPAT_HIVE_VERSION"] == "4.0.1"
        assert os.environ["LAKECOMPAT_PYICEBERG_VERSION"] == "0.11.1"
        assert differences(releases) == []
    assert os.environ["LAKECOMPAT_HIVE_VERSION"] == "3.1.3"
    assert "LAKECOMPAT_PYICEBERG_VERSION" not in os.environ
