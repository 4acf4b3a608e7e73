"""The worker process of the Python-library readers, and how their answers are compared.

The worker runs here with this Python (which has pyarrow), not a library's environment: what
is tested is the protocol, the errors and the conversion, with real processes.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from lakecompat.engines.base import Variant
from lakecompat.engines.context import RunContext
from lakecompat.engines.errors import QueryError, error_text
from lakecompat.engines.infra.python_env import environment_dir, provision
from lakecompat.engines.library.reader import LibraryReader, comparable
from lakecompat.engines.reading import reading


class PlainPython(LibraryReader):
    """A library reader whose 'library' is pyarrow, in this Python."""

    name = "plain"
    distribution = "pyarrow"
    default_version = pa.__version__
    release_env = "LAKECOMPAT_TEST_UNUSED"
    imports = ("pyarrow",)
    readings = (reading("hudi", query_types={"cow": ("snapshot",)}),)

    def shaped_sql(self, table, query_type, shape):
        raise NotImplementedError


@pytest.fixture
def reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PlainPython:
    monkeypatch.setattr(
        "lakecompat.engines.library.reader.provision", lambda name, packages: Path(sys.executable)
    )
    engine = PlainPython(RunContext(tmp_path, spark=None))  # type: ignore[arg-type]
    engine.start()
    yield engine
    engine.stop()


def test_the_worker_runs_the_code_and_answers_its_table(reader: PlainPython) -> None:
    code = "import pyarrow as pa\nanswer = pa.table({'id': [1, 2], 'v': [settings['x'], None]})\n"
    answer = reader.query(code, Variant("default", {"x": "a"}))
    assert answer.to_pylist() == [{"id": 1, "v": "a"}, {"id": 2, "v": None}]
    assert reader.alive()


def test_an_exception_in_the_read_is_a_query_error_with_the_library_frames(
    reader: PlainPython,
) -> None:
    code = "def read():\n    raise ValueError('Only support table version 5 and 6')\nread()\n"
    with pytest.raises(QueryError) as raised:
        reader.query(code, Variant("default"))
    assert str(raised.value) == "ValueError: Only support table version 5 and 6"
    # The evidence: the message, then where in the library it was raised.
    lines = error_text(raised.value).splitlines()
    assert lines[0] == "QueryError: ValueError: Only support table version 5 and 6"
    assert any(line.strip().startswith("File ") and "in read" in line for line in lines[1:])
    assert reader.alive()  # a failed read does not end the worker
    assert "ValueError" in reader.log_excerpt()


def test_a_rust_panic_is_a_query_error_that_names_where_it_happened(
    reader: PlainPython,
) -> None:
    # PyO3 raises a Rust panic as PanicException, a BaseException; Rust prints its site first.
    code = (
        "import sys\n"
        "class PanicException(BaseException):\n    pass\n"
        "print(\"thread '<unnamed>' panicked at crates/core/src/x.rs:173:45:\", flush=True)\n"
        "raise PanicException('not yet implemented')\n"
    )
    with pytest.raises(QueryError) as raised:
        reader.query(code, Variant("default"))
    first = str(raised.value).splitlines()[0]
    assert first == (
        "PanicException: not yet implemented (Rust panic at crates/core/src/x.rs:173:45)"
    )
    assert reader.responsive()  # the worker survived the panic


def test_an_error_whose_text_depends_on_timing_gets_a_stable_first_line(
    reader: PlainPython, monkeypatch: pytest.MonkeyPatch
) -> None:
    stable = ((re.compile(r"^ValueError: batch \d+ differs"), "ValueError: batches differ"),)
    monkeypatch.setattr(PlainPython, "unstable_errors", stable)
    with pytest.raises(QueryError) as raised:
        reader.query("raise ValueError('batch 3 differs')\n", Variant("default"))
    assert str(raised.value).splitlines()[:2] == [
        "ValueError: batches differ",
        "ValueError: batch 3 differs",
    ]


def test_a_read_that_leaves_no_table_is_an_error(reader: PlainPython) -> None:
    with pytest.raises(QueryError, match="left NoneType in `answer`"):
        reader.query("x = 1\n", Variant("default"))


def test_a_killed_worker_is_not_alive_and_starts_again(reader: PlainPython) -> None:
    reader.kill()
    assert not reader.alive()
    reader.restart()
    assert reader.query("import pyarrow as pa\nanswer = pa.table({'a': [1]})\n", Variant("d"))


def test_answers_compare_in_plain_types_with_nested_values_as_json() -> None:
    answer = pa.table(
        {
            "name": pa.array(["a"], pa.large_string()),
            "point": pa.array(
                [{"x": 1, "y": None}], pa.struct([("x", pa.int32()), ("y", pa.int32())])
            ),
            "tag": pa.array(["t"]).dictionary_encode(),
        }
    )
    plain = comparable(answer)
    assert plain.schema.types == [pa.string(), pa.string(), pa.string()]
    assert plain.to_pylist() == [{"name": "a", "point": '{"x":1,"y":null}', "tag": "t"}]


def test_an_environment_is_reused_while_it_holds_the_same_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAKECOMPAT_CACHE", str(tmp_path))
    packages = ("somelib==1.0", "other")
    home = environment_dir("lib", packages)
    assert home == environment_dir("lib", tuple(reversed(packages)))  # order does not matter
    assert home != environment_dir("lib", ("somelib==1.1", "other"))
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "python").write_text("")
    (home / "lakecompat-packages.txt").write_text("somelib==1.0\nother\n")
    # No pip runs: the marker says the environment holds exactly these packages.
    assert provision("lib", packages, progress=lambda message: None) == home / "bin" / "python"


def test_a_reproductions_reader_py_runs_as_written(reader: PlainPython) -> None:
    """`reader.py` of `lakecompat repro`: the read's code with its settings, which the worker
    runs as written (it prints the answer when run by hand)."""
    code = "import pyarrow as pa\nanswer = pa.table({'v': [settings['x']]})\n"

    class Coded(PlainPython):
        def shaped_sql(self, table, query_type, shape):
            return code

    coded = Coded(reader.context)
    files = coded.reproduction(None, "snapshot", Variant("v", {"x": "b"}))  # type: ignore[arg-type]
    text = files["reader.py"]
    assert text.startswith("# plain ") and "pip install pyarrow==" in text.splitlines()[0]
    assert "settings = {'x': 'b'}\n" in text and text.endswith(code + "print(answer)\n")
    sql, variant = coded.reproduction_query(files)
    assert sql == code and variant.settings == {"x": "b"}
    assert reader.query(sql, variant).to_pylist() == [{"v": "b"}]
