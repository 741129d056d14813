"""project_ask_event / project_ask_messages and the safe cite hrefs (PROTOCOL.md section 5)."""

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentskit_web.chat import project_ask_event, project_ask_messages
from agentskit_web.chat.source_href import safe_source_href
from agentskit_web.protocol import AssistantContentEncoder, decode_component_frame
from agentskit_web.protocol.conformance import SUBJECTS
from agentskit_web.protocol.limits import (
    ASK_TEXT_DELTA_MAX_CHARS,
    COMPONENT_FALLBACK_SUMMARY_MAX_CHARS,
    PORTABLE_URL_MAX_CHARS,
    SOURCE_LIST_MAX_SOURCES,
    SOURCE_TITLE_MAX_CHARS,
)
from agentskit_web.protocol.source_list import is_portable_url, source_list_props_or_none
from agentskit_web.protocol.text_metrics import js_length

EMOJI = "\U0001f600"  # 2 UTF-16 units


def tool(name: str, args: dict[str, Any], tool_id: str = "call-1") -> dict[str, Any]:
    return {"type": "tool", "id": tool_id, "name": name, "args": args}


def cite(*sources: Any, tool_id: str = "sources-r1") -> dict[str, Any]:
    return tool("cite", {"sources": list(sources)}, tool_id)


def frame_of(event: dict[str, Any]) -> dict[str, Any]:
    projection = project_ask_event(event)
    assert projection is not None and projection["kind"] == "component"
    frame: dict[str, Any] = projection["frame"]
    return frame


def valid_frame(key: str = "link-card", instance: str = "card-1") -> dict[str, Any]:
    return {
        "protocol": "agentskit.chat.component",
        "version": 1,
        "type": "render",
        "componentKey": key,
        "instanceId": instance,
        "props": {"title": "Docs", "url": "/docs"},
        "fallback": {"kind": key, "summary": "Docs"},
    }


# -- text, answer, error, done ---------------------------------------------------------------


def test_text_delta_is_text() -> None:
    assert project_ask_event({"type": "text", "delta": "Hi"}) == {"kind": "text", "text": "Hi"}


def test_empty_text_delta_is_dropped() -> None:
    assert project_ask_event({"type": "text", "delta": ""}) is None


def test_answer_markdown_is_text() -> None:
    event = tool("answer", {"markdown": "# Title\n\nBody"})
    assert project_ask_event(event) == {"kind": "text", "text": "# Title\n\nBody"}


def test_empty_answer_markdown_is_dropped() -> None:
    assert project_ask_event(tool("answer", {"markdown": ""})) is None


def test_answer_without_string_markdown_goes_to_the_host_callback() -> None:
    seen: list[dict[str, Any]] = []

    def host(event: dict[str, Any]) -> None:
        seen.append(event)

    assert project_ask_event(tool("answer", {"markdown": 3}), host) is None
    assert seen and seen[0]["name"] == "answer"


def test_error_is_terminal_with_its_message() -> None:
    event = {"type": "error", "message": "Upstream failed.", "code": "ASK_TIMEOUT"}
    assert project_ask_event(event) == {"kind": "error", "message": "Upstream failed."}


def test_done_is_terminal() -> None:
    assert project_ask_event({"type": "done", "model": "m"}) == {"kind": "done"}


@pytest.mark.parametrize(
    "event",
    [
        {"type": "text", "delta": "x", "extra": 1},
        {"type": "thinking", "delta": "x"},
        {"type": "text"},
        {"type": "text", "delta": 3},
        {"type": "error", "message": ""},
        {"type": "tool", "id": "a", "name": "cite", "args": []},
        {"delta": "x"},
        None,
        [],
        "not json",
        42,
    ],
)
def test_invalid_events_are_inert(event: Any) -> None:
    assert project_ask_event(event) is None


def test_json_text_event_is_accepted() -> None:
    assert project_ask_event('{"type":"text","delta":"a"}') == {"kind": "text", "text": "a"}


def test_hostile_mapping_is_inert() -> None:
    class Hostile(dict):  # type: ignore[type-arg]
        def get(self, *_args: Any) -> Any:
            raise RuntimeError("boom")

        def items(self) -> Any:
            raise RuntimeError("boom")

    assert project_ask_event(Hostile(type="text", delta="x")) is None


# -- cite -> source-list ---------------------------------------------------------------------


