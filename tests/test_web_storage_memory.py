"""Web Storage memory (PROTOCOL.md section 7): load/save/clear on MemoryStorage, every branch.

Plus the two-tab sync decision. The recurring assertion is "nothing lost":
after any failure the stored copy and unrelated keys are exactly as before.
"""

import asyncio
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentskit_web.chat.memory.storage import (
    MemoryStorage,
    Storage,
    StorageQuotaExceeded,
    StorageSecurityError,
    storage_entry_bytes,
)
from agentskit_web.chat.memory.sync import decide_storage_sync
from agentskit_web.chat.memory.web_storage import (
    MEMORY_CLEAR_FAILED,
    MEMORY_SAVE_FAILED,
    RECORD_INVALID_MESSAGE,
    RECORD_TOO_LARGE_MESSAGE,
    STORAGE_CLEAR_FAILED_MESSAGE,
    STORAGE_WRITE_FAILED_MESSAGE,
    ChatMemoryError,
    WebStorageMemory,
    WebStorageMigration,
    create_web_storage_memory,
    encode_memory_record,
    stored_messages_or_none,
    within_byte_limit,
)
from agentskit_web.protocol.limits import (
    MEMORY_DEFAULT_MAX_MESSAGES,
    MEMORY_DEFAULT_MAX_RECORD_BYTES,
)

KEY = "ask:conversation"
LEGACY = "docs-ask"
OTHER = "site:theme"
WHEN = "2024-05-01T12:00:00.000Z"


def message(index: int, role: str = "user", content: str | None = None) -> dict[str, Any]:
    return {
        "id": f"m{index}",
        "role": role,
        "content": f"message {index}" if content is None else content,
        "status": "complete",
        "createdAt": WHEN,
    }


def record(messages: Sequence[Mapping[str, Any]]) -> str:
    return json.dumps({"version": 1, "messages": list(messages)}, separators=(",", ":"))


def simple_read(value: Any, _key: str) -> list[dict[str, Any]] | None:
    """A test migration: a list of strings becomes user messages."""
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return None
    return [message(i, content=text) for i, text in enumerate(value)]


def memory(
    storage: Any,
    *,
    legacy: tuple[str, ...] = (LEGACY,),
    read: Any = simple_read,
    max_messages: int = MEMORY_DEFAULT_MAX_MESSAGES,
    max_record_bytes: int = MEMORY_DEFAULT_MAX_RECORD_BYTES,
) -> WebStorageMemory:
    migration = WebStorageMigration(keys=legacy, read=read) if legacy else None
    return create_web_storage_memory(KEY, storage, max_messages, max_record_bytes, migration)


