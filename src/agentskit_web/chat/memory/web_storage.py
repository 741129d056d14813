"""Chat memory over a Web Storage port (PROTOCOL.md section 7).

The stored value under the canonical key is one JSON line: the wire memory
record `{"version": 1, "messages": [...]}` of the last `max_messages`
messages, never larger than `max_record_bytes`.

Why every step is ordered the way it is:
- load reads the canonical key first and only then legacy keys, so data that
  was already migrated always wins over a stale legacy copy;
- a value is measured before it is parsed (a hostile multi-megabyte value
  never reaches the JSON parser) and parsed before it is validated;
- an invalid value is removed best-effort, so one corrupt entry cannot wedge
  every later load, but an error while removing it is swallowed;
- migrated data is written to the canonical key *before* the legacy key is
  removed, and when storage refuses either (full, read-only, SecurityError)
  the migrated messages are still returned: the legacy copy stays readable
  and nothing is lost;
- save encodes and measures first and writes last, so an invalid or oversized
  conversation fails with AK_MEMORY_SAVE_FAILED and the last good stored copy
  stays exactly as it was (storage itself also keeps the old value when
  `set_item` throws).

Decisions where PROTOCOL.md is silent (see the project's compatibility notes):
- migrated messages are cut to the last `max_messages` *before* validation
  (the reference validates all of them first): a legacy history of thousands
  of messages would otherwise exceed the record's 10,000-node cap, be judged
  invalid and be deleted;
- a storage getter that raises is treated like "no storage" (load gives [],
  save and clear do nothing), as a page without storage must keep working;
- a `get_item` that raises during load ends the load with [] and no writes:
  an unreadable canonical value must never be overwritten by a migration;
- a storage write error during save is wrapped as AK_MEMORY_SAVE_FAILED
  (message below), and clear tries every key before raising
  AK_MEMORY_CLEAR_FAILED, so one stuck key does not leave the others behind.
"""

import contextlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, TypeAlias, TypeVar

from ...protocol.dates import format_memory_datetime
from ...protocol.diagnostics import ProtocolError
from ...protocol.limits import MEMORY_DEFAULT_MAX_MESSAGES, MEMORY_DEFAULT_MAX_RECORD_BYTES
from ...protocol.memory_record import validate_memory_record
from ...protocol.text_metrics import utf8_length
from ...protocol.wire_json import JSON_INVALID, dump_json, parse_json
from .storage import Storage

MEMORY_SAVE_FAILED: Final = "AK_MEMORY_SAVE_FAILED"
MEMORY_CLEAR_FAILED: Final = "AK_MEMORY_CLEAR_FAILED"
RECORD_INVALID_MESSAGE: Final = "Web Storage message record is invalid."
RECORD_TOO_LARGE_MESSAGE: Final = "Web Storage message record exceeds the configured byte limit."
STORAGE_WRITE_FAILED_MESSAGE: Final = "Web Storage refused to store the message record."
STORAGE_CLEAR_FAILED_MESSAGE: Final = "Web Storage memory could not be cleared."
MAX_SAFE_INTEGER: Final = 2**53 - 1

_Item = TypeVar("_Item")

Message: TypeAlias = dict[str, Any]
StorageGetter: TypeAlias = Callable[[], Storage | None]
StorageSource: TypeAlias = Storage | StorageGetter | None
MigrationRead: TypeAlias = Callable[[Any, str], Sequence[Mapping[str, Any]] | None]


class ChatMemoryError(ProtocolError):
    """A memory operation failed: `.code` is AK_MEMORY_SAVE_FAILED or AK_MEMORY_CLEAR_FAILED.

    The message is fixed text; the underlying storage error, if any, is the
    exception's `__cause__` and is never shown to the user.
    """


@dataclass(frozen=True)
class WebStorageMigration:
    """Legacy keys to try after the canonical key, and how to read their values.

    `read(value, key)` gets the parsed JSON of one legacy key and returns the
    migrated messages (wire dicts, `createdAt` as a string or a datetime), or
    None when the value is not migratable. A raising `read` counts as None.
    """

    keys: tuple[str, ...]
    read: MigrationRead


def within_byte_limit(text: str, limit: int) -> bool:
    """True when `text` is at most `limit` UTF-8 bytes (and so at most `limit` chars).

    `len` is checked first: it never exceeds the UTF-8 size, so a huge value
    is refused without encoding it.
    """
    return len(text) <= limit and utf8_length(text) <= limit


