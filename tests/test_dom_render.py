"""The browser renderer on a stand-in DOM: safe construction, URL re-checks, incremental work."""

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from agentskit_web.browser.conversation_view import QUESTION_MARGIN_PX, ConversationView
from agentskit_web.browser.dom_render import (
    LINK_REL,
    TAIL_NODE_MAX_CHARS,
    DomBuilder,
    MessageBody,
    UrlPolicy,
)
from agentskit_web.chat import (
    MemoryStorage,
    create_ask_adapter,
    create_ask_session_memory,
    define_chat,
)
from agentskit_web.chat.conversation import Conversation, Updated
from agentskit_web.chat.view.tree import element
from fake_dom import FakeDocument, FakeElement, FakeText, make_url

PAGE = "http://127.0.0.1:8000/docs/page.html"


def builder() -> DomBuilder:
    return DomBuilder(FakeDocument(), UrlPolicy(make_url, PAGE))


def anchors(root: FakeElement) -> list[FakeElement]:
    return [node for node in root.walk() if node.tag == "a"]


def test_links_are_normalised_and_open_in_the_same_tab_unless_the_site_asks() -> None:
    tree = element("p", None, (element("a", {"href": "/docs/x#y"}, ("x",)),))
    root = builder().build(tree)
    [link] = anchors(root)
    assert link.attributes == {"href": "http://127.0.0.1:8000/docs/x#y", "rel": LINK_REL}
    assert root.textContent == "x"
    new_tab = DomBuilder(FakeDocument(), UrlPolicy(make_url, PAGE, new_tab=True)).build(tree)
    [link] = anchors(new_tab)
    assert link.attributes == {
        "href": "http://127.0.0.1:8000/docs/x#y",
        "target": "_blank",
        "rel": LINK_REL,
    }


def test_fragment_links_resolve_against_the_page() -> None:
    [link] = anchors(builder().build(element("a", {"href": "#top"}, ("top",))))
    assert link.attributes["href"] == PAGE + "#top"


def test_policy_refuses_what_the_browser_parses_as_unsafe() -> None:
    policy = UrlPolicy(make_url, PAGE)
    assert policy.link("javascript:alert(1)") is None
    assert policy.link("java\tscript:alert(1)") is None
    assert policy.link("https://user:pw@example.com/") is None
    assert policy.link("data:text/html,x") is None
    assert policy.link("https://example.com/a") == "https://example.com/a"
    assert policy.image("/img.png") is None, "no `images` prefix: no image loads"
    allowed = UrlPolicy(make_url, PAGE, "/assets/")
    assert allowed.image("/assets/img.png") == "http://127.0.0.1:8000/assets/img.png"
    assert allowed.image("../assets/a/b.png") == "http://127.0.0.1:8000/assets/a/b.png"
    assert allowed.image("/logout") is None
    assert allowed.image("/assets/../logout") is None
    assert allowed.image("/assets/a.png?next=/logout") is None
    assert allowed.image("/assetsX/a.png") is None
    assert allowed.image("https://evil.example/assets/p.png") is None
    # Encoded separators and dots pass a text prefix test but not a server's router.
    for sneaky in (
        "/assets/..%2F..%2Flogout",
        "/assets/..%2f..%2flogout",
        "/assets/..%5C..%5Clogout",
        "/assets/%2e%2e/logout",
        "/assets/%2E%2E%2Flogout",
        "/assets/a%2Fb.png",
    ):
        assert allowed.image(sneaky) is None, sneaky
    assert allowed.image("/assets/a%20b.png") == "http://127.0.0.1:8000/assets/a%20b.png"


def test_image_paths_are_checked_after_the_parser_as_a_server_would_route_them() -> None:
    from agentskit_web.chat.widget_config import image_path_allowed

    assert image_path_allowed("/assets/a.png", "/assets/")
    assert not image_path_allowed("/assets/../logout", "/assets/")  # an unparsed dot segment
    assert not image_path_allowed("/assets/./a.png", "/assets/")
    assert not image_path_allowed("/assets\\..\\logout", "/assets/")
    assert not image_path_allowed("/other/a.png", "/assets/")


