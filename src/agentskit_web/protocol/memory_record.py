"""Chat memory message records (PROTOCOL.md section 7): the persisted wire form of messages.

A record is `{"version": 1, "messages": [...]}`. It arrives from storage or
from a turn snapshot, so it is untrusted: the structural caps (nodes, depth,
key length, finite numbers, plain containers, no cycles) are checked first by
an iterative walk, and only then do the pydantic models see it. Every failure
is the same fixed `AK_CONFIG_INVALID` error, so nothing of the rejected value
(or of a validator error tree) can leak through a message.

Validated messages are deeply immutable (tuples and `FrozenJsonObject`), so a
decoded snapshot held by a cursor cannot be changed by whoever reads it.
"""

import math
from collections.abc import Iterable
from datetime import datetime
from typing import Annotated, Any, Final, Literal, NoReturn

from pydantic import AfterValidator, BeforeValidator, Field, PlainSerializer

from .dates import MemoryDateTime, format_memory_datetime
from .diagnostics import ProtocolError
from .identifiers import js_chars
from .json_structure import StructureLimits, check_structure
from .limits import MEMORY_RECORD_MAX_DEPTH, MEMORY_RECORD_MAX_KEY_CHARS, MEMORY_RECORD_MAX_NODES
from .wire_model import WireModel, thaw_json

MEMORY_RECORD_VERSION: Final = 1
MEMORY_RECORD_ERROR_CODE: Final = "AK_CONFIG_INVALID"
MEMORY_RECORD_ERROR_MESSAGE: Final = "Serialized message record is invalid."

# The reference walk counts the root at depth 0 and rejects depth > 32;
# `check_structure` counts the root at depth 1, hence the + 1.
MEMORY_RECORD_LIMITS: Final = StructureLimits(
    max_nodes=MEMORY_RECORD_MAX_NODES,
    max_depth=MEMORY_RECORD_MAX_DEPTH + 1,
    max_key_chars=MEMORY_RECORD_MAX_KEY_CHARS,
)

MessageRole = Literal["user", "assistant", "system", "tool"]
MessageStatus = Literal["pending", "streaming", "complete", "error"]
ToolCallStatus = Literal["pending", "running", "complete", "error", "requires_confirmation"]
ImageDetail = Literal["low", "high", "auto"]


class FrozenJsonObject(dict[str, Any]):
    """A JSON object that refuses mutation, so validated state stays as validated.

    It is still a `dict` (serialises, compares and reads like one); copying
    returns the same object because there is nothing to protect a copy from.
    """

    __slots__ = ()

    def _refuse(self, *_args: Any, **_kwargs: Any) -> NoReturn:
        raise TypeError("validated wire data is immutable")

    __setitem__ = _refuse
    __delitem__ = _refuse
    __ior__ = _refuse
    clear = _refuse
    pop = _refuse
    popitem = _refuse
    setdefault = _refuse
    update = _refuse

    def __copy__(self) -> "FrozenJsonObject":
        return self

    def __deepcopy__(self, _memo: dict[int, Any]) -> "FrozenJsonObject":
        return self


