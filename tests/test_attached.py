"""Attaching engines a user already runs: the options are checked before anything starts, and
what a run creates on shared services carries its id."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from support import load_script

from lakecompat.engines.attached import (
    AttachError,
    Attachments,
    check_reachable,
    database_name,
    host_port,
    run_name,
    trino_address,
    warehouse_folder,
)
from lakecompat.harness.cli import main

ENGINES = ("spark", "hive", "trino")


def test_addresses_are_parsed() -> None:
    assert host_port("--hiveserver2", "127.0.0.1:10000") == ("127.0.0.1", 10000)
    assert host_port("--metastore", "thrift://hms.example:9083", scheme="thrift") == (
        "hms.example",
        9083,
    )
    assert trino_address("http://127.0.0.1:8080") == ("http", "127.0.0.1", 8080)
    assert trino_address("https://trino:8443/") == ("https", "trino", 8443)
    assert trino_address("127.0.0.1:8080") == ("http", "127.0.0.1", 8080)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: host_port("--metastore", "127.0.0.1:9083", scheme="thrift"), "thrift://HOST"),
        (lambda: host_port("--hiveserver2", "localhost"), "--hiveserver2 localhost: expected"),
        (lambda: host_port("--hiveserver2", "h:99999"), "expected HOST:PORT"),
        (lambda: trino_address("ftp://t:1"), "--trino ftp://t:1: expected http"),
        (lambda: warehouse_folder("hdfs://nn:8020/w"), "cannot read hdfs: locations"),
    ],
)
def test_bad_addresses_name_the_option(call: object, message: str) -> None:
    with pytest.raises(AttachError, match=message.replace("?", r"\?")):
        call()  # type: ignore[operator]


def test_warehouse_is_a_local_folder(tmp_path: Path) -> None:
    assert warehouse_folder(tmp_path.as_uri()) == tmp_path.resolve()
    assert warehouse_folder(str(tmp_path / "new")) == (tmp_path / "new").resolve()
    file = tmp_path / "file"
    file.write_text("x")
    with pytest.raises(AttachError, match="exists and is not a folder"):
        warehouse_folder(str(file))


@pytest.mark.parametrize(
    ("attachments", "engines", "message"),
    [
        (Attachments(trino="http://t:1"), ENGINES, "--trino needs --metastore too"),
        (
            Attachments(trino="http://t:1", metastore="thrift://m:1"),
            ("spark", "hive"),
            "--trino attaches trino, which this run does not read with",
        ),
        (Attachments(hiveserver2="h:1"), ("spark",), "--hiveserver2 attaches hive"),
        (
            Attachments(hiveserver2_log=Path("/l")),
            ENGINES,
            "--hiveserver2-log names the log of an attached --hiveserver2",
        ),
        (Attachments(spark_master="127.0.0.1:7077"), ENGINES, "expected spark://HOST:PORT"),
    ],
)
def test_attachments_that_cannot_work_are_refused(
    attachments: Attachments, engines: tuple[str, ...], message: str
) -> None:
    with pytest.raises(AttachError, match=message):
        attachments.check(engines)


def test_a_record_gives_the_same_attachments_back() -> None:
    attached = Attachments(
        spark_master="spark://127.0.0.1:7077",
        trino="http://127.0.0.1:8080",
        hiveserver2="127.0.0.1:10000",
        hiveserver2_log=Path("/var/log/hs2.log"),
        metastore="thrift://127.0.0.1:9083",
        warehouse=Path("/w"),
    )
    assert Attachments.from_record(attached.record()) == attached
    assert attached.any and attached.catalog_shared
    assert not Attachments().any
    assert not Attachments(spark_master="spark://h:1").catalog_shared


def test_names_carry_the_run_id_and_differ_between_runs() -> None:
    first, second = run_name("20261124-200041"), run_name("20261124-200041")
    assert first.startswith("20261124-200041-") and first != second
    assert database_name(first) == "lakecompat_" + first.replace("-", "_")


def test_an_address_nothing_answers_on_is_refused_before_anything_starts() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(AttachError, match=f"--hiveserver2 127.0.0.1:{port}: nothing accepts"):
        check_reachable(Attachments(hiveserver2=f"127.0.0.1:{port}"))


def test_the_cli_refuses_bad_attachments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "--reports", str(tmp_path), "--trino", "http://127.0.0.1:1"]
    assert main(args) == 2
    assert "--trino needs --metastore too" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()
    resume = ["run", "--resume", str(tmp_path), "--metastore", "thrift://127.0.0.1:1"]
    assert main(resume) == 2
    assert "--resume attaches to the services the run was started with" in capsys.readouterr().err


def test_start_services_says_in_a_line_which_service_did_not_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from lakecompat.engines.infra.supervisor import ServiceTimeout

    script = load_script("start_services")

    def not_ready(home: Path) -> dict[str, str]:
        raise ServiceTimeout("service 'spark-master' not ready after 120 s")

    monkeypatch.setattr(script, "start_spark", not_ready)
    assert script.main(["--home", str(tmp_path), "--services", "spark"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("start_services.py: the services did not start: service 'spark-master'")
    assert "Traceback" not in err
    assert not (tmp_path / "attach.json").exists()  # nothing to attach to