def test_cite_builds_a_source_list_frame() -> None:
    frame = frame_of(
        cite(
            {"title": "Install", "path": "/docs/install", "anchor": "step 2"},
            {"title": "API", "path": "https://example.com/api?x=1"},
        )
    )
    assert frame == {
        "protocol": "agentskit.chat.component",
        "version": 1,
        "type": "render",
        "componentKey": "source-list",
        "instanceId": "sources-r1",
        "props": {
            "label": "Sources",
            "sources": [
                {"id": "source-1", "title": "Install", "url": "/docs/install#step%202"},
                {"id": "source-2", "title": "API", "url": "https://example.com/api?x=1"},
            ],
        },
        "fallback": {"kind": "source-list", "summary": "Sources: Install, API."},
    }
    assert decode_component_frame(frame).ok
    assert source_list_props_or_none(frame["props"]) is not None


def test_cite_skips_unusable_sources_keeping_original_ids() -> None:
    frame = frame_of(
        cite(
            {"title": "  ", "path": "/a"},
            {"title": 3, "path": "/b"},
            {"title": "No path"},
            {"title": "Bad", "path": "javascript:alert(1)"},
            "not an object",
            {"title": "Good", "path": "/good"},
        )
    )
    assert [s["id"] for s in frame["props"]["sources"]] == ["source-6"]


def test_cite_without_usable_sources_is_inert() -> None:
    assert project_ask_event(cite({"title": "x", "path": "data:text/html,x"})) is None
    assert project_ask_event(cite()) is None
    assert project_ask_event(tool("cite", {"sources": "nope"})) is None
    assert project_ask_event(tool("cite", {})) is None


def test_cite_title_cut_to_256_chars_without_splitting_a_pair() -> None:
    at_limit = "a" * SOURCE_TITLE_MAX_CHARS
    over = "a" * (SOURCE_TITLE_MAX_CHARS - 1) + EMOJI
    frame = frame_of(cite({"title": at_limit, "path": "/a"}, {"title": over, "path": "/b"}))
    titles = [s["title"] for s in frame["props"]["sources"]]
    assert titles[0] == at_limit
    assert titles[1] == "a" * (SOURCE_TITLE_MAX_CHARS - 1)


def test_cite_keeps_at_most_50_sources() -> None:
    sources = [{"title": f"T{i}", "path": f"/p{i}"} for i in range(SOURCE_LIST_MAX_SOURCES + 10)]
    frame = frame_of(cite(*sources))
    assert len(frame["props"]["sources"]) == SOURCE_LIST_MAX_SOURCES
    assert frame["props"]["sources"][-1]["id"] == f"source-{SOURCE_LIST_MAX_SOURCES}"


def test_cite_counts_50_after_skipping() -> None:
    sources = [{"title": "bad", "path": "javascript:x"}] * 5
    sources += [{"title": f"T{i}", "path": f"/p{i}"} for i in range(SOURCE_LIST_MAX_SOURCES)]
    frame = frame_of(cite(*sources))
    ids = [s["id"] for s in frame["props"]["sources"]]
    assert len(ids) == SOURCE_LIST_MAX_SOURCES
    assert ids[0] == "source-6" and ids[-1] == f"source-{SOURCE_LIST_MAX_SOURCES + 5}"


def test_cite_fallback_summary_cut_to_4096_chars() -> None:
    sources = [{"title": "t" * 200, "path": f"/p{i}"} for i in range(30)]
    summary = frame_of(cite(*sources))["fallback"]["summary"]
    assert js_length(summary) == COMPONENT_FALLBACK_SUMMARY_MAX_CHARS
    assert summary.startswith("Sources: ttt")


@pytest.mark.parametrize(
    ("tool_id", "instance"),
    [
        ("sources-req-1", "sources-req-1"),
        ("call 1/2", "call-1-2"),
        ("-leading", "sources"),
        ("", "sources"),
        ("x" * 256, "x" * 128),
        ("a:b.c_d", "a:b.c_d"),
        ("caf\u00e9+1", "caf--1"),
    ],
)
def test_cite_instance_id_is_the_tool_id_made_safe(tool_id: str, instance: str) -> None:
    frame = frame_of(cite({"title": "T", "path": "/a"}, tool_id=tool_id))
    assert frame["instanceId"] == instance


def test_cite_with_extra_source_fields_ignores_them() -> None:
    frame = frame_of(cite({"title": "T", "path": "/a", "id": "x", "snippet": "s", "url": "/z"}))
    assert frame["props"]["sources"] == [{"id": "source-1", "title": "T", "url": "/a"}]


