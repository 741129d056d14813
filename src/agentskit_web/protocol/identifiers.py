"""Identifier and code shapes shared by every contract, as pydantic annotated types.

`fullmatch` is used on purpose: `re.match` with `$` accepts a trailing
newline ("abc\\n"), which would let a line break into an id.
"""

import re
from typing import Annotated, Final

from pydantic import AfterValidator

from .limits import ASK_ERROR_CODE_MAX_CHARS, COMPONENT_KEY_MAX_CHARS, SAFE_ID_MAX_CHARS
from .text_metrics import js_length

SAFE_ID_PATTERN: Final = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._:-]{{0,{SAFE_ID_MAX_CHARS - 1}}}")
COMPONENT_KEY_PATTERN: Final = re.compile(rf"[a-z][a-z0-9-]{{0,{COMPONENT_KEY_MAX_CHARS - 1}}}")
CODE_PATTERN: Final = re.compile(r"[A-Z][A-Z0-9_]*")
ASK_ERROR_CODE_PATTERN: Final = re.compile(rf"[A-Z][A-Z0-9_]{{0,{ASK_ERROR_CODE_MAX_CHARS - 1}}}")


def is_safe_id(value: object) -> bool:
    """True when `value` is a string matching SafeId."""
    return isinstance(value, str) and SAFE_ID_PATTERN.fullmatch(value) is not None


def is_component_key(value: object) -> bool:
    """True when `value` is a string matching ComponentKey."""
    return isinstance(value, str) and COMPONENT_KEY_PATTERN.fullmatch(value) is not None


def _pattern_check(pattern: "re.Pattern[str]", what: str) -> AfterValidator:
    def check(value: str) -> str:
        if pattern.fullmatch(value) is None:
            raise ValueError(f"not a {what}")
        return value

    return AfterValidator(check)


def js_chars(min_chars: int = 0, max_chars: int | None = None) -> AfterValidator:
    """Length bound in UTF-16 code units (the spec's "chars")."""

    def check(value: str) -> str:
        length = js_length(value)
        if length < min_chars or (max_chars is not None and length > max_chars):
            raise ValueError("length out of bounds")
        return value

    return AfterValidator(check)


SafeId = Annotated[str, _pattern_check(SAFE_ID_PATTERN, "SafeId")]
ComponentKey = Annotated[str, _pattern_check(COMPONENT_KEY_PATTERN, "ComponentKey")]
Code = Annotated[str, _pattern_check(CODE_PATTERN, "Code")]
AskErrorCode = Annotated[str, _pattern_check(ASK_ERROR_CODE_PATTERN, "Ask error code")]


def make_safe_id(value: str, fallback: str) -> str:
    """Coerce arbitrary text into a SafeId: unsafe chars become '-', cut to 128.

    Returns `fallback` when the result does not start alphanumeric.
    """
    cleaned = re.sub(r"[^A-Za-z0-9._:-]", "-", value)[:128]
    return cleaned if SAFE_ID_PATTERN.fullmatch(cleaned) else fallback
