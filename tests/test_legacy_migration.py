"""Ask session memory: legacy formats migrated into canonical records (PROTOCOL.md section 7).

`fixtures/legacy_memory.json` holds legacy values and the wire records they
must become; it is run here and by the conformance harness. The tests below
cover what is too large or needs code for a JSON fixture: chunk and content
bounds, host tool projectors, hostile sizes, storage failures.
"""

import asyncio
import json
import time
from typing import Any

import pytest

from agentskit_web.chat.memory.legacy import (
    create_ask_session_memory,
    legacy_content,
    migrate_legacy_messages,
    run_load_case,
)
from agentskit_web.chat.memory.storage import (
    MemoryStorage,
    StorageSecurityError,
    storage_entry_bytes,
)
from agentskit_web.chat.memory.web_storage import MEMORY_SAVE_FAILED, ChatMemoryError
from agentskit_web.protocol.conformance import SUBJECTS
from agentskit_web.protocol.content import ASSISTANT_CONTENT_PREFIX, decode_assistant_content
from agentskit_web.protocol.limits import (
    ASSISTANT_CONTENT_MAX_BYTES,
    ASSISTANT_CONTENT_MAX_RECORDS,
    ASSISTANT_CONTENT_TEXT_MAX_CHARS,
    MEMORY_DEFAULT_MAX_RECORD_BYTES,
)
from agentskit_web.protocol.text_metrics import js_length
from conftest import load_fixture

KEY = "ask:conversation"
LEGACY = "docs-ask:history"
FIXTURE = load_fixture("legacy_memory.json")


def parts_of(content: str) -> list[dict[str, Any]]:
    decoded = decode_assistant_content(content)
    assert decoded.ok and decoded.complete, decoded
    return list(decoded.parts)


def docs(*parts: Any) -> list[dict[str, Any]]:
    return [{"role": "assistant", "parts": list(parts)}]


def frame(instance: str = "w1") -> dict[str, Any]:
    return {
        "protocol": "agentskit.chat.component",
        "version": 1,
        "type": "render",
        "componentKey": "progress",
        "instanceId": instance,
        "props": {"value": 1},
        "fallback": {"kind": "progress", "summary": "Done."},
    }


# -- the fixture -----------------------------------------------------------------------------


def test_fixture_is_registered_for_the_conformance_runner() -> None:
    assert FIXTURE["subject"] == "ask_session_memory_load"
    assert SUBJECTS["ask_session_memory_load"] is run_load_case
    assert 20 <= len(FIXTURE["cases"]) <= 60


@pytest.mark.parametrize("case", FIXTURE["cases"], ids=[c["name"] for c in FIXTURE["cases"]])
def test_fixture_case(case: dict[str, Any]) -> None:
    assert run_load_case(case["input"]) == case["expect"]


def test_fixture_messages_are_canonical_records() -> None:
    for case in FIXTURE["cases"]:
        for message in case["expect"].get("messages", []):
            assert message["status"] == "complete"
            if message["content"].startswith("\x1e"):
                parts_of(message["content"])


# -- shapes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [{}, "x", 1, 1.5, None, True], ids=repr)
def test_non_arrays_are_unmigratable(value: Any) -> None:
    assert migrate_legacy_messages(value) is None


def test_empty_array_is_an_empty_conversation() -> None:
    assert migrate_legacy_messages([]) == []


def test_array_yielding_nothing_is_unmigratable() -> None:
    assert migrate_legacy_messages([{"role": "system", "content": "x"}, None]) is None


def test_legacy_content_of_plain_records() -> None:
    assert legacy_content({"role": "user", "content": ""}) == ""
    assert legacy_content({"role": "user", "text": "t"}) == "t"
    assert legacy_content({"role": "user"}) is None
    assert legacy_content({"role": "user", "parts": []}) is None
    assert legacy_content({"role": "assistant", "parts": []}) == ""


# -- Docs parts: text chunking and bounds --------------------------------------------------------


@pytest.mark.parametrize(
    ("length", "records"),
    [(ASSISTANT_CONTENT_TEXT_MAX_CHARS, 1), (ASSISTANT_CONTENT_TEXT_MAX_CHARS + 1, 2)],
    ids=["at-limit", "one-past"],
)
def test_text_parts_are_chunked_at_16384_chars(length: int, records: int) -> None:
    text = "a" * length
    migrated = migrate_legacy_messages(docs({"kind": "text", "text": text}))
    assert migrated is not None
    parts = parts_of(migrated[0]["content"])
    assert len(parts) == records
    assert "".join(part["text"] for part in parts) == text


