"""How reports group cells: table type names and the type-change table's layout."""

from __future__ import annotations

from collections import defaultdict

from harness.outcomes import Cell

TABLE_TYPE_NAMES = {"cow": "copy-on-write", "mor": "merge-on-read"}
#: The type-change table's layout, as in the source documents.
TYPE_ROWS = ("int", "long", "float", "double", "decimal", "string", "date")
TYPE_COLUMNS = ("long", "float", "double", "string", "decimal", "date", "int")


def type_change_cells(
    cells: list[Cell],
) -> dict[tuple[str, str, str], dict[tuple[str, str], list[Cell]]]:
    """Cells of `type_change/<source>_to_<target>` scenarios, by engine, table and query type."""
    found: dict[tuple[str, str, str], dict[tuple[str, str], list[Cell]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for cell in cells:
        name = cell.scenario.removeprefix("type_change/")
        source, _, target = name.partition("_to_")
        if cell.category == "type_change" and source in TYPE_ROWS and target in TYPE_COLUMNS:
            found[(cell.engine, cell.table_type, cell.query_type)][(source, target)].append(cell)
    return {key: dict(pairs) for key, pairs in sorted(found.items())}
