"""Readers that are Python libraries (hudi-rs, Daft), each read done in a process of its own.

The library is installed in an environment of its own (`engines/python_env.py`) and runs in
`engines/library/worker.py`, a small local server started like every other service: a read
that hangs is ended by the query timeout killing that process, and a crash of the library
costs the cell, not the run. An engine's "SQL" is the Python code of its read, shown in the
evidence as a user would write it; the worker runs it with the variant's settings bound to
`settings`.
"""

from __future__ import annotations

import ast
import json
import re
import urllib.error
import urllib.request
from abc import abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

import pyarrow as pa

from lakecompat.engines.answers import nested_as_json
from lakecompat.engines.base import Engine, Variant
from lakecompat.engines.context import RunContext
from lakecompat.engines.errors import QueryError, log_tail
from lakecompat.engines.infra.artifacts import ProvisioningError
from lakecompat.engines.infra.containers.service import engine_service, where_services_ran
from lakecompat.engines.infra.ports import service_port
from lakecompat.engines.infra.python_env import installed, provision, released_versions
from lakecompat.engines.infra.supervisor import HttpReady, Service
from lakecompat.engines.releases import Releases
from lakecompat.engines.shape import ALL, Predicate, Shape
from lakecompat.engines.table import TableRef

WORKER = Path(__file__).with_name("worker.py")
#: How `reader.py` of a reproduction ends: the answer shown.
_PRINT = "print(answer)\n"
_PANIC = re.compile(r"panicked at (\S+?):?$", re.MULTILINE)
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
#: The names of UTC a library may give a timestamp's zone (DuckDB says `Etc/UTC`).
_UTC_NAMES = ("Etc/UTC", "Etc/Universal", "Etc/Zulu", "Universal", "Zulu")
#: The libraries send no usage data anywhere (Daft reports every import and query unless told
#: not to): a run sends no traffic off this machine.
NO_TELEMETRY = {"DO_NOT_TRACK": "1", "SCARF_NO_ANALYTICS": "1", "DAFT_ANALYTICS_ENABLED": "0"}
#: The types an answer is compared in: the library's large and view variants are the same
#: values (DataFusion answers in string and binary views).
_PLAIN = {
    pa.large_string(): pa.string(),
    pa.large_binary(): pa.binary(),
    pa.string_view(): pa.string(),
    pa.binary_view(): pa.binary(),
}


