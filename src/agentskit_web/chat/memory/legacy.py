"""Ask session memory: Web Storage memory that migrates the older Ask/Docs formats.

Sites that ran earlier Ask widgets have conversations stored under other keys
in one of three shapes, all JSON arrays of records (PROTOCOL.md section 7):

- `{role, content: str}` and `{role, text: str}`: the string becomes the
  message content as is (a plain string keeps its plain-text meaning). An
  assistant string that today's renderer would read as something else (one
  whole component frame, or ordered content starting with U+001E) was plain
  text when it was stored, so it is migrated as ordered content holding it as
  text records: it stays text and can never become a live component;
- Docs `{role: "assistant", parts: [...]}` with parts `{kind: "text", text}`
  and `{kind: "tool", id, name, args}`: text is encoded as ordered assistant
  content in 16,384-char records, tool parts are projected like live Ask
  events (`answer` -> text, `cite` -> source list, other tools through the
  host's `project_tool`), unknown kinds are skipped, and the ordered-content
  bound (512 records / 256 KiB) keeps what fit.

Only user and assistant records migrate, each as status `complete` with its
id made safe (else `legacy-<index+1>`). `createdAt` is the record's own when
it is already a valid memory date-time; otherwise it is the Unix epoch plus
the record's index in milliseconds, as the reference implementation does: it
is deterministic (two tabs migrating the same value write the same string,
so neither sees a change) and it keeps the original order.

A value that is not an array, or an array that yields no message although it
is not empty, is unmigratable: the memory removes it and tries the next key.
"""

import contextlib
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from ...protocol.content import (
    ASSISTANT_CONTENT_LIMIT_EXCEEDED,
    AssistantContentEncoder,
)
from ...protocol.dates import format_memory_datetime, is_memory_datetime
from ...protocol.diagnostics import ProtocolError
from ...protocol.identifiers import make_safe_id
from ...protocol.limits import (
    ASSISTANT_CONTENT_TEXT_MAX_CHARS,
    MEMORY_DEFAULT_MAX_MESSAGES,
    MEMORY_DEFAULT_MAX_RECORD_BYTES,
)
from ...protocol.text_metrics import split_text
from ..view.presentation import is_component_frame_candidate, is_ordered_content
from .web_storage import (
    ChatMemoryError,
    Message,
    StorageSource,
    WebStorageMemory,
    WebStorageMigration,
)

ToolProjector = Callable[[dict[str, Any]], Any]
"""The Ask projection's `ProjectTool` (spelled here so the projection loads when a legacy
tool part is first migrated, not when the widget mounts)."""

MIGRATED_ROLES: Final = ("user", "assistant")
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


class _ContentBoundReached(Exception):
    """The next record would pass 512 records or 256 KiB: keep what fit."""


class _BoundedContent:
    """One message's ordered content; the encoder refuses (unchanged) what does not fit."""

    def __init__(self) -> None:
        self._encoder = AssistantContentEncoder()
        self._records: list[str] = []

    @property
    def empty(self) -> bool:
        return not self._records

    def text(self) -> str:
        return "".join(self._records)

    def add(self, part: Mapping[str, Any]) -> None:
        """Encode one part; past the bound stop, an invalid part is skipped."""
        try:
            self._records.append(self._encoder.encode(dict(part)))
        except ProtocolError as error:
            if error.code == ASSISTANT_CONTENT_LIMIT_EXCEEDED:
                raise _ContentBoundReached from None

    def add_text(self, text: str) -> None:
        """Text in records of at most 16,384 chars, as many as fit."""
        for chunk in split_text(text, ASSISTANT_CONTENT_TEXT_MAX_CHARS):
            self.add({"kind": "text", "text": chunk})


def _is_plain_object(value: object) -> bool:
    return isinstance(value, dict)


def _tool_event(part: Mapping[str, Any]) -> dict[str, Any] | None:
    part_id, name, args = part.get("id"), part.get("name"), part.get("args")
    if isinstance(part_id, str) and isinstance(name, str) and _is_plain_object(args):
        return {"type": "tool", "id": part_id, "name": name, "args": args}
    return None


def _add_part(content: _BoundedContent, part: object, project_tool: ToolProjector | None) -> None:
    """Add one Docs part; unknown or malformed parts add nothing."""
    if not _is_plain_object(part):
        return
    assert isinstance(part, dict)
    kind = part.get("kind")
    if kind == "text":
        text = part.get("text")
        if isinstance(text, str) and text:
            content.add_text(text)
        return
    if kind != "tool":
        return
    event = _tool_event(part)
    if event is None:
        return
    from ..ask.projection import project_ask_event

    try:
        projected = project_ask_event(event, project_tool)
    except Exception:  # a projection failure is "no result"
        return
    if not isinstance(projected, Mapping):
        return
    if projected.get("kind") == "text" and isinstance(projected.get("text"), str):
        if projected["text"]:
            content.add_text(projected["text"])
    elif projected.get("kind") == "component" and projected.get("frame") is not None:
        content.add({"kind": "component", "frame": projected["frame"]})


def _docs_content(parts: Sequence[object], project_tool: ToolProjector | None) -> str | None:
    content = _BoundedContent()
    for part in parts:
        try:
            _add_part(content, part, project_tool)
        except _ContentBoundReached:
            break
    if content.empty:
        return "" if len(parts) == 0 else None
    return content.text()


