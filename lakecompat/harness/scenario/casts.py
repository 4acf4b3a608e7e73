"""Values of timestamps, booleans and binary: how YAML spells them and how SQL CAST turns them.

The project runs every engine in UTC, so `timestamp` (Spark's TIMESTAMP, an instant) is held
as an aware `datetime` in UTC and `timestamp_ntz` (a wall-clock date-time) as a naive one;
CAST between them, to and from text and dates keeps the UTC wall clock. Casts follow Spark's
non-ANSI rules: what does not convert becomes NULL (here: ValueError, which `convert` turns
into None).
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import re
from decimal import Decimal

UTC = dt.UTC
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)
#: How scenario files spell a timestamp: ISO date and time, up to microseconds; a zone
#: (`Z`, `+01:00`) only for `timestamp`, which it converts to UTC.
_SPELLED = re.compile(
    r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?(?P<zone>Z|[+-]\d{2}:\d{2})?$"
)
#: What CAST(string AS TIMESTAMP) accepts here: a date, optionally a time (seconds and
#: fraction optional), optionally a zone; surrounding blanks are trimmed.
_CASTABLE = re.compile(
    r"^(?P<date>\d{4}-\d{1,2}-\d{1,2})"
    r"(?:[ T](?P<time>\d{1,2}:\d{1,2}(?::\d{1,2}(?:\.\d{1,9})?)?)?)?"
    r"(?P<zone>Z|[+-]\d{2}:?\d{2})?$"
)
_TRUE = frozenset({"t", "true", "y", "yes", "1"})
_FALSE = frozenset({"f", "false", "n", "no", "0"})


def timestamp_from_text(text: str, with_zone: bool) -> dt.datetime:
    """A scenario's timestamp text as a UTC datetime (`with_zone`) or a naive one."""
    match = _SPELLED.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a timestamp (expected 'YYYY-MM-DD HH:MM:SS[.ffffff]')")
    if match.group("zone") and not with_zone:
        raise ValueError(f"{text!r}: a timestamp_ntz has no time zone")
    return _zoned(dt.datetime.fromisoformat(text), with_zone)


def cast_text_to_timestamp(text: str, with_zone: bool) -> dt.datetime:
    """CAST(string AS TIMESTAMP | TIMESTAMP_NTZ): a zone in the text is honoured, else UTC."""
    match = _CASTABLE.match(text.strip())
    if not match:
        raise ValueError(f"{text!r} is not a timestamp")
    year, month, day = (int(p) for p in match.group("date").split("-"))
    hour, minute, second, micros = 0, 0, 0, 0
    if match.group("time"):
        clock, _, fraction = match.group("time").partition(".")
        hour, minute, *rest = (int(p) for p in clock.split(":"))
        second = rest[0] if rest else 0
        micros = int((fraction + "000000")[:6])
    value = dt.datetime(year, month, day, hour, minute, second, micros)
    zone = match.group("zone")
    if zone and zone != "Z":
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        offset = dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        value = value.replace(tzinfo=dt.timezone(sign * offset))
    elif zone:
        value = value.replace(tzinfo=UTC)
    return _zoned(value, with_zone)


def _zoned(value: dt.datetime, with_zone: bool) -> dt.datetime:
    """An aware UTC datetime (naive ones taken as UTC), or a naive one of the UTC wall clock."""
    value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return value if with_zone else value.replace(tzinfo=None)


def timestamp_of(value: object, with_zone: bool) -> dt.datetime:
    """CAST(value AS TIMESTAMP | TIMESTAMP_NTZ) from a timestamp, date, string or number.

    Numbers are seconds since the epoch, which only TIMESTAMP takes (Spark refuses numbers
    for TIMESTAMP_NTZ).
    """
    if isinstance(value, dt.datetime):
        return _zoned(value, with_zone)
    if isinstance(value, dt.date):
        return _zoned(dt.datetime(value.year, value.month, value.day), with_zone)
    if isinstance(value, str):
        return cast_text_to_timestamp(value, with_zone)
    if with_zone and isinstance(value, int | float | Decimal) and not isinstance(value, bool):
        return EPOCH + dt.timedelta(microseconds=int(Decimal(str(value)) * 1_000_000))
    raise ValueError(f"no cast from {value!r} to a timestamp")


def epoch_seconds(value: dt.datetime) -> Decimal:
    """A TIMESTAMP's seconds since the epoch, fraction included (CAST to numbers)."""
    micros = (_zoned(value, with_zone=True) - EPOCH) // dt.timedelta(microseconds=1)
    return Decimal(micros).scaleb(-6)


def boolean_of(value: object) -> bool:
    """CAST(value AS BOOLEAN) from a number or text (`true`/`yes`/`1`, `false`/`no`/`0`)."""
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
        raise ValueError(f"{value!r} is not a boolean")
    if isinstance(value, int | float | Decimal):
        return value != 0
    raise ValueError(f"no cast from {value!r} to boolean")


def binary_from_text(text: str) -> bytes:
    """A scenario's binary value: base64 text (YAML's own `!!binary` spelling)."""
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"{text!r} is not base64 (binary values are written in base64)") from None