# -- safe hrefs --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "anchor", "href"),
    [
        ("/docs/a", None, "/docs/a"),
        ("docs/a", None, "/docs/a"),
        ("docs/a", "intro", "/docs/a#intro"),
        ("/docs/a", "#intro", "/docs/a#intro"),
        ("/docs/a#old", "new", "/docs/a#new"),
        ("/docs/a#old", "", "/docs/a"),
        ("/docs/a#old", None, "/docs/a#old"),
        ("/a b", "x y", "/a%20b#x%20y"),
        ("/a?q=1 2", None, "/a?q=1%202"),
        ("/a?", None, "/a"),
        ("/caf\u00e9", "\u00fc", "/caf%C3%A9#%C3%BC"),
        ("/a%20b", "%41", "/a%20b#%41"),
        ("/a", "100%", "/a#100%25"),
        ("/a", "x<script>", "/a#x%3Cscript%3E"),
        ("/a", 'q"\\', "/a#q%22%5C"),
        ("../../etc/passwd", None, "/etc/passwd"),
        ("/./a/../b", None, "/b"),
        (" javascript:alert(1)", None, "/%20javascript:alert(1)"),
        ("https://example.com/a", None, "https://example.com/a"),
        ("HTTPS://Example.COM", None, "https://example.com/"),
        ("http://example.com:80/a", None, "http://example.com/a"),
        ("https://example.com:8443/a", "s", "https://example.com:8443/a#s"),
        ("http://[::1]:8080/x", None, "http://[::1]:8080/x"),
        ("http://b\u00fccher.de/", None, "http://xn--bcher-kva.de/"),
    ],
)
def test_safe_href(path: str, anchor: str | None, href: str) -> None:
    assert safe_source_href(path, anchor) == href
    assert is_portable_url(href)


@pytest.mark.parametrize(
    "path",
    [
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        "\tjavascript:alert(1)",
        "java\nscript:alert(1)",
        "data:text/html,<script>",
        "vbscript:msgbox",
        "mailto:a@example.com",
        "ftp://example.com/",
        "//evil.example",
        "///evil.example",
        "\\\\evil.example",
        "/\\evil.example",
        "https:evil.example",
        "https:/evil.example",
        "https://user:pass@example.com/",
        "https://user@example.com/",
        "https://@example.com/",
        "https:///path",
        "https://example.com:99999/",
        "https://example.com:x/",
        "/a\x00b",
        "/a\x7fb",
        "/\ud800",
    ],
)
def test_unsafe_paths_are_dropped(path: str) -> None:
    assert safe_source_href(path) is None


def test_href_length_limit() -> None:
    at_limit = "/" + "a" * (PORTABLE_URL_MAX_CHARS - 1)
    assert safe_source_href(at_limit) == at_limit
    assert safe_source_href(at_limit + "a") is None
    # encoding growth counts: 682 spaces -> 2,046 chars + "/x" fits, one more does not
    assert safe_source_href("/x" + " " * 682) is not None
    assert safe_source_href("/x" + " " * 683) is None


def test_absolute_href_length_limit() -> None:
    base = "https://example.com/"
    at_limit = base + "a" * (PORTABLE_URL_MAX_CHARS - len(base))
    assert safe_source_href(at_limit) == at_limit
    assert safe_source_href(at_limit + "a") is None


@given(st.text(max_size=80), st.one_of(st.none(), st.text(max_size=20)))
def test_safe_href_never_raises_and_is_always_portable(path: str, anchor: str | None) -> None:
    href = safe_source_href(path, anchor)
    assert href is None or is_portable_url(href)


# -- host tools --------------------------------------------------------------------------------


def test_other_tool_without_callback_is_inert() -> None:
    assert project_ask_event(tool("codeBlock", {"code": "x"})) is None


def test_valid_host_frame_is_a_component() -> None:
    frame = valid_frame()
    projection = project_ask_event(tool("codeBlock", {}), lambda _event: frame)
    assert projection == {"kind": "component", "frame": frame}


def test_host_frame_model_is_accepted() -> None:
    model = decode_component_frame(valid_frame()).frame
    projection = project_ask_event(tool("x", {}), lambda _event: model)
    assert projection == {"kind": "component", "frame": valid_frame()}


