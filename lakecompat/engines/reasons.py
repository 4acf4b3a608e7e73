"""A failure's reason as the same text on every run: what an engine's message holds that
belongs to one execution, not to the failure, is taken out of it (the evidence keeps the
message as the engine wrote it)."""

from __future__ import annotations

import re

#: Spark's account of which task of which stage failed, on which executor: its numbers count
#: the jobs the session ran before, so they differ with what ran earlier.
_SPARK_TASK = re.compile(
    r"Task \d+ in stage \d+(?:\.\d+)? failed \d+ times?, most recent failure: "
    r"Lost task \d+(?:\.\d+)? in stage \d+(?:\.\d+)? \(TID \d+\)(?: \([^()]*\))?"
)
#: A Java object's identity hash, printed by the `toString` of an exception without a message
#: (`java.lang.ClassCastException@3c7214b8`) and of class loaders.
_IDENTITY = re.compile(r"\b((?:[a-z_$][\w$]*\.)+[A-Z][\w$]*)@[0-9a-f]{1,8}\b")
#: An Iceberg snapshot id: random for each write of a table.
_SNAPSHOT = re.compile(
    r"(\bsnapshot(?: with)?(?: id)?(?: \(exclusive\))?:? )-?\d{6,20}\b", re.IGNORECASE
)
#: A Python set of strings as `repr` prints it (`{'deletionVectors', 'columnMapping'}`, in a
#: delta-rs refusal): its order is the string hashes', which differ from process to process.
_STRING_SET = re.compile(r"\{'[^'{}]*'(?:, '[^'{}]*')+\}")


def _sorted_set(match: re.Match[str]) -> str:
    items = sorted(re.findall(r"'[^']*'", match.group(0)))
    return "{" + ", ".join(items) + "}"


def stable_reason(text: str) -> str:
    """`text` without Spark's task and stage numbers, Java identity hashes and Iceberg snapshot
    ids, and with a Python set of strings in sorted order."""
    text = _SPARK_TASK.sub("a task failed", text)
    text = _IDENTITY.sub(r"\1", text)
    text = _STRING_SET.sub(_sorted_set, text)
    return _SNAPSHOT.sub(r"\1<id>", text)