def test_a_link_the_browser_refuses_becomes_plain_text() -> None:
    class Refusing(UrlPolicy):
        def link(self, value: str) -> str | None:
            return None

    built = DomBuilder(FakeDocument(), Refusing(make_url, PAGE))
    root = built.build(element("p", None, (element("a", {"href": "/x"}, ("label",)),)))
    assert anchors(root) == [] and root.textContent == "label"


def test_images_load_only_under_the_site_prefix() -> None:
    allowed = DomBuilder(FakeDocument(), UrlPolicy(make_url, PAGE, "/docs/img/"))
    root = allowed.build(element("p", None, (element("img", {"src": "img/a.png", "alt": "A"}),)))
    [image] = [node for node in root.walk() if node.tag == "img"]
    assert image.attributes == {"alt": "A", "src": "http://127.0.0.1:8000/docs/img/a.png"}


def test_by_default_an_answer_image_is_a_link_that_fetches_nothing() -> None:
    root = builder().build(element("p", None, (element("img", {"src": "/logout", "alt": "x"}),)))
    assert not [node for node in root.walk() if node.tag == "img"]
    [link] = anchors(root)
    assert link.attributes["href"] == "http://127.0.0.1:8000/logout" and link.textContent == "x"


def test_an_image_that_leaves_the_origin_becomes_a_link() -> None:
    class Moved(UrlPolicy):
        def image(self, value: str) -> str | None:
            return None

    built = DomBuilder(FakeDocument(), Moved(make_url, PAGE))
    root = built.build(element("p", None, (element("img", {"src": "/a.png", "alt": "chart"}),)))
    [link] = anchors(root)
    assert link.attributes["href"] == "http://127.0.0.1:8000/a.png" and link.textContent == "chart"
    assert not [node for node in root.walk() if node.tag == "img"]


def test_deep_trees_build_without_recursion() -> None:
    node = element("span", None, ("deep",))
    for _ in range(3_000):
        node = element("span", None, (node,))
    assert builder().build(node).textContent == "deep"


def text_part(value: str) -> dict[str, Any]:
    return {"kind": "text", "text": value}


def test_the_streaming_tail_is_extended_not_rebuilt() -> None:
    dom = builder()
    holder = dom.document.createElement("div")
    body = MessageBody(dom, holder)
    body.append_parts([text_part("Hello ")])
    body.append_parts([text_part("world")])
    tail = holder.querySelector(".ak-tail")
    assert tail is not None
    [node] = tail.children
    assert isinstance(node, FakeText) and node.data == "Hello world" and node.appends == 1
    body.append_parts([text_part("\n\nNext\n")])
    assert holder.querySelector("p") is not None
    assert tail.textContent == "Next\n"
    body.finish()
    assert tail.textContent == ""
    assert holder.textContent == "Hello worldNext"


def test_tail_text_nodes_are_bounded() -> None:
    dom = builder()
    holder = dom.document.createElement("div")
    body = MessageBody(dom, holder)
    for _ in range(10):
        body.append_parts([text_part("x" * 1_000)])
    tail = holder.querySelector(".ak-tail")
    assert tail is not None
    lengths = [len(node.data) for node in tail.children if isinstance(node, FakeText)]
    assert sum(lengths) == 10_000 and max(lengths) <= TAIL_NODE_MAX_CHARS


def test_components_and_text_keep_their_order() -> None:
    dom = builder()
    holder = dom.document.createElement("div")
    body = MessageBody(dom, holder)
    frame = {
        "protocol": "agentskit.chat.component",
        "version": 1,
        "type": "render",
        "componentKey": "source-list",
        "instanceId": "c1",
        "props": {"label": "Sources", "sources": [{"id": "s1", "title": "T", "url": "/t"}]},
        "fallback": {"kind": "source-list", "summary": "Sources: T."},
    }
    body.append_parts([text_part("before"), {"kind": "component", "frame": frame}])
    body.append_parts([text_part("after")])
    body.finish()
    assert holder.textContent == "beforeSourcesTafter"
    assert body.frames == {"c1": frame}


def _render_calls(records: int) -> int:
    dom = builder()
    body = MessageBody(dom, dom.document.createElement("div"))
    chunk = "A sentence with **bold**, `code` and a [link](/docs/x). "
    for index in range(records):
        body.append_parts([text_part(chunk + ("\n\n" if index % 3 == 2 else ""))])
    body.finish()
    return dom.calls