@pytest.mark.parametrize(
    "result",
    [
        None,
        {"not": "a frame"},
        {**valid_frame(), "version": 2},
        {**valid_frame(), "instanceId": "-bad"},
        {**valid_frame(), "fallback": {"kind": "x"}},
        '{"protocol":"agentskit.chat.component"}',
        3,
    ],
)
def test_invalid_host_result_is_inert(result: Any) -> None:
    assert project_ask_event(tool("x", {}), lambda _event: result) is None


def test_raising_host_callback_is_inert() -> None:
    def host(_event: dict[str, Any]) -> Any:
        raise RuntimeError("host bug")

    assert project_ask_event(tool("x", {}), host) is None


def test_host_callback_cannot_override_answer_or_cite() -> None:
    calls: list[str] = []

    def host(event: dict[str, Any]) -> Any:
        calls.append(event["name"])
        return valid_frame()

    assert project_ask_event(tool("answer", {"markdown": "m"}), host) == {
        "kind": "text",
        "text": "m",
    }
    assert project_ask_event(cite({"title": "T", "path": "javascript:x"}), host) is None
    assert calls == []


# -- messages ----------------------------------------------------------------------------------


def encoded(*parts: dict[str, Any]) -> str:
    encoder = AssistantContentEncoder()
    return "".join(encoder.encode(part) for part in parts)


def test_project_messages_keeps_user_and_assistant_only() -> None:
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "  question  "},
        {"role": "tool", "content": "t"},
        {"role": "assistant", "content": "legacy plain answer"},
    ]
    assert project_ask_messages(messages) == [
        {"role": "user", "content": "  question  "},
        {"role": "assistant", "content": "legacy plain answer"},
    ]


def test_project_messages_flattens_ordered_content() -> None:
    content = encoded(
        {"kind": "text", "text": "  Part one"},
        {"kind": "component", "frame": valid_frame("source-list", "s")},
        {"kind": "text", "text": "Part two \n"},
    )
    assert project_ask_messages([{"role": "assistant", "content": content}]) == [
        {"role": "assistant", "content": "Part one\n[source-list]\nPart two"}
    ]


def test_project_messages_drops_blank_and_non_string() -> None:
    messages: list[Any] = [
        {"role": "user", "content": " \n\t"},
        {"role": "assistant", "content": "\x1eagentskit.chat.content/1\n"},
        {"role": "assistant", "content": encoded({"kind": "text", "text": "   "})},
        {"role": "user", "content": None},
        {"role": "user"},
        "not a message",
        None,
    ]
    assert project_ask_messages(messages) == []


def test_project_messages_accepts_objects() -> None:
    class Message:
        role = "user"
        content = "hi"

    assert project_ask_messages([Message()]) == [{"role": "user", "content": "hi"}]


def test_project_messages_sends_invalid_ordered_content_as_is() -> None:
    broken = "\x1eagentskit.chat.content/1\nnot json\n"
    assert project_ask_messages([{"role": "assistant", "content": broken}]) == [
        {"role": "assistant", "content": broken}
    ]


def test_conformance_subject_is_registered() -> None:
    subject = SUBJECTS["project_ask_event"]
    assert subject({"event": {"type": "done"}}) == {"ok": True, "value": {"kind": "done"}}
    assert subject({"event": tool("x", {}), "projectTool": "raises"}) == {"ok": True, "value": None}


class _CollidingKey:
    """A key that hashes like "type" and raises when compared: hostile host data."""

    def __hash__(self) -> int:
        return hash("type")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no comparing me")


def test_a_text_event_with_a_hostile_key_is_inert() -> None:
    assert project_ask_event({_CollidingKey(): "text", "delta": "x"}) is None


@pytest.mark.parametrize(
    ("delta", "projected"),
    [
        ("a" * ASK_TEXT_DELTA_MAX_CHARS, True),
        ("a" * (ASK_TEXT_DELTA_MAX_CHARS + 1), False),
        ("\U0001f680" * (ASK_TEXT_DELTA_MAX_CHARS // 2), True),  # two units each, at the limit
        ("\U0001f680" * (ASK_TEXT_DELTA_MAX_CHARS // 2) + "a", False),
    ],
)
def test_the_text_fast_path_keeps_the_delta_bound(delta: str, projected: bool) -> None:
    result = project_ask_event({"type": "text", "delta": delta})
    assert (result == {"kind": "text", "text": delta}) is projected
    assert (result is None) is not projected