def test_chunking_never_splits_a_surrogate_pair() -> None:
    text = "a" + "😀" * ASSISTANT_CONTENT_TEXT_MAX_CHARS
    migrated = migrate_legacy_messages(docs({"kind": "text", "text": text}))
    assert migrated is not None
    parts = parts_of(migrated[0]["content"])
    assert all(js_length(part["text"]) <= ASSISTANT_CONTENT_TEXT_MAX_CHARS for part in parts)
    assert "".join(part["text"] for part in parts) == text
    assert all("\ud83d" not in part["text"] for part in parts)


def test_answer_text_is_chunked_too() -> None:
    markdown = "b" * (ASSISTANT_CONTENT_TEXT_MAX_CHARS * 2 + 5)
    tool = {"kind": "tool", "id": "a", "name": "answer", "args": {"markdown": markdown}}
    migrated = migrate_legacy_messages(docs(tool))
    assert migrated is not None
    assert [len(p["text"]) for p in parts_of(migrated[0]["content"])] == [16_384, 16_384, 5]


def test_record_bound_keeps_the_first_512_records() -> None:
    count = ASSISTANT_CONTENT_MAX_RECORDS + 10
    parts = [{"kind": "text", "text": f"p{i}"} for i in range(count)]
    migrated = migrate_legacy_messages(docs(*parts))
    assert migrated is not None
    kept = parts_of(migrated[0]["content"])
    assert len(kept) == ASSISTANT_CONTENT_MAX_RECORDS
    assert kept[-1]["text"] == f"p{ASSISTANT_CONTENT_MAX_RECORDS - 1}"


def test_exactly_512_records_all_fit() -> None:
    parts = [{"kind": "text", "text": "x"} for _ in range(ASSISTANT_CONTENT_MAX_RECORDS)]
    migrated = migrate_legacy_messages(docs(*parts))
    assert migrated is not None
    assert len(parts_of(migrated[0]["content"])) == ASSISTANT_CONTENT_MAX_RECORDS


def test_byte_bound_keeps_what_fit() -> None:
    parts = [{"kind": "text", "text": "c" * 16_000} for _ in range(20)]
    migrated = migrate_legacy_messages(docs(*parts, {"kind": "text", "text": "tail"}))
    assert migrated is not None
    content = migrated[0]["content"]
    assert len(content.encode("utf-8")) <= ASSISTANT_CONTENT_MAX_BYTES
    kept = parts_of(content)
    assert 0 < len(kept) < 20
    assert all(part["text"] == "c" * 16_000 for part in kept)  # stops, never skips ahead


def test_content_exactly_at_the_byte_bound_is_kept_whole() -> None:
    line_overhead = len('{"kind":"text","text":""}\n')
    room = ASSISTANT_CONTENT_MAX_BYTES - len(ASSISTANT_CONTENT_PREFIX)
    sizes = []
    while room > 0:
        size = min(ASSISTANT_CONTENT_TEXT_MAX_CHARS, room - line_overhead)
        sizes.append(size)
        room -= size + line_overhead
    assert room == 0
    parts = [{"kind": "text", "text": "d" * size} for size in sizes]
    migrated = migrate_legacy_messages(docs(*parts))
    assert migrated is not None
    assert len(migrated[0]["content"].encode("utf-8")) == ASSISTANT_CONTENT_MAX_BYTES
    one_more = migrate_legacy_messages(docs(*parts, {"kind": "text", "text": "e"}))
    assert one_more == migrated


# -- Docs parts: tools ----------------------------------------------------------------------------


def test_other_tools_go_through_project_tool() -> None:
    seen: list[dict[str, Any]] = []

    def project(event: dict[str, Any]) -> Any:
        seen.append(event)
        return frame()

    tool = {"kind": "tool", "id": "w", "name": "progress", "args": {"step": 1}}
    migrated = migrate_legacy_messages(docs(tool), project)
    assert seen == [{"type": "tool", "id": "w", "name": "progress", "args": {"step": 1}}]
    assert migrated is not None
    assert parts_of(migrated[0]["content"]) == [{"kind": "component", "frame": frame()}]


@pytest.mark.parametrize(
    "result",
    [None, {"not": "a frame"}, {**frame(), "componentKey": "Bad Key"}, "text"],
    ids=["none", "junk", "invalid-frame", "string"],
)
def test_invalid_project_tool_results_are_skipped(result: Any) -> None:
    tool = {"kind": "tool", "id": "w", "name": "progress", "args": {}}
    text = {"kind": "text", "text": "after"}
    migrated = migrate_legacy_messages(docs(tool, text), lambda _event: result)
    assert migrated is not None
    assert parts_of(migrated[0]["content"]) == [{"kind": "text", "text": "after"}]


