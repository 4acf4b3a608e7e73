"""Checks a run makes before anything starts."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from lakecompat.harness.cli import main
from lakecompat.harness.run import folder as run_folder


def test_a_nearly_full_disk_stops_the_run_before_anything_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = shutil.disk_usage

    def nearly_full(path: Any) -> Any:
        usage = real(path)
        return usage._replace(free=512 * 1024**2)

    monkeypatch.setattr(run_folder.shutil, "disk_usage", nearly_full)
    reports = tmp_path / "reports"
    assert main(["run", "--engines", "spark", "--reports", str(reports)]) == 2
    error = capsys.readouterr().err
    assert f"{tmp_path}: only 0.5 GiB free; a run needs at least 2 GiB" in error
    assert not reports.exists()


@pytest.mark.parametrize("value", ["-1", "soon", "100000"])
def test_timeouts_must_be_seconds(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["run", "--query-timeout", value])
    assert caught.value.code == 2
    assert capsys.readouterr().err == (
        f"lakecompat run: --query-timeout {value}: expected a number of seconds from 0 to 86400\n"
    )