class RemoveFails(MemoryStorage):
    """Writes work, but removing a chosen key throws (a patched removeItem)."""

    def __init__(self, refuse: set[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.refuse = refuse

    def remove_item(self, key: str) -> None:
        if key in self.refuse:
            raise StorageSecurityError("denied")
        super().remove_item(key)


class Recording(MemoryStorage):
    """Counts writes, to prove that a path writes nothing."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.writes: list[tuple[str, str | None]] = []

    def set_item(self, key: str, value: str) -> None:
        self.writes.append((key, value))
        super().set_item(key, value)

    def remove_item(self, key: str) -> None:
        self.writes.append((key, None))
        super().remove_item(key)


# -- creation ---------------------------------------------------------------------------


def test_creation_checks_key_and_limits() -> None:
    with pytest.raises(TypeError):
        create_web_storage_memory("", MemoryStorage())
    for bad in (0, -1, True, 1.5, 2**53):
        with pytest.raises(TypeError):
            create_web_storage_memory(KEY, MemoryStorage(), max_messages=bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            create_web_storage_memory(KEY, MemoryStorage(), max_record_bytes=bad)  # type: ignore[arg-type]
    created = create_web_storage_memory(KEY, MemoryStorage(), max_messages=2**53 - 1)
    assert created.max_messages == 2**53 - 1


def test_defaults_follow_the_spec() -> None:
    created = create_web_storage_memory(KEY, MemoryStorage())
    assert created.max_messages == 20 == MEMORY_DEFAULT_MAX_MESSAGES
    assert created.max_record_bytes == 1_048_576 == MEMORY_DEFAULT_MAX_RECORD_BYTES
    assert created.legacy_keys == ()


def test_legacy_keys_drop_the_canonical_key_and_duplicates() -> None:
    created = memory(MemoryStorage(), legacy=(LEGACY, KEY, LEGACY, "b"))
    assert created.legacy_keys == (LEGACY, "b")
    with pytest.raises(TypeError):
        memory(MemoryStorage(), legacy=(LEGACY, 3))  # type: ignore[arg-type]


# -- no storage ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [None, lambda: None, lambda: (_ for _ in ()).throw(StorageSecurityError("x")), lambda: 42],
    ids=["none", "getter-none", "getter-raises", "getter-not-storage"],
)
def test_no_storage_loads_nothing_and_saves_nothing(source: Any) -> None:
    mem = memory(source)
    assert asyncio.run(mem.load()) == []
    asyncio.run(mem.save([message(1)]))
    asyncio.run(mem.clear())
    assert mem.save_now([message(1)]) is None


def test_storage_getter_is_resolved_on_every_call() -> None:
    current: list[Storage | None] = [None]
    mem = memory(lambda: current[0])
    assert mem.load_now() == []
    storage = MemoryStorage()
    current[0] = storage
    mem.save_now([message(1)])
    assert mem.load_now() == [message(1)]


# -- load: canonical ----------------------------------------------------------------------


def test_load_of_an_empty_storage_is_empty() -> None:
    assert asyncio.run(memory(MemoryStorage()).load()) == []


def test_load_returns_the_canonical_record_projected() -> None:
    extra = {**message(1), "unknownField": True}
    storage = MemoryStorage(initial={KEY: record([extra, message(2, "assistant")])})
    assert memory(storage).load_now() == [message(1), message(2, "assistant")]


def test_load_keeps_only_the_last_max_messages_without_rewriting() -> None:
    stored = record([message(i) for i in range(5)])
    storage = Recording(initial={KEY: stored})
    loaded = memory(storage, max_messages=2).load_now()
    assert [m["id"] for m in loaded] == ["m3", "m4"]
    assert storage.writes == [] and storage.get_item(KEY) == stored


def test_canonical_wins_over_legacy_and_legacy_is_untouched() -> None:
    storage = MemoryStorage(initial={KEY: record([message(1)]), LEGACY: json.dumps(["old"])})
    assert memory(storage).load_now() == [message(1)]
    assert storage.snapshot()[LEGACY] == json.dumps(["old"])


@pytest.mark.parametrize(
    "raw",
    [
        "not json",
        "",
        "{",
        "null",
        "[]",
        '{"version":2,"messages":[]}',
        '{"version":"1","messages":[]}',
        '{"version":true,"messages":[]}',
        '{"version":1}',
        '{"version":1,"messages":{}}',
        '{"version":1,"version":1,"messages":[]}',
        '{"version":1,"messages":[{"id":"a","role":"user","content":"x","status":"complete",'
        '"createdAt":"2024-02-30T00:00:00.000Z"}]}',
        '{"version":1,"messages":[{"id":"","role":"user","content":"x","status":"complete",'
        '"createdAt":"2024-01-01T00:00:00.000Z"}]}',
        '{"version":1,"messages":[{"id":"a","role":"robot","content":"x","status":"complete",'
        '"createdAt":"2024-01-01T00:00:00.000Z"}]}',
        '{"version":1,"messages":[],"x":NaN}',
        "[" * 100_000 + "]" * 100_000,
        '{"version":1,"messages":[' + "[" * 40 + "]" * 40 + "]}",
    ],
    ids=lambda raw: raw[:40],
)
def test_corrupt_canonical_is_removed_and_unrelated_keys_stay(raw: str) -> None:
    storage = MemoryStorage(initial={KEY: raw, OTHER: "dark"})
    assert memory(storage, legacy=()).load_now() == []
    assert storage.snapshot() == {OTHER: "dark"}


def test_corrupt_canonical_falls_through_to_legacy() -> None:
    storage = MemoryStorage(initial={KEY: "{corrupt", LEGACY: json.dumps(["from legacy"])})
    loaded = memory(storage).load_now()
    assert [m["content"] for m in loaded] == ["from legacy"]
    assert LEGACY not in storage
    assert stored_messages_or_none(storage.get_item(KEY), MEMORY_DEFAULT_MAX_RECORD_BYTES) == loaded


def test_corrupt_canonical_on_read_only_storage_is_skipped_quietly() -> None:
    storage = MemoryStorage(read_only=True, initial={KEY: "{corrupt", OTHER: "x"})
    assert memory(storage, legacy=()).load_now() == []
    assert storage.snapshot() == {KEY: "{corrupt", OTHER: "x"}


def _at_limit(messages: list[dict[str, Any]]) -> tuple[str, int]:
    encoded = encode_memory_record(messages, MEMORY_DEFAULT_MAX_RECORD_BYTES)
    return encoded, len(encoded.encode("utf-8"))


@pytest.mark.parametrize("text", ["plain", "é" * 10, "😀" * 10], ids=["ascii", "bmp", "astral"])
def test_canonical_exactly_at_the_byte_limit_loads(text: str) -> None:
    encoded, size = _at_limit([message(1, content=text)])
    storage = MemoryStorage(initial={KEY: encoded})
    assert memory(storage, max_record_bytes=size).load_now()[0]["content"] == text
    assert storage.get_item(KEY) == encoded


@pytest.mark.parametrize("text", ["plain", "é" * 10, "😀" * 10], ids=["ascii", "bmp", "astral"])
def test_canonical_one_byte_past_the_limit_is_invalid(text: str) -> None:
    encoded, size = _at_limit([message(1, content=text)])
    storage = MemoryStorage(initial={KEY: encoded})
    assert memory(storage, max_record_bytes=size - 1, legacy=()).load_now() == []
    assert KEY not in storage


def test_byte_limit_counts_utf8_bytes_not_chars() -> None:
    assert within_byte_limit("é", 2) and not within_byte_limit("é", 1)
    assert within_byte_limit("😀", 4) and not within_byte_limit("😀", 3)
    assert within_byte_limit("\ud800", 3) and not within_byte_limit("\ud800", 2)
    assert within_byte_limit("", 0)


def test_unreadable_storage_loads_nothing_and_writes_nothing() -> None:
    storage = Recording(initial={KEY: "{corrupt", LEGACY: json.dumps(["x"])})
    storage.fail_reads = True
    assert memory(storage).load_now() == []
    assert storage.writes == []
    assert storage.snapshot() == {KEY: "{corrupt", LEGACY: json.dumps(["x"])}


def test_canonical_unreadable_never_gets_overwritten_by_legacy() -> None:
    class CanonicalUnreadable(Recording):
        def get_item(self, key: str) -> str | None:
            if key == KEY:
                raise StorageSecurityError("denied")
            return super().get_item(key)

    storage = CanonicalUnreadable(initial={KEY: record([message(1)]), LEGACY: json.dumps(["x"])})
    assert memory(storage).load_now() == []
    assert storage.writes == []


def test_a_non_string_stored_value_is_invalid() -> None:
    class Odd(MemoryStorage):
        def get_item(self, key: str) -> Any:
            return 42 if key == KEY else super().get_item(key)

    storage = Odd(initial={LEGACY: json.dumps(["x"])})
    assert [m["content"] for m in memory(storage).load_now()] == ["x"]


# -- load: legacy --------------------------------------------------------------------------


def test_legacy_is_migrated_written_canonically_and_removed() -> None:
    storage = MemoryStorage(initial={LEGACY: json.dumps(["a", "b"]), OTHER: "keep"})
    mem = memory(storage)
    loaded = asyncio.run(mem.load())
    assert [m["content"] for m in loaded] == ["a", "b"]
    assert storage.snapshot() == {OTHER: "keep", KEY: mem.serialize(loaded)}
    assert mem.load_now() == loaded


def test_legacy_keys_are_tried_in_order_skipping_missing_and_invalid() -> None:
    storage = MemoryStorage(initial={"second": json.dumps({"not": "a list"}), "third": '["t"]'})
    mem = memory(storage, legacy=("first", "second", "third", "fourth"))
    assert [m["content"] for m in mem.load_now()] == ["t"]
    assert sorted(storage) == [KEY]


def test_a_later_legacy_key_is_left_alone_once_one_migrates() -> None:
    storage = MemoryStorage(initial={"first": '["1"]', "second": '["2"]'})
    mem = memory(storage, legacy=("first", "second"))
    assert [m["content"] for m in mem.load_now()] == ["1"]
    assert sorted(storage) == [KEY, "second"]


def test_legacy_is_ignored_without_a_migration() -> None:
    storage = MemoryStorage(initial={LEGACY: '["x"]'})
    assert memory(storage, legacy=()).load_now() == []
    assert storage.snapshot() == {LEGACY: '["x"]'}


@pytest.mark.parametrize(
    "raw",
    ["not json", '{"a":1,"a":2}', "[1, 2]", '"text"', "[" * 70 + "]" * 70, '["x", NaN]'],
    ids=["non-json", "duplicate-keys", "unreadable-shape", "string", "deep", "nan"],
)
def test_unmigratable_legacy_is_removed(raw: str) -> None:
    storage = MemoryStorage(initial={LEGACY: raw, OTHER: "keep"})
    assert memory(storage).load_now() == []
    assert storage.snapshot() == {OTHER: "keep"}


def _raising_read(_value: Any, _key: str) -> Any:
    raise RuntimeError("migration bug")


def _invalid_messages(_value: Any, _key: str) -> Any:
    return [{"id": "", "role": "user"}]


def _string_result(_value: Any, _key: str) -> Any:
    return "abc"


def _mapping_result(_value: Any, _key: str) -> Any:
    return {"id": "x"}


def _broken_iterable(_value: Any, _key: str) -> Any:
    class Broken(Sequence[Any]):
        def __getitem__(self, index: Any) -> Any:
            raise RuntimeError("hostile")

        def __len__(self) -> int:
            raise RuntimeError("hostile")

    return Broken()


@pytest.mark.parametrize(
    "read",
    [_raising_read, _invalid_messages, _string_result, _mapping_result, _broken_iterable],
)
def test_a_failing_migration_counts_as_unmigratable(read: Any) -> None:
    storage = MemoryStorage(initial={LEGACY: '["x"]', OTHER: "keep"})
    assert memory(storage, read=read).load_now() == []
    assert storage.snapshot() == {OTHER: "keep"}


def test_migration_read_gets_the_parsed_value_and_its_key() -> None:
    seen: list[tuple[Any, str]] = []

    def read(value: Any, key: str) -> list[dict[str, Any]]:
        seen.append((value, key))
        return [message(1)]

    memory(MemoryStorage(initial={LEGACY: '{"a":[1]}'}), read=read).load_now()
    assert seen == [({"a": [1]}, LEGACY)]


def test_migration_may_return_datetimes_and_tuples() -> None:
    def read(_value: Any, _key: str) -> tuple[dict[str, Any], ...]:
        moment = datetime(2024, 1, 2, 3, 4, 5, 678_000, tzinfo=UTC)
        return ({**message(1), "createdAt": moment},)

    loaded = memory(MemoryStorage(initial={LEGACY: "[]"}), read=read).load_now()
    assert loaded[0]["createdAt"] == "2024-01-02T03:04:05.678Z"


def test_empty_migration_result_is_written_as_an_empty_record() -> None:
    storage = MemoryStorage(initial={LEGACY: "[]"})
    assert memory(storage).load_now() == []
    assert storage.snapshot() == {KEY: '{"version":1,"messages":[]}'}


def test_migrated_data_keeps_only_the_last_max_messages() -> None:
    storage = MemoryStorage(initial={LEGACY: json.dumps([str(i) for i in range(30)])})
    loaded = memory(storage).load_now()
    assert [m["content"] for m in loaded] == [str(i) for i in range(10, 30)]
    assert len(json.loads(storage.snapshot()[KEY])["messages"]) == 20


def test_migrated_data_is_returned_when_storage_is_read_only() -> None:
    storage = MemoryStorage(read_only=True, initial={LEGACY: '["a"]', OTHER: "keep"})
    mem = memory(storage)
    assert [m["content"] for m in mem.load_now()] == ["a"]
    assert storage.snapshot() == {LEGACY: '["a"]', OTHER: "keep"}
    assert [m["content"] for m in mem.load_now()] == ["a"]  # still readable next time


def test_migrated_data_is_returned_when_storage_is_full() -> None:
    initial = {LEGACY: '["a"]', OTHER: "keep"}
    quota = sum(storage_entry_bytes(k, v) for k, v in initial.items())
    storage = MemoryStorage(quota_bytes=quota, initial=initial)
    assert [m["content"] for m in memory(storage).load_now()] == ["a"]
    assert storage.snapshot() == initial


def test_legacy_stays_when_only_its_removal_fails() -> None:
    storage = RemoveFails({LEGACY}, initial={LEGACY: '["a"]'})
    mem = memory(storage)
    loaded = mem.load_now()
    assert [m["content"] for m in loaded] == ["a"]
    assert storage.snapshot() == {LEGACY: '["a"]', KEY: mem.serialize(loaded)}
    assert mem.load_now() == loaded  # the canonical copy now wins


def test_migrated_data_over_the_byte_limit_fails_and_keeps_legacy() -> None:
    raw = json.dumps(["x" * 200])
    storage = Recording(initial={LEGACY: raw, OTHER: "keep"})
    mem = memory(storage, max_record_bytes=len(raw) + 10)
    with pytest.raises(ChatMemoryError) as raised:
        asyncio.run(mem.load())
    assert raised.value.code == MEMORY_SAVE_FAILED
    assert raised.value.message == RECORD_TOO_LARGE_MESSAGE
    assert storage.writes == []
    assert storage.snapshot() == {LEGACY: raw, OTHER: "keep"}


def test_migrated_data_exactly_at_the_byte_limit_is_adopted() -> None:
    raw = json.dumps(["x" * 200])
    encoded = encode_memory_record(simple_read(["x" * 200], LEGACY) or [], 10**6)
    storage = MemoryStorage(initial={LEGACY: raw})
    mem = memory(storage, max_record_bytes=len(encoded))
    assert len(mem.load_now()) == 1
    assert storage.snapshot() == {KEY: encoded}


@pytest.mark.parametrize("extra", [0, 1], ids=["at-limit", "one-past"])
def test_legacy_raw_size_limit(extra: int) -> None:
    raw = json.dumps(["y" * 50])
    storage = MemoryStorage(initial={LEGACY: raw})
    # the migrated record is larger than the raw value: allow it, measure the raw one
    mem = memory(storage, max_record_bytes=len(raw) - extra)
    if extra:
        assert mem.load_now() == []
        assert LEGACY not in storage
    else:
        with pytest.raises(ChatMemoryError):
            mem.load_now()  # raw fits; the canonical record does not
        assert LEGACY in storage


# -- save -------------------------------------------------------------------------------------


def test_save_then_load_round_trips() -> None:
    storage = MemoryStorage()
    mem = memory(storage)
    messages = [message(1), message(2, "assistant")]
    asyncio.run(mem.save(messages))
    assert storage.get_item(KEY) == record(messages)
    assert asyncio.run(mem.load()) == messages


def test_save_returns_the_stored_string() -> None:
    storage = MemoryStorage()
    mem = memory(storage)
    assert mem.save_now([message(1)]) == storage.get_item(KEY) == mem.serialize([message(1)])


def test_save_keeps_only_the_last_max_messages() -> None:
    storage = MemoryStorage()
    mem = memory(storage, max_messages=3)
    mem.save_now([message(i) for i in range(10)])
    assert [m["id"] for m in mem.load_now()] == ["m7", "m8", "m9"]


def test_save_validates_only_the_retained_window() -> None:
    storage = MemoryStorage()
    mem = memory(storage, max_messages=1)
    mem.save_now([{"broken": True}, message(1)])
    assert mem.load_now() == [message(1)]


def test_save_accepts_datetime_created_at_and_drops_unknown_fields() -> None:
    storage = MemoryStorage()
    mem = memory(storage)
    moment = datetime(2024, 3, 4, 5, 6, 7, 891_234, tzinfo=UTC)
    mem.save_now([{**message(1), "createdAt": moment, "draft": "x"}])
    assert mem.load_now() == [{**message(1), "createdAt": "2024-03-04T05:06:07.891Z"}]


@pytest.mark.parametrize(
    "messages",
    [
        [{**message(1), "createdAt": "yesterday"}],
        [{**message(1), "status": "done"}],
        [{**message(1), "metadata": {"n": float("nan")}}],
        [{**message(1), "content": None}],
        [42],
        {"not": "a list"},
        "string",
    ],
    ids=["date", "status", "nan", "content", "item", "mapping", "string"],
)
def test_invalid_save_fails_and_keeps_the_previous_value(messages: Any) -> None:
    storage = MemoryStorage(initial={KEY: record([message(0)]), OTHER: "keep"})
    before = storage.snapshot()
    with pytest.raises(ChatMemoryError) as raised:
        asyncio.run(memory(storage).save(messages))
    assert (raised.value.code, raised.value.message) == (MEMORY_SAVE_FAILED, RECORD_INVALID_MESSAGE)
    assert storage.snapshot() == before


def test_save_exactly_at_the_byte_limit_succeeds_and_one_past_fails() -> None:
    messages = [message(1, content="é😀x")]
    size = len(encode_memory_record(messages, 10**6).encode("utf-8"))
    at_limit = MemoryStorage()
    memory(at_limit, max_record_bytes=size).save_now(messages)
    assert stored_messages_or_none(at_limit.get_item(KEY), size) == messages
    past = MemoryStorage(initial={KEY: record([message(0)])})
    with pytest.raises(ChatMemoryError) as raised:
        memory(past, max_record_bytes=size - 1).save_now(messages)
    assert raised.value.code == MEMORY_SAVE_FAILED
    assert raised.value.message == RECORD_TOO_LARGE_MESSAGE
    assert past.get_item(KEY) == record([message(0)])


def test_save_on_read_only_storage_fails_and_keeps_the_stored_copy() -> None:
    storage = MemoryStorage(read_only=True, initial={KEY: record([message(0)])})
    with pytest.raises(ChatMemoryError) as raised:
        memory(storage).save_now([message(0), message(1)])
    assert raised.value.code == MEMORY_SAVE_FAILED
    assert raised.value.message == STORAGE_WRITE_FAILED_MESSAGE
    assert isinstance(raised.value.__cause__, StorageSecurityError)
    assert storage.get_item(KEY) == record([message(0)])


def test_save_on_full_storage_fails_and_keeps_the_stored_copy() -> None:
    stored = record([message(0)])
    storage = MemoryStorage(quota_bytes=storage_entry_bytes(KEY, stored), initial={KEY: stored})
    with pytest.raises(ChatMemoryError) as raised:
        memory(storage).save_now([message(0), message(1)])
    assert isinstance(raised.value.__cause__, StorageQuotaExceeded)
    assert storage.get_item(KEY) == stored
    memory(storage).save_now([message(0)])  # the same size still fits


def test_a_failed_save_leaves_the_callers_messages_alone() -> None:
    messages = [message(1)]
    snapshot = json.dumps(messages)
    with pytest.raises(ChatMemoryError):
        memory(MemoryStorage(read_only=True)).save_now(messages)
    assert json.dumps(messages) == snapshot


# -- clear -----------------------------------------------------------------------------------


def test_clear_removes_the_key_and_every_legacy_key_only() -> None:
    storage = MemoryStorage(initial={KEY: "x", LEGACY: "y", "older": "z", OTHER: "keep"})
    asyncio.run(memory(storage, legacy=(LEGACY, "older", "absent")).clear())
    assert storage.snapshot() == {OTHER: "keep"}


def test_clear_tries_every_key_before_reporting_a_failure() -> None:
    storage = RemoveFails({KEY}, initial={KEY: "x", LEGACY: "y", OTHER: "keep"})
    with pytest.raises(ChatMemoryError) as raised:
        memory(storage).clear_now()
    assert raised.value.code == MEMORY_CLEAR_FAILED
    assert raised.value.message == STORAGE_CLEAR_FAILED_MESSAGE
    assert storage.snapshot() == {KEY: "x", OTHER: "keep"}


def test_clear_on_read_only_storage_fails_and_keeps_everything() -> None:
    storage = MemoryStorage(read_only=True, initial={KEY: "x", OTHER: "keep"})
    with pytest.raises(ChatMemoryError):
        asyncio.run(memory(storage).clear())
    assert storage.snapshot() == {KEY: "x", OTHER: "keep"}


# -- properties: nothing lost -------------------------------------------------------------

_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30)
_SAVES = st.lists(st.lists(_TEXT, min_size=0, max_size=4), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(
    saves=_SAVES, quota=st.integers(min_value=0, max_value=2_000), read_only_at=st.integers(0, 9)
)
def test_stored_copy_is_always_the_last_successful_save(
    saves: list[list[str]], quota: int, read_only_at: int
) -> None:
    storage = MemoryStorage(quota_bytes=quota, initial={})
    mem = memory(storage, legacy=(), max_messages=3)
    last_good: list[dict[str, Any]] | None = None
    for step, texts in enumerate(saves):
        storage.read_only = step >= read_only_at
        attempt = [message(i, content=text) for i, text in enumerate(texts)]
        try:
            mem.save_now(attempt)
        except ChatMemoryError:
            pass
        else:
            last_good = attempt[-3:]
        storage.read_only = False
        assert mem.load_now() == ([] if last_good is None else last_good)


@settings(max_examples=80, deadline=None)
@given(raw=st.text(max_size=200), other=st.text(max_size=20))
def test_load_of_any_stored_text_never_raises_or_touches_other_keys(raw: str, other: str) -> None:
    storage = MemoryStorage(initial={KEY: raw, LEGACY: raw, OTHER: other})
    loaded = memory(storage).load_now()
    assert isinstance(loaded, list)
    assert storage.get_item(OTHER) == other


# -- two tabs -------------------------------------------------------------------------------


def test_sync_ignores_unrelated_keys() -> None:
    decision = decide_storage_sync(key=KEY, event_key=OTHER, incoming="x", last_known=None)
    assert decision.action == "ignore" and decision.last_known is None


def test_sync_replaces_with_the_other_tabs_conversation() -> None:
    stored = record([message(1)])
    decision = decide_storage_sync(key=KEY, event_key=KEY, incoming=stored, last_known=None)
    assert decision.action == "replace"
    assert decision.messages == [message(1)]
    assert decision.last_known == stored


def test_sync_ignores_an_echo_of_its_own_value() -> None:
    stored = record([message(1)])
    decision = decide_storage_sync(key=KEY, event_key=KEY, incoming=stored, last_known=stored)
    assert decision.action == "ignore" and decision.last_known == stored


def test_sync_defers_while_a_turn_is_running() -> None:
    decision = decide_storage_sync(
        key=KEY, event_key=KEY, incoming=record([]), last_known=None, busy=True
    )
    assert decision.action == "defer" and decision.last_known is None


def test_sync_clears_when_the_other_tab_cleared() -> None:
    stored = record([message(1)])
    for event_key in (KEY, None):
        decision = decide_storage_sync(
            key=KEY, event_key=event_key, incoming=None, last_known=stored
        )
        assert decision.action == "replace" and decision.messages == []
        assert decision.last_known is None
    nothing_known = decide_storage_sync(key=KEY, event_key=None, incoming=None, last_known=None)
    assert nothing_known.action == "ignore"


def test_sync_ignores_an_invalid_or_oversized_value() -> None:
    stored = record([message(1)])
    for incoming in ("{corrupt", record([{"id": ""}])):
        decision = decide_storage_sync(key=KEY, event_key=KEY, incoming=incoming, last_known=stored)
        assert decision.action == "ignore" and decision.last_known == stored
    oversized = decide_storage_sync(
        key=KEY, event_key=KEY, incoming=stored, last_known=None, max_record_bytes=10
    )
    assert oversized.action == "ignore"


def test_two_tabs_converge_without_a_write_loop() -> None:
    """Simulate two pages over one storage: each adopts the other's save exactly once."""
    shared = MemoryStorage()
    tab_a, tab_b = memory(shared, legacy=()), memory(shared, legacy=())
    known = {"a": None, "b": None}  # type: dict[str, str | None]
    shown: dict[str, list[dict[str, Any]]] = {"a": [], "b": []}
    events: list[tuple[str, str | None]] = []  # (receiving tab, new value)

    def save(tab: str, mem: WebStorageMemory, messages: list[dict[str, Any]]) -> None:
        before = shared.get_item(KEY)
        known[tab] = mem.save_now(messages)
        shown[tab] = messages
        if shared.get_item(KEY) != before:  # browsers fire only on a change
            events.append(("b" if tab == "a" else "a", shared.get_item(KEY)))

    save("a", tab_a, [message(1)])
    rounds = 0
    while events:
        rounds += 1
        assert rounds < 10, "write loop"
        tab, incoming = events.pop(0)
        decision = decide_storage_sync(
            key=KEY, event_key=KEY, incoming=incoming, last_known=known[tab]
        )
        if decision.action == "replace":
            shown[tab], known[tab] = decision.messages, decision.last_known
            # a page that re-saves what it shows writes the same string: no event
            save(tab, tab_b if tab == "b" else tab_a, shown[tab])
    assert shown["a"] == shown["b"] == [message(1)]
    assert rounds == 1


def test_only_the_retained_window_of_migrated_data_is_validated() -> None:
    def read(_value: Any, _key: str) -> list[Any]:
        return [{"broken": True}] * 5_000 + [message(1)]

    storage = MemoryStorage(initial={LEGACY: "[]"})
    assert memory(storage, read=read, max_messages=1).load_now() == [message(1)]
    assert LEGACY not in storage