def test_a_raising_project_tool_is_no_result() -> None:
    def explode(_event: dict[str, Any]) -> Any:
        raise RuntimeError("host bug")

    tool = {"kind": "tool", "id": "w", "name": "progress", "args": {}}
    assert migrate_legacy_messages(docs(tool), explode) is None


def test_answer_without_string_markdown_is_a_host_tool() -> None:
    tool = {"kind": "tool", "id": "w", "name": "answer", "args": {"markdown": 3}}
    migrated = migrate_legacy_messages(docs(tool), lambda _event: frame())
    assert migrated is not None
    assert parts_of(migrated[0]["content"])[0]["kind"] == "component"


def test_cite_keeps_at_most_50_sources() -> None:
    sources = [{"title": f"T{i}", "path": f"/p/{i}"} for i in range(60)]
    tool = {"kind": "tool", "id": "c", "name": "cite", "args": {"sources": sources}}
    migrated = migrate_legacy_messages(docs(tool))
    assert migrated is not None
    (part,) = parts_of(migrated[0]["content"])
    assert len(part["frame"]["props"]["sources"]) == 50


# -- hostile sizes ------------------------------------------------------------------------------


def test_many_small_records_migrate_fast_and_keep_the_last_20() -> None:
    value = [{"role": "user", "content": str(i)} for i in range(30_000)]
    raw = json.dumps(value, separators=(",", ":"))
    assert len(raw) < MEMORY_DEFAULT_MAX_RECORD_BYTES
    storage = MemoryStorage(initial={LEGACY: raw})
    started = time.perf_counter()
    loaded = create_ask_session_memory(KEY, [LEGACY], storage).load_now()
    assert time.perf_counter() - started < 5
    assert [m["content"] for m in loaded] == [str(i) for i in range(29_980, 30_000)]
    assert [m["id"] for m in loaded][-1] == "legacy-30000"


def test_a_legacy_value_over_one_mib_is_removed_without_parsing() -> None:
    raw = json.dumps([{"role": "user", "content": "x" * MEMORY_DEFAULT_MAX_RECORD_BYTES}])
    storage = MemoryStorage(initial={LEGACY: raw, "keep": "1"})
    assert create_ask_session_memory(KEY, [LEGACY], storage).load_now() == []
    assert storage.snapshot() == {"keep": "1"}


def test_deep_args_inside_the_parser_bound_do_not_break_migration() -> None:
    deep: Any = "leaf"
    for _ in range(55):
        deep = {"d": deep}
    tool = {"kind": "tool", "id": "w", "name": "progress", "args": deep}
    raw = json.dumps([{"role": "user", "content": "q"}, *docs(tool)])
    storage = MemoryStorage(initial={LEGACY: raw})
    loaded = create_ask_session_memory(KEY, [LEGACY], storage).load_now()
    assert [m["content"] for m in loaded] == ["q"]


# -- the Ask session memory ---------------------------------------------------------------------


def test_legacy_keys_must_be_a_sequence_of_keys() -> None:
    with pytest.raises(TypeError):
        create_ask_session_memory(KEY, LEGACY)


def test_default_storage_is_none_so_nothing_happens() -> None:
    memory = create_ask_session_memory(KEY, [LEGACY])
    assert asyncio.run(memory.load()) == []
    asyncio.run(memory.save([]))
    asyncio.run(memory.clear())


def test_project_tool_reaches_the_migration() -> None:
    tool = {"kind": "tool", "id": "w", "name": "progress", "args": {}}
    storage = MemoryStorage(initial={LEGACY: json.dumps(docs(tool))})
    memory = create_ask_session_memory(KEY, [LEGACY], storage, project_tool=lambda _e: frame())
    (message,) = memory.load_now()
    assert parts_of(message["content"])[0]["frame"] == frame()


def test_migration_then_save_then_reload_round_trips() -> None:
    storage = MemoryStorage(initial={LEGACY: json.dumps([{"role": "user", "content": "q"}])})
    memory = create_ask_session_memory(KEY, [LEGACY], storage)
    loaded = asyncio.run(memory.load())
    answer = {**loaded[0], "id": "a1", "role": "assistant", "content": "answer"}
    asyncio.run(memory.save([*loaded, answer]))
    assert asyncio.run(memory.load()) == [*loaded, answer]
    assert sorted(storage) == [KEY]


def test_migrating_the_same_value_twice_writes_the_same_string() -> None:
    raw = json.dumps([{"role": "user", "content": "q"}, {"role": "assistant", "text": "a"}])
    first, second = MemoryStorage(initial={LEGACY: raw}), MemoryStorage(initial={LEGACY: raw})
    create_ask_session_memory(KEY, [LEGACY], first).load_now()
    create_ask_session_memory(KEY, [LEGACY], second).load_now()
    assert first.snapshot() == second.snapshot()


