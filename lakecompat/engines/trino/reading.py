"""What Trino's reading part of a table format provides (`hudi.py`, `iceberg.py`): its
catalogs, how a table is registered and read, and what a reproduction of a read holds."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from lakecompat.engines.reading import Reading, Variant
from lakecompat.engines.shape import ALL, Shape
from lakecompat.engines.table import TableRef

if TYPE_CHECKING:
    from lakecompat.engines.trino.reader import TrinoEngine

#: The placeholder of the Metastore's address in a reproduction's catalog files.
METASTORE_PLACEHOLDER = "thrift://METASTORE_HOST:9083"


class TrinoReading(Reading):
    """Trino's reading of one format: the catalogs it adds and the SQL it reads with."""

    #: The connector the format's catalogs use (`connector.name`).
    connector: ClassVar[str]
    #: What the connector does by default that a query's evidence should say, beside its
    #: catalog's properties ("": nothing).
    connector_note: ClassVar[str] = ""

    @classmethod
    def add_catalogs(
        cls, files: dict[str, dict[str, str]], metastore_uri: str, pushdown_off: bool
    ) -> None:
        """Add the format's catalog files to `files` (`pushdown_off`: the run reads filters
        with pushdown off too)."""
        raise NotImplementedError

    @classmethod
    def register(cls, engine: TrinoEngine, table: TableRef) -> None:
        """Make `table` readable in the format's catalog."""
        raise NotImplementedError

    @classmethod
    def read_sql(cls, engine: TrinoEngine, table: TableRef, query_type: str) -> str:
        """The SQL that reads the whole table with this query type."""
        raise NotImplementedError

    @classmethod
    def reproduction(
        cls,
        engine: TrinoEngine,
        table: TableRef,
        query_type: str,
        variant: Variant,
        shape: Shape = ALL,
    ) -> dict[str, str]:
        """The catalog files, the table's registration and the query (file name → text)."""
        raise NotImplementedError
