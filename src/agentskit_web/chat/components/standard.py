"""Props schemas, fallback texts and interaction rules of the 12 standard components.

These are the facts of the reference catalog (bounds, enums, fallback
sentences, which event values are acceptable), expressed as strict pydantic
models: unknown fields are rejected, strings are measured in UTF-16 code
units, numbers must be finite and booleans never pass as numbers.
`component_catalog` turns them into `ComponentDefinition`s.
"""

import math
import re
from collections.abc import Sequence
from typing import Annotated, Any, ClassVar, Final, Literal

from pydantic import AfterValidator, Field, JsonValue, model_validator

from ...protocol.identifiers import SafeId, js_chars
from ...protocol.limits import (
    BUTTON_GROUP_MAX_BUTTONS,
    CHOICE_LIST_MAX_CHOICES,
    COMPONENT_JSON_RECORD_KEY_MAX_CHARS,
    COMPONENT_LABEL_MAX_CHARS,
    COMPONENT_TEXT_MAX_CHARS,
    ERROR_NOTICE_CODE_MAX_CHARS,
    FILE_MIME_TYPE_MAX_CHARS,
    FORM_FIELD_MAX_OPTIONS,
    FORM_MAX_FIELDS,
    FORM_PLACEHOLDER_MAX_CHARS,
    JS_MAX_SAFE_INTEGER,
    PROGRESS_VALUE_RANGE,
    TABLE_CELL_MAX_CHARS,
    TABLE_MAX_COLUMNS,
    TABLE_MAX_ROWS,
)
from ...protocol.source_list import PortableUrl, SourceListProps, is_valid_source_open
from ...protocol.text_metrics import js_trim
from ...protocol.wire_model import StrictWireModel

NO_VALUE: Final = object()
"""Stands for an interaction whose `value` is absent (distinct from JSON null)."""

Label = Annotated[str, js_chars(1, COMPONENT_LABEL_MAX_CHARS)]
Text = Annotated[str, js_chars(1, COMPONENT_TEXT_MAX_CHARS)]
JsonRecord = dict[Annotated[str, js_chars(0, COMPONENT_JSON_RECORD_KEY_MAX_CHARS)], JsonValue]


def _finite(value: int | float) -> int | float:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("number must be finite")
    return value


def _percentage(value: int | float) -> int | float:
    low, high = PROGRESS_VALUE_RANGE
    if not low <= value <= high:
        raise ValueError("percentage out of range")
    return value


def _safe_integer(value: int | float) -> int:
    """A JavaScript safe integer: `5.0` counts (JSON has one number type), `5.5` does not."""
    if isinstance(value, float) and not value.is_integer():
        raise ValueError("not an integer")
    if not 0 <= value <= JS_MAX_SAFE_INTEGER:
        raise ValueError("integer out of range")
    return int(value)


FiniteNumber = Annotated[int | float, AfterValidator(_finite)]
Percentage = Annotated[int | float, AfterValidator(_finite), AfterValidator(_percentage)]
SafeSize = Annotated[int | float, AfterValidator(_finite), AfterValidator(_safe_integer)]
TableCell = bool | FiniteNumber | Annotated[str, js_chars(0, TABLE_CELL_MAX_CHARS)] | None


def _require_unique(ids: Sequence[str]) -> None:
    if len(set(ids)) != len(ids):
        raise ValueError("item ids must be unique")


# --- props schemas -------------------------------------------------------------------