def _positive_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SAFE_INTEGER:
        raise TypeError(f"{name} must be a positive safe integer.")
    return value


def _wire_message(message: object) -> object:
    """Copy one message for validation, turning a datetime createdAt into its wire string."""
    if not isinstance(message, Mapping):
        return message
    copied = dict(message)
    created = copied.get("createdAt")
    if isinstance(created, datetime):
        copied["createdAt"] = format_memory_datetime(created)
    return copied


def _validated_messages(messages: Iterable[object]) -> list[Message] | None:
    """Validate messages as a memory record; None when invalid (never raises)."""
    try:
        record = validate_memory_record(
            {"version": 1, "messages": [_wire_message(m) for m in messages]}
        )
        return list(record["messages"])
    except Exception:  # anything invalid is simply "not a record"
        return None


def encode_memory_record(messages: Sequence[Mapping[str, Any]], max_record_bytes: int) -> str:
    """The stored JSON line for `messages`, or ChatMemoryError(AK_MEMORY_SAVE_FAILED)."""
    try:
        record = validate_memory_record(
            {"version": 1, "messages": [_wire_message(m) for m in messages]}
        )
        encoded = dump_json(record)
    except Exception as cause:  # every invalid input gets one fixed error
        raise ChatMemoryError(MEMORY_SAVE_FAILED, RECORD_INVALID_MESSAGE) from cause
    if not within_byte_limit(encoded, max_record_bytes):
        raise ChatMemoryError(MEMORY_SAVE_FAILED, RECORD_TOO_LARGE_MESSAGE)
    return encoded


def stored_messages_or_none(raw: object, max_record_bytes: int) -> list[Message] | None:
    """Messages of a stored canonical value: size check, strict parse, validate; else None."""
    if not isinstance(raw, str) or not within_byte_limit(raw, max_record_bytes):
        return None
    parsed = parse_json(raw)
    if parsed is JSON_INVALID:
        return None
    try:
        record = validate_memory_record(parsed)
        return list(record["messages"])
    except Exception:  # a corrupt stored value is just invalid
        return None


def _keep_last(messages: Sequence[_Item], count: int) -> list[_Item]:
    return list(messages[-count:]) if len(messages) > count else list(messages)


def _remove_quietly(storage: Storage, key: str) -> None:
    # Best-effort cleanup of an invalid value: a refusal changes nothing.
    with contextlib.suppress(Exception):
        storage.remove_item(key)


