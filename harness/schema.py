"""A table schema as an ordered list of typed columns, with the schema-change operations."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pyarrow as pa

from harness.types import ColumnType


class SchemaChangeError(ValueError):
    """A schema change that makes no sense for the current schema (unknown or duplicate name)."""


@dataclass(frozen=True)
class Column:
    """One top-level column."""

    name: str
    type: ColumnType
    comment: str | None = None


@dataclass(frozen=True)
class Schema:
    """An ordered, immutable set of columns; every change returns a new Schema."""

    columns: tuple[Column, ...]

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column(self, name: str) -> Column:
        """The column called `name`; SchemaChangeError lists the existing names otherwise."""
        for col in self.columns:
            if col.name == name:
                return col
        raise SchemaChangeError(f"no column {name!r}; the table has: {', '.join(self.names)}")

    def add(self, col: Column, after: str | None = None, first: bool = False) -> Schema:
        """Add `col` at the end, first, or after the named column."""
        self._require_new(col.name)
        cols = list(self.columns)
        if first:
            cols.insert(0, col)
        elif after is not None:
            cols.insert(self.names.index(self.column(after).name) + 1, col)
        else:
            cols.append(col)
        return Schema(tuple(cols))

    def drop(self, name: str) -> Schema:
        self.column(name)
        return Schema(tuple(c for c in self.columns if c.name != name))

    def rename(self, name: str, new_name: str) -> Schema:
        self.column(name)
        self._require_new(new_name)
        return Schema(
            tuple(replace(c, name=new_name) if c.name == name else c for c in self.columns)
        )

    def retype(self, name: str, new_type: ColumnType) -> Schema:
        self.column(name)
        return Schema(
            tuple(replace(c, type=new_type) if c.name == name else c for c in self.columns)
        )

    def arrow(self) -> pa.Schema:
        """The Arrow schema every answer is compared in."""
        return pa.schema([pa.field(c.name, c.type.arrow()) for c in self.columns])

    def _require_new(self, name: str) -> None:
        if name in self.names:
            raise SchemaChangeError(f"column {name!r} already exists")