def test_dom_work_is_linear_in_the_answer_length() -> None:
    assert _render_calls(512) / _render_calls(64) <= 9


# -- the conversation log ---------------------------------------------------------------


class Response:
    def __init__(self, chunks: list[bytes], gate: asyncio.Event | None) -> None:
        self.status = 200
        self.headers = {"content-type": "application/x-ndjson"}
        self._chunks = chunks
        self._gate = gate

    async def chunks(self) -> AsyncIterator[bytes]:
        for index, chunk in enumerate(self._chunks):
            if self._gate is not None and index == 1:
                await self._gate.wait()
            yield chunk

    async def cancel(self) -> None:
        return None


class Transport:
    def __init__(self, *scripts: Any) -> None:
        self.scripts = list(scripts)

    async def post(self, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        script = self.scripts.pop(0)
        chunks, gate = script if isinstance(script, tuple) else (script, None)
        return Response([(json.dumps(e) + "\n").encode() for e in chunks], gate)


def log_view(transport: Transport) -> tuple[Conversation, ConversationView, FakeElement]:
    dom = builder()
    log = dom.document.createElement("div")
    for name, value in (("scrollHeight", 500), ("scrollTop", 0), ("clientHeight", 200)):
        object.__setattr__(log, name, value)
    definition = define_chat(
        id="docs",
        adapter=create_ask_adapter(endpoint="/api/ask", transport=transport),
        memory=create_ask_session_memory(key="k", storage=MemoryStorage()),
    )
    conversation = Conversation(definition)
    view = ConversationView(dom, log, definition.components)
    conversation.subscribe(view.handle)
    return conversation, view, log


def test_the_log_is_busy_while_streaming_and_shows_the_answer() -> None:
    gate = asyncio.Event()
    transport = Transport(
        (
            [
                {"type": "text", "delta": "Hi "},
                {"type": "text", "delta": "there"},
                {"type": "done"},
            ],
            gate,
        )
    )
    conversation, _view, log = log_view(transport)

    async def scenario() -> None:
        task = asyncio.ensure_future(conversation.send("Q"))
        while "Hi" not in log.textContent:
            await asyncio.sleep(0)
        assert log.attributes["aria-busy"] == "true"
        answer = log.querySelector('[data-status="streaming"]')
        assert answer is not None
        gate.set()
        await task

    asyncio.run(scenario())
    assert log.attributes["aria-busy"] == "false"
    messages = log.querySelectorAll("article")
    assert [m.attributes["class"] for m in messages] == [
        "ak-message ak-user",
        "ak-message ak-assistant",
    ]
    assert messages[1].attributes["data-status"] == "complete"
    assert "Hi there" in messages[1].textContent
    # Each message isolates its own direction (dir=auto; the CSS adds unicode-bidi: isolate),
    # so a right-to-left answer never reorders the next message.
    assert [m.attributes.get("dir") for m in messages] == ["auto", "auto"]
    assert log.querySelector('[data-ui="regenerate"]') is not None


def test_errors_show_in_place_with_retry_and_the_streamed_text_kept() -> None:
    transport = Transport(
        [{"type": "text", "delta": "Partial"}, {"type": "error", "message": "<b>Boom</b>"}],
        [{"type": "text", "delta": "Fine"}, {"type": "done"}],
    )
    conversation, _view, log = log_view(transport)
    asyncio.run(conversation.send("Q"))
    alert = log.querySelector('[role="alert"]')
    assert alert is not None and "<b>Boom</b>" in alert.textContent
    assert "Partial" in log.textContent
    assert log.querySelector('[data-ui="retry"]') is not None
    asyncio.run(conversation.retry())
    assert log.querySelector('[role="alert"]') is None
    assert "Fine" in log.textContent and "Partial" not in log.textContent


def test_feedback_is_reflected_in_aria_pressed() -> None:
    transport = Transport([{"type": "text", "delta": "A"}, {"type": "done"}])
    conversation, _view, log = log_view(transport)
    asyncio.run(conversation.send("Q"))
    answer = conversation.messages[-1]
    asyncio.run(conversation.set_feedback(answer.id, "up"))
    up = log.querySelector('[data-ui="up"]')
    down = log.querySelector('[data-ui="down"]')
    assert up is not None and down is not None
    assert up.attributes["aria-pressed"] == "true" and down.attributes["aria-pressed"] == "false"
    assert up.querySelector("svg") is not None and up.attributes["aria-label"] == "Helpful"


def test_reset_rebuilds_and_scroll_follows_only_near_the_bottom() -> None:
    transport = Transport([{"type": "text", "delta": "A"}, {"type": "done"}])
    conversation, view, log = log_view(transport)
    object.__setattr__(log, "scrollHeight", 200)  # a short answer: the whole log is in view
    asyncio.run(conversation.send("Q"))
    assert log.scrollTop == log.scrollHeight
    object.__setattr__(log, "scrollHeight", 2_000)
    view.on_scroll()
    assert view.follow, "content grew below the reader: still following"
    object.__setattr__(log, "scrollTop", 100)
    view.on_scroll()
    assert not view.follow, "the reader moved up"
    object.__setattr__(log, "scrollTop", 1_800)
    view.on_scroll()
    assert view.follow, "back at the bottom"
    object.__setattr__(log, "scrollTop", 100)
    view.on_scroll()
    asyncio.run(conversation.new_conversation())
    assert log.children == [] and view.follow


def test_a_markdown_image_becomes_an_img_only_under_the_prefix() -> None:
    from agentskit_web.chat.view.markdown_tree import markdown_to_tree

    tree = element("div", None, markdown_to_tree("![d](/assets/d.png) ![x](/logout) ![r](a/b.png)"))
    allowed = DomBuilder(FakeDocument(), UrlPolicy(make_url, PAGE, "/assets/")).build(tree)
    images = [node for node in allowed.walk() if node.tag == "img"]
    assert [image.attributes for image in images] == [
        {"src": "http://127.0.0.1:8000/assets/d.png", "alt": "d"}
    ]
    assert [link.attributes["href"] for link in anchors(allowed)] == [
        "http://127.0.0.1:8000/logout"
    ]
    by_default = builder().build(tree)
    assert not [node for node in by_default.walk() if node.tag == "img"]
    relative = DomBuilder(FakeDocument(), UrlPolicy(make_url, PAGE, "/docs/a/")).build(tree)
    assert [n.attributes["src"] for n in relative.walk() if n.tag == "img"] == [
        "http://127.0.0.1:8000/docs/a/b.png"
    ]


def test_a_hostile_streamed_answer_is_cut_in_the_dom_with_its_note() -> None:
    from agentskit_web.chat.view.render_limits import (
        MESSAGE_MAX_CHARS,
        MESSAGE_MAX_NODES,
        SHORTENED_NOTE,
        TABLE_MAX_ROWS,
    )

    dom = builder()
    holder = dom.document.createElement("div")
    body = MessageBody(dom, holder)
    row = "| a | b |\n"
    body.append_parts([text_part("| h | k |\n|---|---|\n")])
    for _ in range(2_000):  # 20,000 rows, one chunk each
        body.append_parts([text_part(row * 10)])
    tail = holder.querySelector(".ak-tail")
    assert tail is not None and len(tail.textContent) <= MESSAGE_MAX_CHARS
    body.finish()
    [note] = [node for node in holder.walk() if node.attributes.get("class") == "ak-shortened"]
    assert note.textContent == SHORTENED_NOTE and note.attributes["role"] == "note"
    assert holder.children[-1] is note, "the note ends the message"
    assert len(holder.walk()) <= MESSAGE_MAX_NODES
    assert len([node for node in holder.walk() if node.tag == "tr"]) == TABLE_MAX_ROWS


def test_a_new_question_is_scrolled_into_view_despite_the_clamp_its_layout_causes() -> None:
    """Asking shrinks the log for a moment (the earlier answer loses its Regenerate button),
    so the browser clamps scrollTop and reports a move up the reader never made."""
    frames: list[Callable[[], None]] = []
    dom = builder()
    log = dom.document.createElement("div")
    for name, value in (("scrollHeight", 200), ("scrollTop", 0), ("clientHeight", 200)):
        object.__setattr__(log, name, value)
    transport = Transport([{"type": "text", "delta": "A"}, {"type": "done"}])
    definition = define_chat(
        id="docs",
        adapter=create_ask_adapter(endpoint="/api/ask", transport=transport),
        memory=create_ask_session_memory(key="k", storage=MemoryStorage()),
    )
    conversation = Conversation(definition)
    view = ConversationView(dom, log, definition.components, schedule_frame=frames.append)
    conversation.subscribe(view.handle)

    def run_frames() -> None:
        while frames:
            frames.pop(0)()

    asyncio.run(conversation.send("First"))
    run_frames()
    assert log.scrollTop == 200
    asyncio.run(conversation.send("Second"))
    [_, _, second, _] = log.children
    object.__setattr__(second, "offsetTop", 1_400)  # the question and its short answer below
    object.__setattr__(log, "scrollHeight", 1_500)
    object.__setattr__(log, "scrollTop", 300)  # the clamp, reported before the frame
    view.on_scroll()
    run_frames()
    assert view.follow and log.scrollTop == 1_500, "the new question and its answer in view"

    object.__setattr__(log, "scrollTop", 100)  # after that frame, a move up is the reader's
    view.on_scroll()
    assert not view.follow


def test_a_long_answer_stops_at_its_question_and_a_reader_at_the_bottom_follows_again() -> None:
    """The finished answer opens at its beginning: following stops once the question is at
    the log's top; the reader's own scroll back to the bottom resumes following."""
    frames: list[Callable[[], None]] = []
    dom = builder()
    log = dom.document.createElement("div")
    for name, value in (("scrollHeight", 200), ("scrollTop", 0), ("clientHeight", 200)):
        object.__setattr__(log, name, value)
    gate = asyncio.Event()
    chunks = [{"type": "text", "delta": "Long "}, {"type": "text", "delta": "answer"}]
    transport = Transport(([*chunks, {"type": "done"}], gate))
    definition = define_chat(
        id="docs",
        adapter=create_ask_adapter(endpoint="/api/ask", transport=transport),
        memory=create_ask_session_memory(key="k", storage=MemoryStorage()),
    )
    conversation = Conversation(definition)
    view = ConversationView(dom, log, definition.components, schedule_frame=frames.append)
    conversation.subscribe(view.handle)

    def run_frames() -> None:
        while frames:
            frames.pop(0)()

    async def scenario() -> None:
        sending = asyncio.ensure_future(conversation.send("Question"))
        await asyncio.sleep(0)
        question = log.children[0]
        object.__setattr__(question, "offsetTop", 40)
        run_frames()
        assert log.scrollTop == 200 and view.follow, "a short answer so far: the end is in view"
        object.__setattr__(log, "scrollHeight", 3_000)  # the answer grew past the log
        gate.set()
        await sending
        run_frames()
        assert log.scrollTop == 40 - QUESTION_MARGIN_PX, "the question at the top"
        assert not view.follow
        object.__setattr__(log, "scrollHeight", 4_000)
        view.handle(Updated(conversation.messages[-1]))
        run_frames()
        assert log.scrollTop == 40 - QUESTION_MARGIN_PX, "more content does not move the reader"
        object.__setattr__(log, "scrollTop", 3_800)  # the reader scrolls to the bottom
        view.on_scroll()
        assert view.follow
        object.__setattr__(log, "scrollHeight", 5_000)
        view.handle(Updated(conversation.messages[-1]))
        run_frames()
        assert log.scrollTop == 5_000, "back at the bottom, the reader follows again"

    asyncio.run(scenario())


def test_more_from_the_docs_is_built_closed_with_dom_calls_only() -> None:
    dom = builder()
    holder = dom.document.createElement("div")
    body = MessageBody(dom, holder)
    evil = "<img src=x onerror=alert(1)>"
    body.append_parts(
        [text_part(f"> Lead. [1]\n\n**More from the docs**\n- *{evil}* [2]: One.\n\n_Q._")]
    )
    body.finish()
    details = holder.querySelector("details")
    assert details is not None and details.getAttribute("open") is None
    summary, listing = details.children
    assert isinstance(summary, FakeElement) and summary.tag == "summary"
    assert summary.textContent == "More from the docs"
    assert isinstance(listing, FakeElement) and listing.tag == "ul"
    assert evil in listing.textContent and holder.querySelector("img") is None