class WebStorageMemory:
    """A chat memory (`load`/`save`/`clear`) over a Storage port; see the module doc.

    The async methods are what a chat controller awaits; the `*_now` methods
    do the same work synchronously (Web Storage is synchronous) for event
    handlers that cannot await.
    """

    def __init__(
        self,
        key: str,
        storage: StorageSource,
        max_messages: int = MEMORY_DEFAULT_MAX_MESSAGES,
        max_record_bytes: int = MEMORY_DEFAULT_MAX_RECORD_BYTES,
        migration: WebStorageMigration | None = None,
    ) -> None:
        if not isinstance(key, str) or key == "":
            raise TypeError("key must not be empty.")
        self.key = key
        self.max_messages = _positive_int(max_messages, "max_messages")
        self.max_record_bytes = _positive_int(max_record_bytes, "max_record_bytes")
        self.migration = migration
        self.legacy_keys = self._legacy_keys(key, migration)
        self._storage = storage

    @staticmethod
    def _legacy_keys(key: str, migration: WebStorageMigration | None) -> tuple[str, ...]:
        if migration is None:
            return ()
        seen: list[str] = []
        for legacy in migration.keys:
            if not isinstance(legacy, str):
                raise TypeError("legacy keys must be strings.")
            if legacy != key and legacy not in seen:
                seen.append(legacy)
        return tuple(seen)

    def storage(self) -> Storage | None:
        """The current Storage, resolving a getter; None when there is none or it raises."""
        source = self._storage
        if source is None or hasattr(source, "get_item"):
            return source  # type: ignore[return-value]
        try:
            resolved = source()
        except Exception:  # an unavailable storage is "no storage"
            return None
        return resolved if resolved is not None and hasattr(resolved, "get_item") else None

    # -- load -------------------------------------------------------------------

    def load_now(self) -> list[Message]:
        """Synchronous `load`."""
        storage = self.storage()
        if storage is None:
            return []
        for candidate in (self.key, *self.legacy_keys):
            try:
                raw = storage.get_item(candidate)
            except Exception:  # unreadable storage: load nothing, write nothing
                return []
            if raw is None:
                continue
            messages = self._read(candidate, raw)
            if messages is None:
                _remove_quietly(storage, candidate)
                continue
            bounded = _keep_last(messages, self.max_messages)
            if candidate != self.key:
                self._adopt_migrated(storage, candidate, bounded)
            return bounded
        return []

    def _read(self, candidate: str, raw: object) -> list[Message] | None:
        if candidate == self.key:
            return stored_messages_or_none(raw, self.max_record_bytes)
        if self.migration is None:
            return None
        if not isinstance(raw, str) or not within_byte_limit(raw, self.max_record_bytes):
            return None
        parsed = parse_json(raw)
        if parsed is JSON_INVALID:
            return None
        try:
            migrated = self.migration.read(parsed, candidate)
        except Exception:  # a raising migration means "not migratable"
            return None
        if migrated is None or isinstance(migrated, str | bytes | Mapping):
            return None
        try:
            # Only the retained window is validated (as `save` does): a long
            # legacy history must not fail the record's node cap and be lost.
            return _validated_messages(_keep_last(list(migrated), self.max_messages))
        except Exception:  # a hostile iterable is not migratable
            return None

    def _adopt_migrated(self, storage: Storage, legacy_key: str, messages: list[Message]) -> None:
        """Write migrated data canonically, then drop the legacy key; tolerate refusal.

        Encoding raises AK_MEMORY_SAVE_FAILED when the record is over the byte
        limit; that happens before any write, so the legacy value is kept.
        """
        encoded = encode_memory_record(messages, self.max_record_bytes)
        try:
            storage.set_item(self.key, encoded)
            storage.remove_item(legacy_key)
        except Exception:  # full or read-only storage: legacy stays readable
            pass

    async def load(self) -> list[Message]:
        """Messages from the canonical key, else the first migratable legacy key, else []."""
        return self.load_now()

    # -- save -------------------------------------------------------------------

    def save_now(self, messages: Sequence[Mapping[str, Any]]) -> str | None:
        """Synchronous `save`; returns the stored string (None without storage).

        A page remembers that string to recognise its own write when another
        tab reports it back (see `storage_sync`).
        """
        storage = self.storage()
        if storage is None:
            return None
        if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Sequence):
            raise ChatMemoryError(MEMORY_SAVE_FAILED, RECORD_INVALID_MESSAGE)
        encoded = encode_memory_record(list(messages[-self.max_messages :]), self.max_record_bytes)
        try:
            storage.set_item(self.key, encoded)
        except Exception as cause:  # quota, read-only, SecurityError
            raise ChatMemoryError(MEMORY_SAVE_FAILED, STORAGE_WRITE_FAILED_MESSAGE) from cause
        return encoded

    async def save(self, messages: Sequence[Mapping[str, Any]]) -> None:
        """Store the last `max_messages` messages; on failure the stored copy is unchanged."""
        self.save_now(messages)

    def serialize(self, messages: Sequence[Mapping[str, Any]]) -> str:
        """The exact string `save` would store (for comparing with another tab's value)."""
        return encode_memory_record(list(messages[-self.max_messages :]), self.max_record_bytes)

    # -- clear ------------------------------------------------------------------

    def clear_now(self) -> None:
        """Synchronous `clear`."""
        storage = self.storage()
        if storage is None:
            return
        failure: Exception | None = None
        for candidate in (self.key, *self.legacy_keys):
            try:
                storage.remove_item(candidate)
            except Exception as error:  # try the remaining keys first
                failure = failure or error
        if failure is not None:
            raise ChatMemoryError(MEMORY_CLEAR_FAILED, STORAGE_CLEAR_FAILED_MESSAGE) from failure

    async def clear(self) -> None:
        """Remove the canonical key and every legacy key (never any other key)."""
        self.clear_now()


def create_web_storage_memory(
    key: str,
    storage: StorageSource,
    max_messages: int = MEMORY_DEFAULT_MAX_MESSAGES,
    max_record_bytes: int = MEMORY_DEFAULT_MAX_RECORD_BYTES,
    migration: WebStorageMigration | None = None,
) -> WebStorageMemory:
    """Create a chat memory over `storage` (a Storage, a getter returning one or None, or None).

    Raises TypeError for an empty key or a non-positive limit, like the
    reference implementation; nothing else about it raises at creation time.
    """
    return WebStorageMemory(key, storage, max_messages, max_record_bytes, migration)