def test_quota_filled_storage_keeps_junk_and_legacy_and_still_loads() -> None:
    raw = json.dumps([{"role": "user", "content": "legacy question"}])
    initial = {f"junk:{i}": "j" * 500 for i in range(20)} | {LEGACY: raw}
    quota = sum(storage_entry_bytes(k, v) for k, v in initial.items())
    storage = MemoryStorage(quota_bytes=quota, initial=initial)
    memory = create_ask_session_memory(KEY, [LEGACY], storage)
    assert [m["content"] for m in memory.load_now()] == ["legacy question"]
    assert storage.snapshot() == initial
    with pytest.raises(ChatMemoryError) as raised:
        memory.save_now([{**memory.load_now()[0], "content": "new"}])
    assert raised.value.code == MEMORY_SAVE_FAILED
    assert storage.snapshot() == initial


def test_read_only_storage_keeps_legacy_readable_across_loads() -> None:
    raw = json.dumps([{"role": "user", "content": "q"}])
    storage = MemoryStorage(read_only=True, initial={LEGACY: raw})
    memory = create_ask_session_memory(KEY, [LEGACY], storage)
    assert memory.load_now() == memory.load_now()
    assert storage.snapshot() == {LEGACY: raw}


def test_migrated_record_over_the_limit_fails_and_keeps_legacy() -> None:
    raw = json.dumps([{"role": "user", "content": "z" * 300}])
    storage = MemoryStorage(initial={LEGACY: raw})
    memory = create_ask_session_memory(KEY, [LEGACY], storage, max_record_bytes=len(raw) + 1)
    with pytest.raises(ChatMemoryError) as raised:
        asyncio.run(memory.load())
    assert raised.value.code == MEMORY_SAVE_FAILED
    assert storage.snapshot() == {LEGACY: raw}


def test_clear_removes_canonical_and_all_legacy_keys() -> None:
    storage = MemoryStorage(initial={KEY: "x", LEGACY: "y", "old": "z", "keep": "k"})
    asyncio.run(create_ask_session_memory(KEY, [LEGACY, "old"], storage).clear())
    assert storage.snapshot() == {"keep": "k"}


def test_unreadable_storage_gives_an_empty_conversation() -> None:
    storage = MemoryStorage(fail_reads=True, initial={LEGACY: "[]"})
    assert create_ask_session_memory(KEY, [LEGACY], storage).load_now() == []
    with pytest.raises(StorageSecurityError):
        storage.get_item(LEGACY)


SIGN_IN_FRAME = {
    "protocol": "agentskit.chat.component",
    "version": 1,
    "type": "render",
    "componentKey": "form",
    "instanceId": "sign-in",
    "props": {
        "title": "Sign in",
        "fields": [{"name": "password", "label": "Password", "type": "password"}],
        "submitLabel": "Sign in",
    },
    "fallback": {"kind": "form", "summary": "Sign in"},
}


@pytest.mark.parametrize(
    "stored",
    [
        json.dumps(SIGN_IN_FRAME),
        "  \n" + json.dumps(SIGN_IN_FRAME, indent=2),
        ASSISTANT_CONTENT_PREFIX + json.dumps({"kind": "component", "frame": SIGN_IN_FRAME}) + "\n",
    ],
)
@pytest.mark.parametrize("field", ["content", "text"])
def test_a_migrated_legacy_string_is_never_a_live_component(stored: str, field: str) -> None:
    from agentskit_web.chat.message import ChatMessage, message_parts
    from agentskit_web.chat.view.render_plan import render_whole
    from agentskit_web.chat.view.tree import element, text_of, walk

    [migrated] = migrate_legacy_messages([{"role": "assistant", field: stored}]) or []
    message = ChatMessage("m", "assistant", migrated["content"], "complete", migrated["createdAt"])
    parts = message_parts(message)
    assert [part["kind"] for part in parts] == ["text"]
    assert parts[0]["text"] == stored
    root = element("div", None, render_whole(parts))
    tags = {item.tag for _event, item in walk(root) if not isinstance(item, str)}
    assert not tags & {"form", "input", "button", "fieldset"}, tags
    assert "Sign in" in text_of(root)
    # Without the migration rule the same string is a live sign-in form: the test can fail.
    raw = ChatMessage("m", "assistant", stored, "complete", migrated["createdAt"])
    assert "text" not in [part["kind"] for part in message_parts(raw)]
