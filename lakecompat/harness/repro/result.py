"""What `lakecompat repro` found: the cell measured again, writer.py against lakecompat's
writer, and the reader files' answer."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lakecompat.harness.results.outcomes import Cell


@dataclass(frozen=True)
class ScriptCheck:
    """What running writer.py showed, against the table lakecompat's writer made."""

    #: Whether writer.py's table equals lakecompat's writer's (columns, types and every row);
    #: None when lakecompat's writer made no table, so there was nothing to compare with.
    same_table: bool | None
    #: Where lakecompat's writer stopped: whether writer.py stopped at the same step; None
    #: when lakecompat's writer wrote every step.
    same_stop: bool | None
    detail: str
    #: What was compared, per table ("lakecompat", "writer.py"): rows, columns and a digest
    #: of the rows; None when no comparison was made.
    compared: dict[str, dict[str, Any]] | None = None

    @property
    def agrees(self) -> bool:
        """writer.py did what lakecompat's writer did: the same table, or the same stop."""
        return self.same_table is True or self.same_stop is True


@dataclass
class Reproduction:
    """What `reproduce` made and found."""

    folder: Path
    cell: Cell
    #: The cell measured again on a freshly written table.
    again: Cell
    script: ScriptCheck
    #: The cell judged on the answer the reader files give (None: no such answer, e.g. an
    #: engine without the query type, or a writer that stopped).
    from_files: Cell | None = None

    @property
    def reproduced(self) -> bool:
        """The cell measured again, and the reader files' answer, judge as the run did."""
        want = (self.cell.outcome, self.cell.reason)
        if (self.again.outcome, self.again.reason) != want:
            return False
        return self.from_files is None or (self.from_files.outcome, self.from_files.reason) == want