def _would_not_read_as_text(text: str) -> bool:
    """True when an assistant string would present as a component or ordered content."""
    return is_ordered_content(text) or is_component_frame_candidate(text)


def _plain_text_content(text: str) -> str:
    """A stored plain string as ordered text records (as many as fit the content bound)."""
    content = _BoundedContent()
    with contextlib.suppress(_ContentBoundReached):
        content.add_text(text)
    return content.text()


def _plain_string(record: Mapping[str, Any]) -> str | None:
    direct = record.get("content")
    if isinstance(direct, str):
        return direct
    text = record.get("text")
    return text if isinstance(text, str) else None


def legacy_content(
    record: Mapping[str, Any], project_tool: ToolProjector | None = None
) -> str | None:
    """The migrated content string of one legacy record, or None when it has none."""
    plain = _plain_string(record)
    if plain is not None:
        if record.get("role") == "assistant" and _would_not_read_as_text(plain):
            return _plain_text_content(plain)
        return plain
    parts = record.get("parts")
    if record.get("role") != "assistant" or not isinstance(parts, list):
        return None
    return _docs_content(parts, project_tool)


def _created_at(record: Mapping[str, Any], index: int) -> str:
    created = record.get("createdAt")
    if is_memory_datetime(created):
        assert isinstance(created, str)
        return created
    return format_memory_datetime(_EPOCH + timedelta(milliseconds=index))


def _migrate_record(
    index: int, record: object, project_tool: ToolProjector | None
) -> Message | None:
    if not _is_plain_object(record):
        return None
    assert isinstance(record, dict)
    role = record.get("role")
    if role not in MIGRATED_ROLES:
        return None
    content = legacy_content(record, project_tool)
    if content is None:
        return None
    raw_id = record.get("id")
    return {
        "id": make_safe_id(raw_id if isinstance(raw_id, str) else "", f"legacy-{index + 1}"),
        "role": role,
        "content": content,
        "status": "complete",
        "createdAt": _created_at(record, index),
    }


def migrate_legacy_messages(
    value: object, project_tool: ToolProjector | None = None
) -> list[Message] | None:
    """Messages migrated from one parsed legacy value, or None when it is unmigratable.

    An empty array migrates to []; any other array must yield at least one
    message. Never raises: a record that breaks projection is skipped.
    """
    if not isinstance(value, list):
        return None
    messages: list[Message] = []
    for index, record in enumerate(value):
        try:
            migrated = _migrate_record(index, record, project_tool)
        except Exception:  # one hostile record never stops the rest
            migrated = None
        if migrated is not None:
            messages.append(migrated)
    if messages or len(value) == 0:
        return messages
    return None


def create_ask_session_memory(
    key: str,
    legacy_keys: Sequence[str] = (),
    storage: StorageSource = None,
    max_messages: int = MEMORY_DEFAULT_MAX_MESSAGES,
    max_record_bytes: int = MEMORY_DEFAULT_MAX_RECORD_BYTES,
    project_tool: ToolProjector | None = None,
) -> WebStorageMemory:
    """Web Storage memory under `key` that migrates `legacy_keys`, tried in order.

    `storage` is a Storage, a getter returning one (or None), or None for no
    storage (load gives [] and save does nothing): in the page, pass the
    browser port from `agentskit_web.browser.web_storage`.
    """
    if isinstance(legacy_keys, str):
        raise TypeError("legacy_keys must be a sequence of keys, not one string.")

    def read(value: Any, _key: str) -> list[Message] | None:
        return migrate_legacy_messages(value, project_tool)

    migration = WebStorageMigration(keys=tuple(legacy_keys), read=read)
    return WebStorageMemory(key, storage, max_messages, max_record_bytes, migration)


def run_load_case(case: Mapping[str, Any]) -> dict[str, Any]:
    """Conformance subject `ask_session_memory_load` (fixtures/legacy_memory.json).

    Seeds a `MemoryStorage` from the case (`stored`: JSON values written as
    compact JSON; `storedText`: raw strings), runs one load of an Ask session
    memory over it and reports the messages and the keys left in storage, or
    the load's error code and message.
    """
    from ...protocol.wire_json import dump_json
    from .storage import MemoryStorage

    seeded = {k: dump_json(v) for k, v in dict(case.get("stored", {})).items()}
    seeded.update(dict(case.get("storedText", {})))
    storage = MemoryStorage(
        quota_bytes=case.get("quotaBytes"),
        read_only=bool(case.get("readOnly", False)),
        initial=seeded,
    )
    memory = create_ask_session_memory(
        key=case.get("key", "ask:conversation"),
        legacy_keys=tuple(case.get("legacyKeys", ())),
        storage=storage,
        max_messages=case.get("maxMessages", MEMORY_DEFAULT_MAX_MESSAGES),
        max_record_bytes=case.get("maxRecordBytes", MEMORY_DEFAULT_MAX_RECORD_BYTES),
    )
    try:
        messages = memory.load_now()
    except ChatMemoryError as error:
        return {"ok": False, "code": error.code, "message": error.message, "keys": sorted(storage)}
    return {"ok": True, "messages": messages, "keys": sorted(storage)}
