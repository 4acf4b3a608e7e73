"""DuckDB as a reader: `delta_scan`, its Delta extension (built on delta-kernel-rs), from PyPI
`duckdb` and `duckdb-extension-delta`.

DuckDB fetches its extensions from its own server when a query needs one; a run sends nothing off
this machine, so the extension comes from a PyPI wheel that carries its binary for exactly one
DuckDB release (`duckdb-extension-delta`, packaged by a third party from DuckDB's signed builds:
docs/research/delta.md), pinned with DuckDB, its checksum checked before the first read, and
loaded by path with DuckDB's automatic installing and loading turned off. A table is read by its
location, with no catalog; time travel is `delta_scan(path, version => N)` (DuckDB has no time
travel by timestamp on Delta tables, and no read of the change data feed). A shape is SQL around
the scan. DuckDB reads with no settings of its own, so it has one variant.
"""

from __future__ import annotations

import hashlib

from lakecompat.engines.errors import QueryError
from lakecompat.engines.infra.artifacts import ProvisioningError
from lakecompat.engines.infra.python_env import provision
from lakecompat.engines.library.reader import LibraryReader
from lakecompat.engines.reading import reading
from lakecompat.engines.shape import Dialect, Shape, shape_sql
from lakecompat.engines.table import TableRef, query_types_except, reference_instant

#: DuckDB's SQL: names in double quotes, standard literals.
_DUCKDB = Dialect(quote_char='"', backslash_escapes=False)
#: The Delta extension's wheel, and the checksum of the binary it carries for each DuckDB
#: release it is pinned to (checked before the first read: a different binary is refused).
EXTENSION_PACKAGE = "duckdb-extension-delta"
EXTENSION_SHA256 = {
    "1.5.5": "24b10f221b799a82f2aec588102702540fb79b34ba4be7f47328333a02fd4e1e",
}
_OPEN = """\
from pathlib import Path

import duckdb
import duckdb_extension_delta

# DuckDB would fetch its Delta extension from its server: load the one the wheel carries instead.
extension = Path(duckdb_extension_delta.__file__).parent / "extensions" / {folder!r}
connection = duckdb.connect(
    config={{"autoinstall_known_extensions": False, "autoload_known_extensions": False}}
)
connection.load_extension(str(extension / "delta.duckdb_extension"))
"""
_READ = "answer = connection.sql({sql!r}).to_arrow_table()\n"


class DuckDbEngine(LibraryReader):
    """DuckDB with its Delta extension, reading each table from its location."""

    name = "duckdb"
    display_name = "DuckDB"
    trackers = ("duckdb/duckdb-delta", "duckdb/duckdb")
    distribution = "duckdb"
    default_release = "1.5.5"
    release_env = "LAKECOMPAT_DUCKDB_VERSION"
    release_help = (
        "the DuckDB release (PyPI duckdb, with the duckdb-extension-delta wheel of the same "
        "release)"
    )
    imports = ("duckdb", "duckdb_extension_delta", "pyarrow")
    takes_settings = False
    readings = (
        reading(
            "delta",
            query_types=query_types_except("delta", "time_travel_timestamp", "changelog"),
            unsupported={
                "time_travel_timestamp": "DuckDB's delta_scan chooses a version by its number "
                "only (`version =>`): 'Delta tables only support at_clause with unit 'version''",
                "changelog": "DuckDB's delta_scan reads one version of a table: it has no read of "
                "the change data feed",
            },
        ),
    )

    @classmethod
    def package_list(cls, release: str) -> tuple[str, ...]:
        """DuckDB and the Delta extension's wheel of the same release."""
        return (f"duckdb=={release}", f"{EXTENSION_PACKAGE}=={release}", "pyarrow")

    def start(self) -> None:
        """Check the extension's binary against its checksum, then start the worker."""
        expected = EXTENSION_SHA256.get(self.release)
        if expected is None:
            raise ProvisioningError(
                f"DuckDB {self.release}: lakecompat knows no checksum of {EXTENSION_PACKAGE} "
                f"{self.release}'s binary (known: {', '.join(EXTENSION_SHA256)}); add it to "
                "EXTENSION_SHA256 in lakecompat/engines/library/duckdb.py once checked"
            )
        python = provision(self.name, self.packages)
        binary = python.parent.parent.joinpath("lib").glob(
            f"python*/site-packages/duckdb_extension_delta/extensions/v{self.release}/"
            "delta.duckdb_extension"
        )
        found = next(iter(binary), None)
        if found is None:
            raise ProvisioningError(
                f"{EXTENSION_PACKAGE} {self.release} holds no delta.duckdb_extension for DuckDB "
                f"{self.release} (looked under {python.parent.parent})"
            )
        digest = hashlib.sha256(found.read_bytes()).hexdigest()
        if digest != expected:
            raise ProvisioningError(
                f"{found}: its SHA-256 is {digest}, not the {expected} lakecompat checked; "
                "the wheel changed: check it before trusting it"
            )
        super().start()

    def shaped_sql(self, table: TableRef, query_type: str, shape: Shape) -> str:
        """The read's code: DuckDB with the wheel's extension, then the scan in SQL (time
        travel: at the reference version), the shape's columns and filter around it."""
        path = self.path_of(table)
        if table.format == "parquet":
            source = f"read_parquet('{path}/*.parquet')"
        elif table.format == "delta":
            version = ""
            if query_type == "time_travel":
                version = f", version => {int(reference_instant(table)[1])}"
            source = f"delta_scan('{path}'{version})"
        else:
            raise QueryError(f"DuckDB reads no {table.format} tables here")
        sql = shape_sql(f"SELECT * FROM {source}", shape, _DUCKDB)
        return _OPEN.format(folder=f"v{self.release}") + _READ.format(sql=sql)
