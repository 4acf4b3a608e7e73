"""How reports group cells: table type names and the type-change grid's layout."""

from __future__ import annotations

TABLE_TYPE_NAMES = {"cow": "copy-on-write", "mor": "merge-on-read"}
#: The overview's order of categories: the baseline, then the changes the source documents
#: start with, a renamed column first (which engines read one is the question the overview
#: answers on its first screen); any other category after them, in the order the run met it.
CATEGORY_ORDER = ("baseline", "rename_column", "add_column", "drop_column", "reorder")
#: The type-change table's layout: the source documents' 7 × 7 first, then the types and
#: decimal targets the catalog added (scripts/generate_type_changes.py); a pair the catalog
#: lacks stays an empty cell.
TYPE_ROWS = (
    *("int", "long", "float", "double", "decimal", "string", "date"),
    *("timestamp", "timestamp_ntz", "boolean", "binary"),
)
TYPE_COLUMNS = (
    *("long", "float", "double", "string", "decimal", "date", "int"),
    *("decimal_wider", "decimal_wider_scale", "decimal_narrower"),
    *("timestamp", "timestamp_ntz", "boolean", "binary"),
)
#: How a heading names a row or column that is not the type's own name.
TYPE_LABELS = {
    "decimal_wider": "decimal(12,2)",
    "decimal_wider_scale": "decimal(12,4)",
    "decimal_narrower": "decimal(8,2)",
}


def type_label(name: str) -> str:
    """A row or column heading of the type-change table."""
    return TYPE_LABELS.get(name, name)
