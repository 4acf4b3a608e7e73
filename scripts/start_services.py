"""Start engines on 127.0.0.1 the way an operator runs them, for `lakecompat run` to attach to.

    .venv/bin/python scripts/start_services.py --home /tmp/services

starts a Spark standalone master and worker, a Hive Metastore, a HiveServer2 on it (with the
writer's Hudi bundle) and a Trino with `hudi` and `hive` catalogs on it, from the artifacts
lakecompat provisions. It prints the options that attach a run to them, writes them to
`<home>/attach.json`, and keeps the services running until it is interrupted (Ctrl-C or
SIGTERM), then stops them. lakecompat's integration tests start it in a session of its own,
so that the services are not part of the run's process tree.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lakecompat.engines.context import RunContext
from lakecompat.engines.hive.reader import HiveEngine
from lakecompat.engines.infra.artifacts import ProvisioningError
from lakecompat.engines.infra.jdk import find_jdk
from lakecompat.engines.infra.ports import service_port
from lakecompat.engines.infra.supervisor import HttpReady, Service, ServiceError
from lakecompat.engines.spark.runtime import SPARK_JAVA_VERSIONS, SparkRuntime
from lakecompat.engines.trino.reader import TrinoEngine
from lakecompat.harness.run.releases import environment_releases

SERVICES = ("spark", "hive", "trino")


def start_spark(home: Path) -> dict[str, str]:
    """A standalone master and one worker (2 cores, 3 GiB) from PySpark's `spark-class`: the
    master's address, and its status page (`spark_master_ui`)."""
    import pyspark

    spark_class = Path(pyspark.__file__).parent / "bin" / "spark-class"
    env = {
        "JAVA_HOME": str(find_jdk(SPARK_JAVA_VERSIONS, "Spark 3.5").home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_WORKER_DIR": str(home / "spark-worker"),
        "PYSPARK_PYTHON": sys.executable,
    }
    port, ui = service_port(), service_port()  # two different ports
    master = f"spark://127.0.0.1:{port}"
    deploy = "org.apache.spark.deploy"
    Service(
        "spark-master",
        [
            *(str(spark_class), f"{deploy}.master.Master", "--host", "127.0.0.1"),
            *("--port", str(port), "--webui-port", str(ui)),
        ],
        home / "logs",
        wait=HttpReady(f"http://127.0.0.1:{ui}/json/"),
        timeout_s=120,
        env=env,
        cwd=home,
    ).start()
    Service(
        "spark-worker",
        [
            *(str(spark_class), f"{deploy}.worker.Worker", "--host", "127.0.0.1"),
            *("--cores", "2", "--memory", "3g", "--webui-port", str(service_port()), master),
        ],
        home / "logs",
        wait=HttpReady(f"http://127.0.0.1:{ui}/json/", _worker_alive),
        timeout_s=120,
        env=env,
        cwd=home,
    ).start()
    return {"spark_master": master, "spark_master_ui": f"http://127.0.0.1:{ui}/json/"}


def _worker_alive(status: int, body: bytes) -> bool:
    """The master's status page lists a live worker."""
    if status != 200:
        return False
    return any(worker.get("state") == "ALIVE" for worker in json.loads(body).get("workers", []))


def start_catalog(home: Path, services: set[str]) -> dict[str, str]:
    """A Metastore, and a HiveServer2 and a Trino on it, as lakecompat itself starts them."""
    releases = environment_releases()  # as `lakecompat run` chooses them
    context = RunContext(home, SparkRuntime(home / "logs", releases=releases), releases=releases)
    found = {"metastore": context.metastore().uri}
    if "hive" in services:
        hive = HiveEngine(context)
        hive.start()
        found["hiveserver2"] = f"127.0.0.1:{hive._port}"
        found["hiveserver2_log"] = str(hive.log_path)
    if "trino" in services:
        trino = TrinoEngine(context)
        trino.start()
        found["trino"] = f"http://127.0.0.1:{trino._server.port}"  # type: ignore[union-attr]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--home", type=Path, default=Path("services"), help="folder for logs and data"
    )
    parser.add_argument(
        "--services",
        default=",".join(SERVICES),
        help=f"comma-separated: {', '.join(SERVICES)} (default: all; a Metastore comes with "
        "hive and trino)",
    )
    args = parser.parse_args(argv)
    services = set(filter(None, args.services.split(",")))
    unknown = services - set(SERVICES)
    if unknown:
        parser.error(f"unknown service {sorted(unknown)[0]!r}; known: {', '.join(SERVICES)}")
    home = args.home.resolve()
    home.mkdir(parents=True, exist_ok=True)
    found: dict[str, str] = {}
    try:
        if "spark" in services:
            found.update(start_spark(home))
        if services & {"hive", "trino"}:
            found.update(start_catalog(home, services))
    except (ServiceError, ProvisioningError) as exc:
        # What started is stopped when the script exits (the supervisor's exit handler).
        print(f"start_services.py: the services did not start: {exc}", file=sys.stderr)
        return 1
    warehouse = home / "warehouse-shared"
    warehouse.mkdir(exist_ok=True)
    found["warehouse"] = str(warehouse)
    found["pid"] = str(os.getpid())
    (home / "attach.json").write_text(json.dumps(found, indent=1) + "\n")
    flags = " ".join(
        f"--{key.replace('_', '-')} {value}"
        for key, value in found.items()
        if key not in ("pid", "spark_master_ui")
    )
    print(f"running; attach a run with:\n  lakecompat run {flags}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
