"""The causes of a failed Hive read per file group, kept between runs
(lakecompat/engines/hive/probes.py)."""

from __future__ import annotations

from pathlib import Path

from lakecompat.engines.hive.probes import FileGroupCauses

SQL = "SELECT * FROM `t_add_column_after_cow`"
SETTINGS = {"hive.fetch.task.conversion": "none"}


def table(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def test_causes_are_kept_and_read_back(tmp_path: Path) -> None:
    kept = FileGroupCauses(tmp_path / "kept")
    path = table(tmp_path / "t", {"a_1.parquet": "x", ".hoodie/1.commit": "{}"})
    key = kept.key(path, SQL, SETTINGS, "3.1.3", "1.2.0")
    assert kept.get(key) is None
    causes = {("java.lang.ClassCastException: LongWritable", True), ("IOException: x", False)}
    kept.put(key, causes)
    assert kept.get(key) == causes
    # An empty set is an answer too: every file group read alone read right.
    kept.put(key, set())
    assert kept.get(key) == set()
    assert not list((tmp_path / "kept").glob("*.partial"))


def test_the_key_follows_the_files_the_query_the_settings_and_the_releases(
    tmp_path: Path,
) -> None:
    kept = FileGroupCauses(tmp_path / "kept")
    path = table(tmp_path / "t", {"a_1.parquet": "x", ".hoodie/1.commit": "{}"})
    key = kept.key(path, SQL, SETTINGS, "3.1.3", "1.2.0")
    assert kept.key(path, SQL, SETTINGS, "3.1.3", "1.2.0") == key
    others = {
        kept.key(path, SQL + " WHERE id > 1", SETTINGS, "3.1.3", "1.2.0"),
        kept.key(path, SQL, {}, "3.1.3", "1.2.0"),
        kept.key(path, SQL, SETTINGS, "4.0.1", "1.2.0"),
        kept.key(path, SQL, SETTINGS, "3.1.3", "0.15.0"),
    }
    assert key not in others and len(others) == 4
    # A table written afresh has other file names; a commit more, another timeline.
    (path / "a_1.parquet").rename(path / "b_1.parquet")
    renamed = kept.key(path, SQL, SETTINGS, "3.1.3", "1.2.0")
    (path / ".hoodie/2.commit").write_text("{}")
    assert len({key, renamed, kept.key(path, SQL, SETTINGS, "3.1.3", "1.2.0")}) == 3


def test_a_damaged_file_or_no_folder_keeps_nothing(tmp_path: Path) -> None:
    kept = FileGroupCauses(tmp_path)
    path = table(tmp_path / "t", {"a_1.parquet": "x"})
    key = kept.key(path, SQL, SETTINGS, "3.1.3", "1.2.0")
    (tmp_path / f"{key}.json").write_text("{not json")
    assert kept.get(key) is None
    nowhere = FileGroupCauses(None)
    nowhere.put(key, {("x", True)})
    assert nowhere.get(key) is None
