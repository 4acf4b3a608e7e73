"""The catalogs of lakecompat's Trino coordinator: their property files (the Hive connector's
here, each format's from its reading part), how a query's evidence shows them, and quoting."""

from __future__ import annotations

from collections.abc import Mapping

#: The catalog of the Hive connector: plain Parquet tables (the control check's), in every run.
HIVE_CATALOG = "hive"


def shared_properties(metastore_uri: str) -> dict[str, str]:
    """The properties of every catalog on the run's Metastore."""
    return {
        "hive.metastore": "thrift",
        "hive.metastore.uri": metastore_uri,
        # The Metastore keeps `file:` locations, which only the Hadoop file system reads.
        "fs.hadoop.enabled": "true",
    }


def hive_catalog(metastore_uri: str) -> dict[str, str]:
    """The Hive connector's catalog file."""
    return {
        "connector.name": "hive",
        **shared_properties(metastore_uri),
        "hive.timestamp-precision": "MICROSECONDS",
    }


def catalog_comments(
    catalog: str, files: dict[str, dict[str, str]], notes: Mapping[str, str]
) -> str:
    """The properties of `catalog` as SQL comments (with `notes`' word on its connector's
    defaults), and those of the catalog it hands Hudi tables to (`hive.hudi-catalog-name`),
    each under the file that holds them."""
    properties = files[catalog]
    lines = [f"-- etc/catalog/{catalog}.properties:"]
    lines += [f"--   {key}={value}" for key, value in properties.items()]
    note = notes.get(properties.get("connector.name", ""))
    if note:
        lines.append(f"--   ({note})")
    target = properties.get("hive.hudi-catalog-name")
    if target in files and target != catalog:
        lines.append(f"-- which hands Hudi tables to catalog {target}:")
        lines.append(catalog_comments(target, files, notes).rstrip("\n"))
    return "\n".join(lines) + "\n"


def quote(identifier: str) -> str:
    """Double-quote a Trino identifier."""
    return '"' + identifier.replace('"', '""') + '"'
