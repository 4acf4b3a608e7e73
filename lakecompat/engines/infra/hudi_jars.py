"""The Hudi release a run writes with, and the Hudi Spark bundle of a release (the jars the
writer, the Spark reader and HiveServer2 load).
"""

from __future__ import annotations

from lakecompat.engines.infra.artifacts import MavenArtifact, ProvisioningError, check_release

DEFAULT_HUDI_VERSION = "1.2.0"


HUDI_VERSION_ENV = "LAKECOMPAT_HUDI_VERSION"


#: The table version each Hudi line writes unless told otherwise (`hoodie.table.version` in a
#: table's `.hoodie/hoodie.properties`), by the release's first two numbers; a later line
#: writes what the last one listed does.
DEFAULT_TABLE_VERSIONS = (("0.12", "5"), ("0.14", "6"), ("1.0", "8"), ("1.1", "9"))


#: The table versions a Hudi 1.x writer can be asked to write (`hoodie.write.table.version`):
#: 6 keeps tables readable by Hudi 0.14/0.15 readers.
WRITABLE_TABLE_VERSIONS = ("6", "8", "9")


def hudi_bundle(version: str) -> MavenArtifact:
    """The Hudi bundle for the installed Spark 3.5 (Scala 2.12)."""
    return MavenArtifact("org.apache.hudi", "hudi-spark3.5-bundle_2.12", version)


def check_hudi_release(version: str, setting: str) -> None:
    """`ProvisioningError` in one sentence that starts with `setting` (how the user named the
    release) when Hudi has no release `version` with a bundle for this Spark."""
    check_release(hudi_bundle(version), setting, "Hudi")


def _release_key(version: str) -> tuple[int, ...]:
    """`1.2.0` as (1, 2, 0); a part that is not a number (`0-rc1`) counts as its leading digits."""
    key = []
    for part in version.split("."):
        digits = "".join(ch for ch in part if ch.isdigit()) or "0"
        key.append(int(digits))
    return tuple(key)


def default_table_version(hudi: str) -> str:
    """The table version Hudi release `hudi` writes by default ("" for an unknown release)."""
    if not hudi[:1].isdigit():
        return ""
    found = ""
    for line, table_version in DEFAULT_TABLE_VERSIONS:
        if _release_key(hudi)[:2] >= _release_key(line):
            found = table_version
    return found


def written_table_version(writer: dict[str, str]) -> str:
    """The table version a writer (its `versions`: `hudi`, and `table_version` where a run set
    one) writes: the one it was asked for, else its release's default."""
    return writer.get("table_version") or default_table_version(writer.get("hudi", ""))


def check_table_version(hudi: str, table_version: str, setting: str) -> None:
    """`ProvisioningError` naming `setting` when Hudi `hudi` cannot be asked to write table
    version `table_version` (only Hudi 1.x has `hoodie.write.table.version`)."""
    if _release_key(hudi)[:1] < (1,):
        raise ProvisioningError(
            f"{setting}: Hudi {hudi} writes table version {default_table_version(hudi)} only; "
            "choosing the table version needs a Hudi 1.x writer"
        )
    if table_version not in WRITABLE_TABLE_VERSIONS:
        raise ProvisioningError(
            f"{setting}: Hudi {hudi} writes table version "
            f"{' or '.join(WRITABLE_TABLE_VERSIONS)}, not {table_version}"
        )
