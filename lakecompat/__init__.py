"""lakecompat: a cross-engine compatibility matrix for schema evolution of lakehouse tables.

`lakecompat.harness` writes the tables, runs the matrix and renders the reports; it drives
`lakecompat.engines`, the readers, which know nothing of it (docs/layout.md).
"""