class LibraryReader(Engine):
    """A reader that is a Python library; subclasses say which packages and write the reads."""

    state_folders = ("readers",)
    scratch_folders = ("readers",)
    #: The PyPI distribution whose version is the engine's version.
    distribution: ClassVar[str]
    #: Its release unless the run names another (`release_env`, or a version point's
    #: `<name>` field: `pyiceberg: 0.11.0`): `default_release`.
    release_env: ClassVar[str]
    #: Other packages the reads need (pip requirement strings).
    extra_packages: ClassVar[tuple[str, ...]] = ()
    #: Modules the worker imports before it reports ready: a broken install fails the start.
    imports: ClassVar[tuple[str, ...]]
    #: Errors whose text depends on timing (which of the library's concurrent reads came
    #: first), each with the stable first line that replaces it; the text follows as evidence.
    unstable_errors: ClassVar[tuple[tuple[re.Pattern[str], str], ...]] = ()

    def __init__(
        self,
        context: RunContext,
        carried: Mapping[str, str] | None = None,
        label: str | None = None,
    ) -> None:
        super().__init__(context, carried, label)
        self._service: Service | None = None
        self._port = 0

    @classmethod
    def package_list(cls, release: str) -> tuple[str, ...]:
        """What the engine's environment holds at the library's release `release`."""
        return (f"{cls.distribution}=={release}", *cls.extra_packages)

    @classmethod
    def check_release(cls, release: str, setting: str) -> None:
        """`ProvisioningError` naming `setting` when pip has no release `release` of the
        library for this Python (an environment installed already needs no asking)."""
        if installed(cls.name, (f"{cls.distribution}=={release}", *cls.extra_packages)):
            return
        released = released_versions(cls.distribution)
        if release not in released:
            raise ProvisioningError(
                f"{setting}: pip has no {cls.distribution} release {release} for this Python; "
                f"the latest releases are: {', '.join(released[:8]) or 'none'}"
            )

    @classmethod
    def provision(cls, releases: Releases) -> None:
        """Install the library's environment (once per release), so that a release pip cannot
        install stops a qualification before its first point runs."""
        provision(cls.name, cls.package_list(releases.engine(cls.name, cls.default_release)))

    @property
    def version(self) -> str:
        return self.release

    @property
    def java(self) -> str:
        return "none: a Python library, no JVM"

    def runs_in(self, table_format: str = "") -> str:
        """Where the worker ran: `process`, or its container with `--containers`."""
        return where_services_ran((self.label,))

    @property
    def packages(self) -> tuple[str, ...]:
        """What the engine's environment holds."""
        return self.package_list(self.release)

    def start(self) -> None:
        python = provision(self.name, self.packages)
        self._port = service_port()
        scratch = self.context.run_dir / "readers" / self.label
        scratch.mkdir(parents=True, exist_ok=True)
        # -I: the worker's folder (this one, with `daft.py`) must not shadow the library.
        argv = [str(python), "-I", str(WORKER), "--port", str(self._port)]
        argv += ["--imports", ",".join(self.imports), "--scratch", str(scratch)]
        self._service = engine_service(
            self.label,
            argv,
            self.context.log_dir,
            wait=HttpReady(f"http://127.0.0.1:{self._port}/ping"),
            timeout_s=120,
            env=NO_TELEMETRY,
            hint=f"the worker imports {', '.join(self.imports)} from {python.parent.parent}",
        )
        self._service.start()

    def stop(self) -> None:
        if self._service is not None:
            self._service.stop()
            self._service = None

    def kill(self) -> None:
        if self._service is not None:
            self._service.kill()

    def alive(self) -> bool:
        return self._service is not None and self._service.running

    def query(self, sql: str, variant: Variant) -> pa.Table:
        """Run the read's code in the worker; its exception becomes a QueryError."""
        body = json.dumps({"code": sql, "settings": variant.settings}).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{self._port}/read",
            data=body,
            headers={"Content-Type": "application/json"},
        )
        try:
            with _NO_PROXY.open(request) as response:
                answer = pa.ipc.open_stream(response.read()).read_all()
        except urllib.error.HTTPError as exc:
            if exc.code != 422:
                raise
            failure = json.loads(exc.read())
            error = failure["error"]
            if error.startswith("PanicException"):
                # Rust prints the panic's site, then its backtrace, to the worker's log.
                error += _panic_site(log_tail(self.log_path, 400))
            stable = next((line for p, line in self.unstable_errors if p.match(error)), None)
            if stable is not None:
                error = f"{stable}\n{error}"
            raise QueryError(error, failure["trace"]) from None
        return comparable(answer)

    def responsive(self) -> bool:
        """Whether the worker still answers (its process may be alive but exiting)."""
        if not self.alive():
            return False
        try:
            with _NO_PROXY.open(f"http://127.0.0.1:{self._port}/ping", timeout=5) as response:
                return response.status == 200
        except OSError:
            return False

    @property
    def log_path(self) -> Path:
        """The worker's log (the supervisor names it after the engine's label)."""
        return self.context.log_dir / f"{self.label}.log"

    def evidence_sql(
        self, table: TableRef, query_type: str, variant: Variant, shape: Shape = ALL
    ) -> str:
        """The read's Python code as it ran, its `settings` (the variant's) spelled out first."""
        header = f"# {self.name} {self.version}: pip install {' '.join(self.packages)}\n"
        if self.takes_settings:
            header += f"settings = {dict(variant.settings)!r}\n"
        return header + self.shaped_sql(table, query_type, shape)

    def reproduction(
        self, table: TableRef, query_type: str, variant: Variant, shape: Shape = ALL
    ) -> dict[str, str]:
        """`reader.py`: the read's Python code as it ran (its first line names the packages
        to install, its `settings` are the variant's), printing the answer."""
        code = self.evidence_sql(table, query_type, variant, shape)
        return {"reader.py": f"{code}{_PRINT}"}

    def reproduction_query(self, files: dict[str, str]) -> tuple[str, Variant]:
        """The code of `reader.py` and its `settings`, as the worker runs them."""
        lines = files["reader.py"].removesuffix(_PRINT).splitlines(keepends=True)
        settings: dict[str, str] = {}
        code = []
        for line in lines:
            if line.startswith("settings = "):
                settings = ast.literal_eval(line.removeprefix("settings = "))
            elif not line.startswith(f"# {self.name} "):
                code.append(line)
        return "".join(code), Variant("reproduction", settings)

    def read_sql(self, table: TableRef, query_type: str) -> str:
        """The read's Python code: `shaped_sql` with no shape."""
        return self.shaped_sql(table, query_type, ALL)

    @classmethod
    def shape_unsupported(cls, shape: Shape) -> str | None:
        """None: a library reader writes its shaped reads itself (`shaped_sql`); one whose
        library lacks a filter says so here."""
        return None

    @abstractmethod
    def shaped_sql(self, table: TableRef, query_type: str, shape: Shape) -> str:
        """The read's Python code, the shape's filter and columns in the library's terms."""

    @staticmethod
    def path_of(table: TableRef) -> str:
        """The table's location as the read's code names it."""
        return str(table.path)


def filter_expression(predicate: Predicate, column: str, between: str) -> str:
    """A shape's predicate as a dataframe library's expression on `column` (the column's own
    expression, e.g. `pl.col('price')`): `.is_null()`, `== value`, or the library's
    `between` method with both ends."""
    if predicate.op == "is null":
        return f"{column}.is_null()"
    if predicate.op == "=":
        return f"{column} == {predicate.values[0]!r}"
    low, high = predicate.values
    return f"{column}.{between}({low!r}, {high!r})"


def comparable(answer: pa.Table) -> pa.Table:
    """The answer in the types answers compare in: nested values as canonical JSON text,
    large and view strings and binaries as ordinary ones, dictionary columns decoded, UTC by
    one name."""
    fields = []
    for column_field in answer.schema:
        kind = column_field.type
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
        if pa.types.is_timestamp(kind) and kind.tz in _UTC_NAMES:
            kind = pa.timestamp(kind.unit, tz="UTC")  # one zone, several names (DuckDB's)
        fields.append(column_field.with_type(_PLAIN.get(kind, kind)))
    return nested_as_json(answer.cast(pa.schema(fields)))


def _panic_site(log: str) -> str:
    """Where in the library's Rust code the last panic happened, from the worker's log."""
    sites = _PANIC.findall(log)
    return f" (Rust panic at {sites[-1]})" if sites else ""