def freeze_json(value: Any) -> Any:
    """Deep, immutable copy of JSON data: objects become `FrozenJsonObject`, arrays tuples.

    Recursion is fine here: every caller runs after a structural depth check.
    """
    if isinstance(value, dict):
        return FrozenJsonObject({key: freeze_json(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze_json(item) for item in value)
    return _plain_scalar(value)


def _plain_scalar(value: Any) -> Any:
    """A host subclass of str/int/float becomes the plain value, so no host method rides along."""
    # The base classes' own slots copy a subclass instance into the exact type without calling
    # anything the subclass overrides (bool cannot be subclassed).
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__index__(value)
    if isinstance(value, float):
        return float.__float__(value)
    return value


def _present(value: Any) -> Any:
    """Optional fields may be absent, never `null` (the reference checks `!== undefined`)."""
    if value is None:
        raise ValueError("explicit null")
    return value


def _array(value: Any) -> Any:
    """Accept a JSON array (list) for a tuple field; strict mode keeps rejecting the rest."""
    _present(value)
    return tuple(value) if type(value) is list else value


def _not_bool(value: Any) -> Any:
    """Strict pydantic still lets `True` match `Literal[1]`; the wire never does."""
    if isinstance(value, bool):
        raise ValueError("a boolean is not a number")
    return value


def _finite_non_negative(value: float | None) -> float | None:
    if value is not None and (not value >= 0 or value == math.inf):
        raise ValueError("must be finite and >= 0")
    return value


NonEmptyText = Annotated[str, js_chars(1)]
OptionalText = Annotated[str | None, BeforeValidator(_present)]
JsonObject = Annotated[
    dict[str, Any],
    AfterValidator(freeze_json),
    PlainSerializer(thaw_json, return_type=Any),
]
OptionalJsonObject = Annotated[JsonObject | None, BeforeValidator(_present)]
Duration = Annotated[
    int | float | None,
    BeforeValidator(_not_bool),
    BeforeValidator(_present),
    AfterValidator(_finite_non_negative),
]
RecordVersion = Annotated[Literal[1], BeforeValidator(_not_bool)]


class TextPart(WireModel):
    """`{type: "text", text}`."""

    type: Literal["text"]
    text: str


class ImagePart(WireModel):
    """`{type: "image", source, mimeType?, detail?}`."""

    type: Literal["image"]
    source: str
    mime_type: OptionalText = Field(default=None, alias="mimeType")
    detail: Annotated[ImageDetail | None, BeforeValidator(_present)] = None


class AudioPart(WireModel):
    """`{type: "audio", source, mimeType?, durationSec?}`."""

    type: Literal["audio"]
    source: str
    mime_type: OptionalText = Field(default=None, alias="mimeType")
    duration_sec: Duration = Field(default=None, alias="durationSec")


class VideoPart(WireModel):
    """`{type: "video", source, mimeType?, durationSec?}`."""

    type: Literal["video"]
    source: str
    mime_type: OptionalText = Field(default=None, alias="mimeType")
    duration_sec: Duration = Field(default=None, alias="durationSec")


class FilePart(WireModel):
    """`{type: "file", source, mimeType?, filename?}`."""

    type: Literal["file"]
    source: str
    mime_type: OptionalText = Field(default=None, alias="mimeType")
    filename: OptionalText = None


MemoryPart = Annotated[
    TextPart | ImagePart | AudioPart | VideoPart | FilePart,
    Field(discriminator="type"),
]


class MemoryToolCall(WireModel):
    """`{id, name, args, status, result?, error?}` (wire order of the reference projection)."""

    id: NonEmptyText
    name: NonEmptyText
    args: JsonObject
    status: ToolCallStatus
    result: OptionalText = None
    error: OptionalText = None


class MemoryMessage(WireModel):
    """One chat message as memory stores it and turn snapshots carry it."""

    id: NonEmptyText
    role: MessageRole
    content: str
    status: MessageStatus
    created_at: MemoryDateTime = Field(alias="createdAt")
    parts: Annotated[tuple[MemoryPart, ...] | None, BeforeValidator(_array)] = None
    tool_calls: Annotated[tuple[MemoryToolCall, ...] | None, BeforeValidator(_array)] = Field(
        default=None, alias="toolCalls"
    )
    tool_call_id: OptionalText = Field(default=None, alias="toolCallId")
    metadata: OptionalJsonObject = None


class MemoryRecord(WireModel):
    """`{version: 1, messages: [...]}`; unknown fields at every level are dropped."""

    version: RecordVersion
    messages: Annotated[tuple[MemoryMessage, ...], BeforeValidator(_array)]


def memory_record_error() -> ProtocolError:
    """The one error every invalid record produces (fixed code and message)."""
    return ProtocolError(MEMORY_RECORD_ERROR_CODE, MEMORY_RECORD_ERROR_MESSAGE)


def _try_parse(record: Any) -> MemoryRecord | None:
    try:
        if type(record) is not dict or not check_structure(record, MEMORY_RECORD_LIMITS):
            return None
        return MemoryRecord.model_validate(record)
    except Exception:  # whatever the input does while validated, it is invalid
        return None


def require_memory_record(record: Any) -> MemoryRecord:
    """Validate an untrusted record into an immutable model; raise `AK_CONFIG_INVALID` if not.

    The error is raised outside the `except` block so it carries no chained
    validator error that a traceback could print.
    """
    parsed = _try_parse(record)
    if parsed is None:
        raise memory_record_error()
    return parsed


def validate_memory_record(record: Any) -> dict[str, Any]:
    """The projected wire record `{"version": 1, "messages": [...]}` of a valid record."""
    return require_memory_record(record).to_wire()


def validate_memory_messages(messages: Any) -> tuple[MemoryMessage, ...]:
    """Validate a bare message list exactly as the record `{"version": 1, "messages": ...}`."""
    return require_memory_record({"version": MEMORY_RECORD_VERSION, "messages": messages}).messages


def _wire_message(message: Any) -> Any:
    if isinstance(message, MemoryMessage):
        return message.to_wire()
    if isinstance(message, dict) and isinstance(message.get("createdAt"), datetime):
        return {**message, "createdAt": format_memory_datetime(message["createdAt"])}
    return message


def memory_messages_to_wire(messages: Iterable[Any]) -> list[Any]:
    """Wire dicts for models or dicts (a `datetime` createdAt is formatted), unvalidated."""
    return [_wire_message(message) for message in messages]


def new_message(
    id: str,
    role: MessageRole,
    content: str,
    status: MessageStatus = "complete",
    created_at: datetime | str | None = None,
    **optional: Any,
) -> MemoryMessage:
    """Build a validated message; `created_at` defaults to now (UTC).

    `optional` takes wire-named optional fields (`parts`, `toolCalls`,
    `toolCallId`, `metadata`). Raises `ProtocolError` when the result is invalid.
    """
    moment = datetime.now().astimezone() if created_at is None else created_at
    wire: dict[str, Any] = {
        "id": id,
        "role": role,
        "content": content,
        "status": status,
        "createdAt": moment,
        **optional,
    }
    return validate_memory_messages([_wire_message(wire)])[0]
