"""A table schema as an ordered list of typed columns, with the schema-change operations."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pyarrow as pa

from lakecompat.harness.scenario.types import ColumnType, split_path, type_at, with_child


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

    def type_of(self, path: str) -> ColumnType:
        """The type of a column or nested field (`point.x`, `items.element.qty`)."""
        top, *rest = split_path(path)
        try:
            return type_at(self.column(top).type, rest)
        except ValueError as exc:
            raise SchemaChangeError(f"no field {path!r}: {exc}") from None

    def add(self, col: Column, after: str | None = None, first: bool = False) -> Schema:
        """Add `col` at the end, first, or after the named column; a dotted name adds a field."""
        if "." in col.name:
            if after is not None or first:
                raise SchemaChangeError("`after` and `first` apply to top-level columns only")
            parent, leaf = col.name.rsplit(".", 1)
            if self.type_of(parent).name != "struct":
                raise SchemaChangeError(
                    f"no field {parent!r}: {self.type_of(parent)} is not a struct; "
                    "fields can only be added to structs"
                )

            def add_field(fields: tuple[tuple[str, ColumnType], ...]) -> tuple:
                if leaf in dict(fields):
                    raise SchemaChangeError(f"field {col.name!r} already exists")
                return (*fields, (leaf, col.type))

            return self._change_nested(parent, add_field)
        self._require_new(col.name)
        cols = list(self.columns)
        if first:
            cols.insert(0, col)
        elif after is not None:
            cols.insert(self.names.index(self.column(after).name) + 1, col)
        else:
            cols.append(col)
        return Schema(tuple(cols))

    def move(self, name: str, after: str | None = None, first: bool = False) -> Schema:
        """Move the named column first, or right after the column `after`."""
        col = self.column(name)
        if after is not None:
            self.column(after)
            if after == name:
                raise SchemaChangeError(f"column {name!r} cannot move after itself")
        rest = Schema(tuple(c for c in self.columns if c.name != name))
        if not first and after is None:
            raise SchemaChangeError("a move needs `first: true` or `after: <column>`")
        return rest.add(col, after, first)

    def drop(self, name: str) -> Schema:
        """The schema without column `name`, or without a struct's field (`point.y`)."""
        if "." in name:
            parent, leaf = name.rsplit(".", 1)
            self.type_of(name)

            def drop_field(fields: tuple[tuple[str, ColumnType], ...]) -> tuple:
                if len(fields) == 1:
                    raise SchemaChangeError(f"{leaf} is the only field of {parent}")
                return tuple((n, t) for n, t in fields if n != leaf)

            return self._change_nested(parent, drop_field)
        self.column(name)
        return Schema(tuple(c for c in self.columns if c.name != name))

    def rename(self, name: str, new_name: str) -> Schema:
        if "." in name:
            parent, leaf = name.rsplit(".", 1)
            self.type_of(name)

            def rename_field(fields: tuple[tuple[str, ColumnType], ...]) -> tuple:
                if new_name in dict(fields):
                    raise SchemaChangeError(f"field {parent}.{new_name} already exists")
                return tuple((new_name if n == leaf else n, t) for n, t in fields)

            return self._change_nested(parent, rename_field)
        self.column(name)
        self._require_new(new_name)
        return Schema(
            tuple(replace(c, name=new_name) if c.name == name else c for c in self.columns)
        )

    def retype(self, name: str, new_type: ColumnType) -> Schema:
        if "." in name:
            parent, leaf = name.rsplit(".", 1)
            self.type_of(name)
            return self._change_nested(
                parent, lambda fields: tuple((n, new_type if n == leaf else t) for n, t in fields)
            )
        self.column(name)
        return Schema(
            tuple(replace(c, type=new_type) if c.name == name else c for c in self.columns)
        )

    def arrow(self) -> pa.Schema:
        """The Arrow schema every answer is compared in."""
        return pa.schema([pa.field(c.name, c.type.arrow()) for c in self.columns])

    def _change_nested(self, parent: str, change: object) -> Schema:
        top, *rest = split_path(parent)
        try:
            changed = with_child(self.column(top).type, rest, change)  # type: ignore[arg-type]
        except ValueError as exc:
            raise SchemaChangeError(f"no field {parent!r}: {exc}") from None
        return Schema(tuple(replace(c, type=changed) if c.name == top else c for c in self.columns))

    def _require_new(self, name: str) -> None:
        if name in self.names:
            raise SchemaChangeError(f"column {name!r} already exists")
