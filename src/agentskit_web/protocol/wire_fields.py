"""Field shapes where pydantic's strict mode and the JavaScript wire disagree.

The reference schemas are zod 4 running on JavaScript values, so:

- an integer is any JSON number with an integral value inside JavaScript's
  safe range (`1.0` and `1e3` are integers there; `true` and `"1"` are not);
- a literal number such as `version: 1` is that number, never a boolean
  (pydantic's `Literal[1]` accepts `True` even in strict mode);
- an optional field may be absent but never `null`;
- `z.string().trim()` trims with JavaScript's whitespace set *before* the
  length bounds apply, and the trimmed value is what the schema returns.

Use them in `Annotated[...]` metadata, e.g.
`Annotated[str, JS_TRIM, js_chars(1, 256)]` or `Annotated[Literal[1], exact_number(1)]`.
"""

from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field

from .limits import JS_MAX_SAFE_INTEGER
from .text_metrics import js_trim


def _js_integer(value: Any) -> Any:
    """An integral float becomes an int (JSON.parse does not tell them apart)."""
    if type(value) is float and value.is_integer() and abs(value) <= JS_MAX_SAFE_INTEGER:
        return int(value)
    return value


JsInt = Annotated[
    int,
    BeforeValidator(_js_integer),
    Field(ge=-JS_MAX_SAFE_INTEGER, le=JS_MAX_SAFE_INTEGER),
]
"""zod 4 `z.number().int()`: a JavaScript safe integer; bools and strings rejected."""

JsNonNegativeInt = Annotated[JsInt, Field(ge=0)]
JsPositiveInt = Annotated[JsInt, Field(gt=0)]


def exact_number(expected: int) -> BeforeValidator:
    """Put before `Literal[n]`: accept the JSON number n (`1` or `1.0`), never a bool."""

    def check(value: Any) -> Any:
        if (type(value) is int or type(value) is float) and value == expected:
            return expected
        raise ValueError("not the expected number")

    return BeforeValidator(check)


def _reject_null(value: Any) -> Any:
    if value is None:
        raise ValueError("null is not an absent field")
    return value


NOT_NULL = BeforeValidator(_reject_null)
"""Put on an optional field: absent is allowed, an explicit `null` is not."""

JS_TRIM = AfterValidator(js_trim)
"""zod `.trim()`: JavaScript trim applied before the `js_chars` bound that follows it."""
