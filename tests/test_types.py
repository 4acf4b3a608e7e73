"""Column types: parsing, value coercion from YAML, and conversion when a column is retyped."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from lakecompat.harness.scenario.types import ColumnType, coerce, convert, parse_type

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
FLOAT32_OF_0_1 = 0.10000000149011612


def t(text: str) -> ColumnType:
    return parse_type(text)


@pytest.mark.parametrize(
    ("text", "spelled", "arrow", "spark"),
    [
        ("boolean", "boolean", pa.bool_(), "BOOLEAN"),
        ("int", "int", pa.int32(), "INT"),
        ("long", "long", pa.int64(), "BIGINT"),
        ("float", "float", pa.float32(), "FLOAT"),
        ("double", "double", pa.float64(), "DOUBLE"),
        ("string", "string", pa.string(), "STRING"),
        ("date", "date", pa.date32(), "DATE"),
        (" INT ", "int", pa.int32(), "INT"),
        ("decimal(10,2)", "decimal(10,2)", pa.decimal128(10, 2), "DECIMAL(10,2)"),
        ("Decimal(38, 38)", "decimal(38,38)", pa.decimal128(38, 38), "DECIMAL(38,38)"),
        ("decimal(1,0)", "decimal(1,0)", pa.decimal128(1, 0), "DECIMAL(1,0)"),
        ("timestamp", "timestamp", pa.timestamp("us", tz="UTC"), "TIMESTAMP"),
        ("TIMESTAMP_NTZ", "timestamp_ntz", pa.timestamp("us"), "TIMESTAMP_NTZ"),
        ("binary", "binary", pa.binary(), "BINARY"),
    ],
)
def test_parse_type_spellings(text: str, spelled: str, arrow: pa.DataType, spark: str) -> None:
    ctype = parse_type(text)
    assert (str(ctype), ctype.arrow(), ctype.spark_sql()) == (spelled, arrow, spark)
    assert ctype.name == spelled.split("(")[0]


def test_parse_decimal_keeps_precision_and_scale() -> None:
    assert parse_type("decimal(12,4)") == ColumnType("decimal", 12, 4)
    assert parse_type("decimal(12,4)").is_decimal
    assert not parse_type("long").is_decimal


@pytest.mark.parametrize(
    "text",
    [
        "integer",
        "bigint",
        "",
        "decimal",
        "decimal(10)",
        "decimal(0,0)",
        "decimal(39,2)",
        "decimal(5,6)",
        "decimal(10,-1)",
        "array<bigint>",
        "map<int,string>",
        "int;drop",
        "timestamp_tz",
        "timestampntz",
        "datetime",
    ],
)
def test_parse_type_errors_name_the_accepted_spellings(text: str) -> None:
    with pytest.raises(ValueError, match="expected one of: boolean, int, long") as caught:
        parse_type(text)
    assert repr(text) in str(caught.value)
    assert "decimal(p,s) with 1<=p<=38, s<=p" in str(caught.value)


@pytest.mark.parametrize(
    ("value", "type_", "result"),
    [
        (None, "int", None),
        (None, "date", None),
        (True, "boolean", True),
        (INT_MIN, "int", INT_MIN),
        (INT_MAX, "int", INT_MAX),
        (LONG_MIN, "long", LONG_MIN),
        (LONG_MAX, "long", LONG_MAX),
        (3, "double", 3.0),
        (0.1, "double", 0.1),
        (0.1, "float", FLOAT32_OF_0_1),
        (16_777_217, "float", 16_777_216.0),
        ("text", "string", "text"),
        ("2024-02-29", "date", dt.date(2024, 2, 29)),
        (dt.date(2024, 1, 2), "date", dt.date(2024, 1, 2)),
        ("1.5", "decimal(10,2)", Decimal("1.50")),
        (2, "decimal(10,2)", Decimal("2.00")),
        (1.234, "decimal(10,2)", Decimal("1.23")),
        (Decimal("-0.5"), "decimal(3,1)", Decimal("-0.5")),
    ],
)
def test_coerce_accepts(value: Any, type_: str, result: Any) -> None:
    coerced = coerce(value, t(type_))
    assert coerced == result
    assert type(coerced) is type(result)


def test_coerce_quantizes_decimals_to_the_scale() -> None:
    assert coerce("1.5", t("decimal(10,2)")).as_tuple().exponent == -2
    assert str(coerce(7, t("decimal(5,3)"))) == "7.000"


@pytest.mark.parametrize(
    ("value", "type_", "message"),
    [
        (INT_MAX + 1, "int", "out of range for int"),
        (INT_MIN - 1, "int", "out of range for int"),
        (LONG_MAX + 1, "long", "out of range for long"),
        (True, "int", "is not a int"),
        (False, "long", "is not a long"),
        (True, "double", "is not a double"),
        (1, "boolean", "is not a boolean"),
        ("true", "boolean", "is not a boolean"),
        ("10", "int", "is not a int"),
        (1.0, "int", "is not a int"),
        ("1.5", "double", "is not a double"),
        (10, "string", "is not a string"),
        ("2023-02-29", "date", "is not a date (expected YYYY-MM-DD)"),
        ("02/01/2024", "date", "is not a date (expected YYYY-MM-DD)"),
        (20240101, "date", "is not a date (expected YYYY-MM-DD)"),
        (dt.datetime(2024, 1, 1, 10), "date", "is a timestamp, not a date"),
        ("abc", "decimal(10,2)", "is not a number for decimal(10,2)"),
        (123.45, "decimal(4,2)", "does not fit decimal(4,2)"),
        (True, "decimal(4,2)", "is not a number for decimal(4,2)"),
    ],
)
def test_coerce_refuses(value: Any, type_: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        coerce(value, t(type_))


@pytest.mark.parametrize(
    ("value", "source", "target", "result"),
    [
        (None, "int", "string", None),
        (7, "int", "int", 7),
        (7, "int", "long", 7),
        (7, "int", "double", 7.0),
        (7, "int", "string", "7"),
        (-5, "long", "string", "-5"),
        (2**40, "long", "int", None),
        (FLOAT32_OF_0_1, "float", "double", FLOAT32_OF_0_1),
        (0.1, "double", "float", FLOAT32_OF_0_1),
        (1.9, "double", "int", 1),
        (1.5, "double", "string", "1.5"),
        (1.257, "double", "decimal(10,2)", Decimal("1.26")),
        (1e9, "double", "decimal(5,2)", None),
        (7, "int", "decimal(10,2)", Decimal("7.00")),
        (Decimal("1.50"), "decimal(10,2)", "string", "1.50"),
        (Decimal("1.55"), "decimal(10,2)", "decimal(10,1)", Decimal("1.6")),
        (Decimal("2.75"), "decimal(10,2)", "double", 2.75),
        (True, "boolean", "string", "true"),
        (False, "boolean", "string", "false"),
        (dt.date(2024, 3, 1), "date", "string", "2024-03-01"),
        (dt.date(2024, 3, 1), "date", "int", None),
        ("2024-03-01", "string", "date", dt.date(2024, 3, 1)),
        ("yesterday", "string", "date", None),
        ("12", "string", "int", 12),
        (" 12 ", "string", "long", 12),
        ("1.9", "string", "int", 1),
        ("abc", "string", "int", None),
        ("3000000000", "string", "int", None),
        ("2.5", "string", "double", 2.5),
        ("abc", "string", "double", None),
        ("3.14159", "string", "decimal(5,2)", Decimal("3.14")),
    ],
)
def test_convert(value: Any, source: str, target: str, result: Any) -> None:
    converted = convert(value, t(source), t(target))
    assert converted == result
    assert type(converted) is type(result)


@pytest.mark.parametrize(
    ("value", "target", "result"),
    [(0.125, "decimal(10,2)", Decimal("0.13")), (0.5, "decimal(3,0)", Decimal("1"))],
)
def test_convert_to_decimal_rounds_half_up_like_sql_cast(
    value: float, target: str, result: Decimal
) -> None:
    assert convert(value, t("double"), t(target)) == result


def test_nested_types_parse_and_spell_like_spark() -> None:
    point = parse_type("struct<x: int, y:string>")
    assert str(point) == "struct<x:int,y:string>"
    assert point.spark_sql() == "STRUCT<`x`: INT, `y`: STRING>"
    items = parse_type("array<struct<sku:string,qty:int>>")
    assert items.arrow() == pa.list_(pa.struct([("sku", pa.string()), ("qty", pa.int32())]))
    attrs = parse_type("map<string,decimal(10,2)>")
    assert attrs.spark_sql() == "MAP<STRING, DECIMAL(10,2)>"
    assert attrs.arrow() == pa.map_(pa.string(), pa.decimal128(10, 2))


def test_nested_values_are_coerced_field_by_field() -> None:
    items = parse_type("array<struct<sku:string,qty:long>>")
    assert coerce([{"sku": "a"}], items) == [{"sku": "a", "qty": None}]
    with pytest.raises(ValueError, match="no field 'nope'"):
        coerce([{"nope": 1}], items)
    with pytest.raises(ValueError, match="map keys must be strings"):
        coerce({1: 2}, parse_type("map<string,int>"))


def test_nested_paths_find_and_change_fields() -> None:
    from lakecompat.harness.scenario.types import map_at, type_at, with_child

    attrs = parse_type("map<string,struct<v:int>>")
    assert type_at(attrs, ["value", "v"]) == parse_type("int")
    added = with_child(attrs, ["value"], lambda fields: (*fields, ("note", parse_type("string"))))
    assert str(added) == "map<string,struct<v:int,note:string>>"
    value = {"k": {"v": 1}}
    assert map_at(value, attrs, ["value", "v"], lambda v: v * 10) == {"k": {"v": 10}}


def test_canonical_json_sorts_keys_and_spells_dates_and_decimals() -> None:
    from lakecompat.engines.answers import canonical_json

    value = {"b": [Decimal("1.50")], "a": dt.date(2024, 1, 2)}
    assert canonical_json(value) == '{"a":"2024-01-02","b":["1.50"]}'
    assert canonical_json(None) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [("struct<a:int", "expected '>'"), ("struct<a:int,a:long>", "repeated struct field name")],
)
def test_bad_struct_spellings_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_type(text)


UTC = dt.UTC
STAMP = dt.datetime(2024, 1, 2, 3, 4, 5, 123456)


def test_new_types_nest_and_keep_their_spelling() -> None:
    kind = parse_type("struct<at:timestamp_ntz,raw:binary>")
    assert str(kind) == "struct<at:timestamp_ntz,raw:binary>"
    assert kind.spark_sql() == "STRUCT<`at`: TIMESTAMP_NTZ, `raw`: BINARY>"


@pytest.mark.parametrize(
    ("value", "type_", "result"),
    [
        ("2024-01-02 03:04:05.123456", "timestamp", STAMP.replace(tzinfo=UTC)),
        ("2024-01-02T03:04:05.123456", "timestamp", STAMP.replace(tzinfo=UTC)),
        ("2024-01-02 03:04:05", "timestamp", dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2024-01-02 03:04:05.5", "timestamp", dt.datetime(2024, 1, 2, 3, 4, 5, 500000, UTC)),
        ("2024-01-02 04:04:05+01:00", "timestamp", dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2024-01-02 03:04:05Z", "timestamp", dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2024-01-02 03:04:05.123456", "timestamp_ntz", STAMP),
        (STAMP, "timestamp_ntz", STAMP),
        (STAMP, "timestamp", STAMP.replace(tzinfo=UTC)),
        ("YWJj", "binary", b"abc"),
        ("w6k=", "binary", "é".encode()),
        ("", "binary", b""),
        (b"\x00\xff", "binary", b"\x00\xff"),
        (False, "boolean", False),
    ],
)
def test_coerce_accepts_the_new_types(value: Any, type_: str, result: Any) -> None:
    coerced = coerce(value, t(type_))
    assert coerced == result
    assert type(coerced) is type(result)
    if isinstance(result, dt.datetime):
        assert coerced.tzinfo == result.tzinfo


@pytest.mark.parametrize(
    ("value", "type_", "message"),
    [
        ("2024-01-02", "timestamp", "is not a timestamp (expected 'YYYY-MM-DD HH:MM:SS[.ffffff]')"),
        ("2024-01-02 03:04", "timestamp", "is not a timestamp"),
        ("2024-01-02 03:04:05.1234567", "timestamp", "is not a timestamp"),
        ("2024-02-30 03:04:05", "timestamp", "day is out of range"),
        ("yesterday", "timestamp_ntz", "is not a timestamp"),
        ("2024-01-02 03:04:05Z", "timestamp_ntz", "a timestamp_ntz has no time zone"),
        (1704164645, "timestamp", "is not a timestamp"),
        (dt.date(2024, 1, 2), "timestamp", "is not a timestamp"),
        ("abc", "binary", "is not base64 (binary values are written in base64)"),
        ("YWJ", "binary", "is not base64"),
        (1, "binary", "is not a binary"),
        ("yes", "boolean", "is not a boolean"),
    ],
)
def test_coerce_refuses_the_new_types(value: Any, type_: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        coerce(value, t(type_))


STAMP_UTC = STAMP.replace(tzinfo=UTC)
MIDNIGHT = dt.datetime(2024, 1, 2, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "source", "target", "result"),
    [
        # timestamp: in UTC, as Spark's CAST with the session time zone UTC
        (STAMP_UTC, "timestamp", "string", "2024-01-02 03:04:05.123456"),
        (STAMP_UTC.replace(microsecond=500000), "timestamp", "string", "2024-01-02 03:04:05.5"),
        (STAMP_UTC.replace(microsecond=0), "timestamp", "string", "2024-01-02 03:04:05"),
        (STAMP_UTC, "timestamp", "date", dt.date(2024, 1, 2)),
        (STAMP_UTC, "timestamp", "long", 1704164645),
        (dt.datetime(1969, 12, 31, 23, 59, 59, 500000, UTC), "timestamp", "long", -1),
        (STAMP_UTC, "timestamp", "double", 1704164645.123456),
        (STAMP_UTC, "timestamp", "timestamp_ntz", STAMP),
        (STAMP, "timestamp_ntz", "timestamp", STAMP_UTC),
        (STAMP, "timestamp_ntz", "string", "2024-01-02 03:04:05.123456"),
        (STAMP, "timestamp_ntz", "long", None),
        ("2024-01-02 03:04:05.123456", "string", "timestamp", STAMP_UTC),
        (" 2024-01-02T03:04:05.123456 ", "string", "timestamp", STAMP_UTC),
        ("2024-01-02", "string", "timestamp", MIDNIGHT),
        ("2024-1-2 3:04", "string", "timestamp", MIDNIGHT.replace(hour=3, minute=4)),
        ("2024-01-02 04:04:05.123456+01:00", "string", "timestamp", STAMP_UTC),
        ("2024-01-02 03:04:05.1234567", "string", "timestamp", STAMP_UTC),
        ("nine", "string", "timestamp", None),
        ("2024-13-01", "string", "timestamp", None),
        (dt.date(2024, 1, 2), "date", "timestamp", MIDNIGHT),
        (dt.date(2024, 1, 2), "date", "timestamp_ntz", MIDNIGHT.replace(tzinfo=None)),
        (7, "long", "timestamp", dt.datetime(1970, 1, 1, 0, 0, 7, tzinfo=UTC)),
        (-3, "long", "timestamp", dt.datetime(1969, 12, 31, 23, 59, 57, tzinfo=UTC)),
        (1.5, "double", "timestamp", dt.datetime(1970, 1, 1, 0, 0, 1, 500000, UTC)),
        (7, "long", "timestamp_ntz", None),
        (True, "boolean", "timestamp", None),
        # boolean
        (True, "boolean", "int", 1),
        (False, "boolean", "long", 0),
        (True, "boolean", "double", 1.0),
        (7, "int", "boolean", True),
        (0, "int", "boolean", False),
        (-0.0, "double", "boolean", False),
        ("true", "string", "boolean", True),
        (" Yes ", "string", "boolean", True),
        ("no", "string", "boolean", False),
        ("0", "string", "boolean", False),
        ("maybe", "string", "boolean", None),
        (dt.date(2024, 1, 2), "date", "boolean", None),
        # binary: UTF-8 both ways
        (b"abc", "binary", "string", "abc"),
        ("é".encode(), "binary", "string", "é"),
        (b"\xff", "binary", "string", "\ufffd"),
        ("é", "string", "binary", b"\xc3\xa9"),
        (b"abc", "binary", "int", None),
        (7, "int", "binary", None),
        # decimal precision and scale
        (Decimal("1.50"), "decimal(10,2)", "decimal(12,2)", Decimal("1.50")),
        (Decimal("-0.25"), "decimal(10,2)", "decimal(12,4)", Decimal("-0.2500")),
        (Decimal("1.50"), "decimal(10,2)", "decimal(8,2)", Decimal("1.50")),
        (Decimal("12345678.90"), "decimal(10,2)", "decimal(8,2)", None),
    ],
)
def test_convert_the_new_types_like_sql_cast(
    value: Any, source: str, target: str, result: Any
) -> None:
    converted = convert(value, t(source), t(target))
    assert converted == result
    assert type(converted) is type(result)
    if isinstance(result, dt.datetime):
        assert converted.tzinfo == result.tzinfo


def test_the_oracle_hands_arrow_its_timestamps_and_bytes() -> None:
    from lakecompat.harness.scenario.types import to_arrow_value

    kinds = {"t": t("timestamp"), "n": t("timestamp_ntz"), "b": t("binary"), "f": t("boolean")}
    row = {
        "t": coerce("2024-01-02 03:04:05.123456", kinds["t"]),
        "n": coerce("2024-01-02 03:04:05.123456", kinds["n"]),
        "b": coerce("YWJj", kinds["b"]),
        "f": coerce(True, kinds["f"]),
    }
    schema = pa.schema([(name, kind.arrow()) for name, kind in kinds.items()])
    table = pa.Table.from_pylist(
        [{n: to_arrow_value(v, kinds[n]) for n, v in row.items()}], schema=schema
    )
    assert table.column("t").cast(pa.int64()).to_pylist() == [1704164645123456]
    assert table.column("n").cast(pa.int64()).to_pylist() == [1704164645123456]
    assert table.to_pylist()[0]["b"] == b"abc"
    assert table.to_pylist()[0]["f"] is True


def test_canonical_json_spells_timestamps_and_bytes_as_scenarios_do() -> None:
    from lakecompat.engines.answers import canonical_json

    value = {"at": STAMP_UTC, "local": STAMP, "raw": b"abc"}
    assert canonical_json(value) == (
        '{"at":"2024-01-02 03:04:05.123456","local":"2024-01-02 03:04:05.123456","raw":"YWJj"}'
    )
