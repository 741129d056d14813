"""Date-time strings of the wire, checked to be real dates.

Two shapes exist: the turn envelope's ISO-8601 date-time with `Z` or an
offset (any fraction), and the memory record's exact
`YYYY-MM-DDTHH:mm:ss.sssZ` that must round-trip through JavaScript's
`Date.toISOString()`. Both reject impossible dates such as Feb 30.
"""

import re
from datetime import UTC, datetime
from typing import Annotated, Final

from pydantic import AfterValidator

_ISO_DATETIME: Final = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})"
)
_MEMORY_DATETIME: Final = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")


def _is_real(year: str, month: str, day: str, hour: str, minute: str, second: str) -> bool:
    try:
        datetime(int(year), int(month), int(day), int(hour), int(minute), int(second))
    except ValueError:
        return False
    return True


def is_iso_datetime(value: object) -> bool:
    """ISO-8601 date-time with `Z` or `±HH:MM` offset, naming a real instant."""
    if not isinstance(value, str):
        return False
    match = _ISO_DATETIME.fullmatch(value)
    if match is None:
        return False
    offset = match.group(8)
    if offset != "Z" and (int(offset[1:3]) > 23 or int(offset[4:6]) > 59):
        return False
    return _is_real(*match.group(1, 2, 3, 4, 5, 6))


def is_memory_datetime(value: object) -> bool:
    """Exact `YYYY-MM-DDTHH:mm:ss.sssZ` naming a real instant."""
    if not isinstance(value, str) or _MEMORY_DATETIME.fullmatch(value) is None:
        return False
    return _is_real(value[0:4], value[5:7], value[8:10], value[11:13], value[14:16], value[17:19])


def format_memory_datetime(moment: datetime) -> str:
    """`Date.toISOString()` form of an aware or UTC-naive datetime."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _check_iso(value: str) -> str:
    if not is_iso_datetime(value):
        raise ValueError("not a real ISO-8601 date-time")
    return value


def _check_memory(value: str) -> str:
    if not is_memory_datetime(value):
        raise ValueError("not a YYYY-MM-DDTHH:mm:ss.sssZ date")
    return value


IsoDateTime = Annotated[str, AfterValidator(_check_iso)]
MemoryDateTime = Annotated[str, AfterValidator(_check_memory)]
