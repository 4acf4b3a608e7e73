"""What lakecompat knows of one table format, as a value (`engines.formats` registers them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from lakecompat.engines.infra.artifacts import MavenArtifact


@dataclass(frozen=True)
class TableFormat:
    """One table format: its names, its tables' query types and layout, and the words that
    reports and reproductions use for it."""

    #: The name in options, results and known outcomes (`hudi`).
    name: str
    #: The name in report text (`Hudi`).
    title: str
    #: The query types of each table type (`cow`, `mor`): every engine gets a cell for each,
    #: UNSUPPORTED where it lacks one.
    query_types: Mapping[str, tuple[str, ...]]
    #: The folder of a table's metadata, below the table's folder (`.hoodie`).
    metadata_folder: str
    #: Whether a table's kind names the format (`iceberg mor`) in reports and cell ids. The
    #: matrix began with Hudi alone: its kinds stay bare (`mor`) so that ids keep their meaning.
    named_in_kinds: bool
    #: The field of a run's options, results and known outcomes that names the format's own
    #: version of its tables (Hudi's table version, Iceberg's format version).
    version_option: str
    #: Whether readers see the table in the Hive layout, partition columns after the data
    #: columns (Hudi's tables are synced to the Metastore so); else in the table's own order.
    partitions_last: bool
    #: Whether engines a user runs (`--spark-master`, `--trino`, ...) read the format: their
    #: catalogs are configured for it.
    attachable: bool
    #: The Metastore tables a table of each table type is synced as, by query type: their
    #: suffixes after the table's name (Hudi's hive sync: `_ro` and `_rt` for merge-on-read).
    #: A table type left out is one Metastore table of the table's own name.
    synced_tables: Mapping[str, Mapping[str, str]]
    #: The folder of a run's tables of this format, below the run's table folder ("": the
    #: folder itself; each other format has its own: a scenario's tables share one name).
    tables_subfolder: str
    #: How a table of the format is created, in a reproduction's words (`{rows}`: how many).
    create_words: str
    #: What each write commits, in a reproduction's words.
    commit_words: str
    #: The query types that name a point of the table's history (a commit, a snapshot).
    history_query_types: tuple[str, ...]
    #: How a reproduction finds the point of history such a query names, on a table written
    #: again (a paragraph of ISSUE.md).
    reference_words: str
    #: A writer's releases (a cell's `writer`) in a summary's words (`Spark 3.5.3 + Hudi 1.2.0`).
    writer_words: Callable[[Mapping[str, Any]], str]
    #: The release of the format's library the writer writes with unless a run names
    #: another (`engines.releases.Releases`).
    default_release: str = ""
    #: The environment variable that names that release for a run ("": none).
    release_env: str = ""
    #: What a version point's `<name>` field (and `--<name>-version`) sets, for help.
    release_help: str = ""
    #: What the version option (`version_option`) sets, for help.
    version_help: str = ""
    #: How the version option's value is named in help (`--table-version N`).
    version_metavar: str = "N"
    #: The version a writer wrote, from its releases as a cell records them (`writer`), where
    #: it is not simply its `version_option` (Hudi's: the release's default table version
    #: when the run chose none); None: the `version_option` recorded.
    version_written: Callable[[Mapping[str, str]], str] | None = None
    #: The version option's value when a run gives none, where it does not depend on the
    #: release ("": it does, or the writer decides).
    default_version: str = ""
    #: Checks a version option's value before anything starts: `(release, version, setting)`
    #: raises `ProvisioningError` naming `setting` when the writer of `release` cannot write
    #: tables of `version` (None: every value is taken).
    check_version: Callable[[str, str, str], None] | None = None
    #: The artifact a release is fetched as, to check before anything starts that the
    #: release exists (None: not checked).
    release_artifact: Callable[[str], MavenArtifact] | None = None
    #: The prefix of the bookkeeping columns readers may return beside a table's data
    #: (Hudi's `_hoodie_commit_time`, ...), left out of every comparison; "": none.
    meta_prefix: str = ""
    #: The prefix of the writer options a scenario's step may set for this format (Hudi's
    #: `hoodie.`); "": the format's writer takes none.
    writer_option_prefix: str = ""
    #: What the format calls its ordering field, the column whose larger value wins when two
    #: writes carry the same key (Hudi's `precombine field`); "": the format has none, and a
    #: scenario may not give it one (`formats: {<name>: {ordering: ...}}`).
    ordering_field: str = ""
    #: Whether every scenario must give the format an ordering field (Hudi's writer sets its
    #: precombine field on every write, and Hudi 0.x upserts need one).
    ordering_required: bool = False

    def written_version(self, writer: Mapping[str, str]) -> str:
        """The version of the format a writer with releases `writer` (a cell's) wrote ("":
        not recorded)."""
        if self.version_written is not None:
            return self.version_written(writer)
        return str(writer.get(self.version_option, ""))

    def table_types(self) -> tuple[str, ...]:
        """The table types of the format."""
        return tuple(self.query_types)

    def kind(self, table_type: str, separator: str = " ") -> str:
        """How a table of `table_type` is named to users: `mor`, or `iceberg mor` where the
        format is named in kinds (`iceberg.mor` with `separator` "." in ids)."""
        return f"{self.name}{separator}{table_type}" if self.named_in_kinds else table_type