class StandardProps(StrictWireModel):
    """Base of the standard props: optional means absent, so an explicit `null` is invalid.

    (The reference schemas use zod `.optional()`, which refuses `null`.) A
    field listed in `nullable_fields` takes any JSON value, `null` included.
    """

    nullable_fields: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="before")
    @classmethod
    def _absent_not_null(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for name, info in cls.model_fields.items():
                wire = info.alias or name
                optional = not info.is_required()
                if optional and wire not in cls.nullable_fields and data.get(wire, 0) is None:
                    raise ValueError("optional fields are absent, never null")
        return data


class ChoiceAction(StandardProps):
    """An application action a choice may carry (proposed only through confirmation)."""

    name: SafeId
    input: JsonRecord


class Choice(StandardProps):
    id: SafeId
    label: Label
    description: Text | None = None
    action: ChoiceAction | None = None


class ChoiceListProps(StandardProps):
    prompt: Text
    choices: Annotated[list[Choice], Field(min_length=1, max_length=CHOICE_LIST_MAX_CHOICES)]

    @model_validator(mode="after")
    def _unique(self) -> "ChoiceListProps":
        _require_unique([choice.id for choice in self.choices])
        return self


class Button(StandardProps):
    id: SafeId
    label: Label
    disabled: bool | None = None
    variant: Literal["primary", "secondary", "danger"] | None = None


class ButtonGroupProps(StandardProps):
    label: Label
    buttons: Annotated[list[Button], Field(min_length=1, max_length=BUTTON_GROUP_MAX_BUTTONS)]

    @model_validator(mode="after")
    def _unique(self) -> "ButtonGroupProps":
        _require_unique([button.id for button in self.buttons])
        return self


class FormOption(StandardProps):
    id: SafeId
    label: Label


class FormField(StandardProps):
    """One input; `select` fields need `options`, every other type must not have them."""

    id: SafeId
    label: Label
    type: Literal["text", "email", "number", "checkbox", "select"]
    required: bool | None = None
    placeholder: Annotated[str, js_chars(0, FORM_PLACEHOLDER_MAX_CHARS)] | None = None
    options: (
        Annotated[list[FormOption], Field(min_length=1, max_length=FORM_FIELD_MAX_OPTIONS)] | None
    ) = None

    @model_validator(mode="after")
    def _options_match_type(self) -> "FormField":
        if (self.type == "select") != (self.options is not None):
            raise ValueError("only select fields have options, and they must")
        return self


class FormProps(StandardProps):
    title: Label | None = None
    fields: Annotated[list[FormField], Field(min_length=1, max_length=FORM_MAX_FIELDS)]
    submit_label: Label = Field(alias="submitLabel")

    @model_validator(mode="after")
    def _unique(self) -> "FormProps":
        _require_unique([field.id for field in self.fields])
        return self


class ConfirmationProps(StandardProps):
    title: Label
    message: Text
    confirm_label: Label = Field(alias="confirmLabel")
    cancel_label: Label = Field(alias="cancelLabel")


class ProgressProps(StandardProps):
    label: Label
    value: Percentage
    status: Text | None = None


class LinkCardProps(StandardProps):
    title: Label
    description: Text | None = None
    href: PortableUrl
    label: Label | None = None


class ErrorNoticeProps(StandardProps):
    title: Label
    message: Text
    code: Annotated[str, js_chars(0, ERROR_NOTICE_CODE_MAX_CHARS)] | None = None
    retry_label: Label | None = Field(default=None, alias="retryLabel")


class ToolCallProps(StandardProps):
    """`result` may be any JSON value; `null` present differs from absent (unset)."""

    nullable_fields: ClassVar[frozenset[str]] = frozenset({"result"})

    name: Label
    status: Literal["pending", "running", "complete", "error"]
    arguments: JsonRecord | None = None
    result: JsonValue = None


class ApprovalRequestProps(StandardProps):
    title: Label
    description: Text
    approve_label: Label = Field(alias="approveLabel")
    deny_label: Label = Field(alias="denyLabel")


class TableColumn(StandardProps):
    key: SafeId
    label: Label


class TableProps(StandardProps):
    """Rows are free-form records of scalar cells; they need not match the columns."""

    caption: Label
    columns: Annotated[list[TableColumn], Field(min_length=1, max_length=TABLE_MAX_COLUMNS)]
    rows: Annotated[list[dict[str, TableCell]], Field(max_length=TABLE_MAX_ROWS)]

    @model_validator(mode="after")
    def _unique(self) -> "TableProps":
        _require_unique([column.key for column in self.columns])
        return self


class FileAttachmentProps(StandardProps):
    name: Label
    mime_type: Annotated[str, js_chars(1, FILE_MIME_TYPE_MAX_CHARS)] = Field(alias="mimeType")
    size_bytes: SafeSize | None = Field(default=None, alias="sizeBytes")
    url: PortableUrl | None = None


# --- fallback texts ------------------------------------------------------------------


def js_number_text(value: int | float) -> str:
    """A number as JavaScript's `String(number)` writes it (`50`, `12.5`, `1e-7`, `0`)."""
    number = float(value)
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    mantissa, _, exponent = repr(abs(number)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    significant = (whole + fraction).lstrip("0")
    leading_zeros = len(whole + fraction) - len(significant)
    point = len(whole) + int(exponent or "0") - leading_zeros
    return sign + _place_point(significant.rstrip("0"), point)


def _place_point(digits: str, point: int) -> str:
    """ECMAScript Number::toString layout for digits d1..dk and value 0.d1..dk x 10^point."""
    count = len(digits)
    if count <= point <= 21:
        return digits + "0" * (point - count)
    if 0 < point <= 21:
        return digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return "0." + "0" * -point + digits
    exponent = point - 1
    mark = "+" if exponent >= 0 else "-"
    head = digits if count == 1 else digits[0] + "." + digits[1:]
    return f"{head}e{mark}{abs(exponent)}"


def _joined(labels: Sequence[str]) -> str:
    return ", ".join(labels)


def choice_list_fallback(props: ChoiceListProps) -> str:
    return f"{props.prompt} {_joined([choice.label for choice in props.choices])}."


def button_group_fallback(props: ButtonGroupProps) -> str:
    return f"{props.label}: {_joined([button.label for button in props.buttons])}."


def form_fallback(props: FormProps) -> str:
    title = "Form" if props.title is None else props.title
    return f"{title}: {_joined([field.label for field in props.fields])}."


def confirmation_fallback(props: ConfirmationProps) -> str:
    return f"{props.title}: {props.message}"


def progress_fallback(props: ProgressProps) -> str:
    return f"{props.label}: {js_number_text(props.value)}%."


def link_card_fallback(props: LinkCardProps) -> str:
    detail = props.href if props.description is None else props.description
    return f"{props.title}: {detail}"


def error_notice_fallback(props: ErrorNoticeProps) -> str:
    return f"{props.title}: {props.message}"


def tool_call_fallback(props: ToolCallProps) -> str:
    return f"{props.name}: {props.status}."


def approval_request_fallback(props: ApprovalRequestProps) -> str:
    return f"{props.title}: {props.description}"


def table_fallback(props: TableProps) -> str:
    return f"{props.caption}: {len(props.rows)} rows."


def file_attachment_fallback(props: FileAttachmentProps) -> str:
    return f"{props.name} ({props.mime_type})."


# --- interaction rules ---------------------------------------------------------------
# Each rule answers: may this event name with this value be emitted for these
# validated props? `props` is None when the caller has no frame: every rule
# that depends on the props then refuses.

_DECIMAL: Final = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_RADIX: Final = re.compile(r"0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+")


def js_numeric_string(text: str) -> bool:
    """True when JavaScript's `Number(text)` is finite and the text is not blank."""
    trimmed = js_trim(text)
    if not trimmed:
        return False
    if _RADIX.fullmatch(trimmed):
        return True
    return _DECIMAL.fullmatch(trimmed) is not None and math.isfinite(float(trimmed))


def _is_number(value: object) -> bool:
    return (type(value) is int) or (type(value) is float and math.isfinite(value))


def choice_list_accepts(props: ChoiceListProps | None, event: str, value: object) -> bool:
    """`select` with the id of one of the choices (sent as a selection event)."""
    return (
        props is not None
        and event == "select"
        and isinstance(value, str)
        and any(choice.id == value for choice in props.choices)
    )


def button_group_accepts(props: ButtonGroupProps | None, event: str, value: object) -> bool:
    """`select` with the id of a button that is not disabled."""
    return (
        props is not None
        and event == "select"
        and isinstance(value, str)
        and any(button.id == value and button.disabled is not True for button in props.buttons)
    )


def _field_value_ok(field: FormField, value: object) -> bool:
    if value is NO_VALUE or value == "":
        return field.required is not True
    if field.type == "checkbox":
        return isinstance(value, bool)
    if field.type == "number":
        return _is_number(value) or (isinstance(value, str) and js_numeric_string(value))
    if field.type == "select":
        options = field.options or []
        return isinstance(value, str) and any(option.id == value for option in options)
    return isinstance(value, str)


def form_accepts(props: FormProps | None, event: str, value: object) -> bool:
    """`submit` with an object keyed by field ids whose values fit each field's type."""
    if props is None or event != "submit" or type(value) is not dict:
        return False
    known = {field.id for field in props.fields}
    if any(key not in known for key in value):
        return False
    return all(_field_value_ok(field, value.get(field.id, NO_VALUE)) for field in props.fields)


def confirmation_accepts(props: ConfirmationProps | None, event: str, value: object) -> bool:
    """`confirm` or `cancel`, without a value."""
    return props is not None and event in ("confirm", "cancel") and value is NO_VALUE


def source_list_accepts(props: SourceListProps | None, event: str, value: object) -> bool:
    """`open` with the id of a source that has a url."""
    return props is not None and event == "open" and is_valid_source_open(props, value)


def link_card_accepts(props: LinkCardProps | None, event: str, value: object) -> bool:
    """`open` with exactly the card's href."""
    return props is not None and event == "open" and isinstance(value, str) and value == props.href


def error_notice_accepts(props: ErrorNoticeProps | None, event: str, value: object) -> bool:
    """`retry` without a value, only when the notice offers a retry label."""
    return (
        props is not None
        and event == "retry"
        and props.retry_label is not None
        and value is NO_VALUE
    )


def approval_request_accepts(props: ApprovalRequestProps | None, event: str, value: object) -> bool:
    """`approve` or `deny`, without a value."""
    return props is not None and event in ("approve", "deny") and value is NO_VALUE


def file_attachment_accepts(props: FileAttachmentProps | None, event: str, value: object) -> bool:
    """`open` with exactly the attachment's url, only when it has one."""
    return (
        props is not None
        and event == "open"
        and props.url is not None
        and isinstance(value, str)
        and value == props.url
    )


def never_accepts(_props: Any, _event: str, _value: object) -> bool:
    """Display-only components (progress, tool-call, table) emit no events."""
    return False
