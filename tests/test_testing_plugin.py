"""agentskit_web.testing without a browser: the scripted Ask server over real HTTP, misuse
errors, the page object's order check and the plugin's registration."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentskit_web.protocol import AskEventDecoder
from agentskit_web.testing import (
    AskServer,
    AskWidget,
    ScriptError,
    Source,
    WidgetUsageError,
    event_line,
)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def server() -> Iterator[AskServer]:
    with AskServer() as running:
        yield running


def _post(server: AskServer, timeout: float = 10.0, **kwargs: Any) -> httpx.Response:
    body = {"messages": [{"role": "user", "content": "How do I start?"}]}
    return httpx.post(server.endpoint + "?lang=en", json=body, timeout=timeout, **kwargs)


def _events(response: httpx.Response) -> list[dict[str, Any]]:
    decoder = AskEventDecoder()
    return [*decoder.feed(response.content), *decoder.finish()]


def test_an_answer_streams_text_then_one_cite_event_then_done(server: AskServer) -> None:
    server.answer(
        "Install it with pip, then run it.",
        sources=[Source("Getting started", "/docs/start.html", anchor="install"), ("API", "/api")],
        chunks=3,
    )
    response = _post(server)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/x-ndjson")
    events = _events(response)
    assert [e["type"] for e in events] == ["text", "text", "text", "tool", "done"]
    assert "".join(e["delta"] for e in events[:3]) == "Install it with pip, then run it."
    cite = events[3]
    assert cite["name"] == "cite"
    assert cite["args"]["sources"] == [
        {
            "id": "source-1",
            "title": "Getting started",
            "path": "/docs/start.html",
            "anchor": "install",
        },
        {"id": "source-2", "title": "API", "path": "/api"},
    ]


def test_requests_are_recorded_with_body_headers_and_query(server: AskServer) -> None:
    _post(server, headers={"X-Site": "docs"})
    (recorded,) = server.requests
    assert recorded.method == "POST"
    assert recorded.path == "/api/ask"
    assert recorded.query == {"lang": ["en"]}
    assert recorded.headers["x-site"] == "docs"
    assert recorded.question == "How do I start?"
    assert recorded.json()["messages"][0]["role"] == "user"
    server.reset()
    assert server.requests == []


def test_raw_lines_arrive_as_written_after_their_delays(server: AskServer) -> None:
    server.lines(
        ['{"type":"text","delta":"slow"}\n', 0.4, b"not json\n", event_line({"type": "done"})]
    )
    started = time.monotonic()
    response = _post(server)
    assert time.monotonic() - started >= 0.4
    assert response.content == b'{"type":"text","delta":"slow"}\nnot json\n{"type":"done"}\n'


def test_a_status_error_has_an_error_body(server: AskServer) -> None:
    server.error(503, "ASK_UNAVAILABLE", "Down for maintenance.", retryable=True)
    response = _post(server)
    assert response.status_code == 503
    assert response.json() == {
        "error": {"code": "ASK_UNAVAILABLE", "message": "Down for maintenance.", "retryable": True}
    }


def test_a_stall_sends_no_headers_until_it_ends(server: AskServer) -> None:
    server.stall(5.0)
    with pytest.raises(httpx.ReadTimeout):
        _post(server, timeout=httpx.Timeout(10.0, read=0.5))
    server.stall(0.3)
    assert [e["type"] for e in _events(_post(server))] == ["done"]


@pytest.mark.parametrize("bad", [{"type": "done"}, 42 + 0j, None, ["nested"]])
def test_a_scripted_line_that_is_not_bytes_or_str_says_what_to_pass(
    server: AskServer, bad: Any
) -> None:
    with pytest.raises(ScriptError, match=r"pass each line as bytes or str.*event_line"):
        server.lines([b"ok\n", bad])


def test_other_misuse_is_refused_plainly(server: AskServer) -> None:
    with pytest.raises(ScriptError, match="list of lines"):
        server.lines(b'{"type":"done"}\n')  # type: ignore[arg-type]
    with pytest.raises(ScriptError, match="4xx or 5xx"):
        server.error(200)
    with pytest.raises(ScriptError, match="negative"):
        server.lines([-1.0])
    with pytest.raises(ScriptError, match="a source is"):
        server.answer("x", sources=["just a title"])  # type: ignore[list-item]


def test_the_site_is_served_on_the_same_origin(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<agentskit-ask></agentskit-ask>", encoding="utf-8")
    with AskServer(site=tmp_path) as both:
        assert "agentskit-ask" in httpx.get(both.url + "/").text
        both.answer("hi")
        events = _events(_post(both))
        assert "".join(e["delta"] for e in events if e["type"] == "text") == "hi"
        assert events[-1] == {"type": "done"}


class _NoPage:
    def locator(self, selector: str) -> Any:
        raise AssertionError("the page must not be touched before open()")


@pytest.mark.parametrize(
    "action", ["ask", "wait_answer", "stop", "retry", "regenerate", "new_conversation"]
)
def test_acting_before_open_says_to_call_open_first(action: str) -> None:
    widget = AskWidget(_NoPage())
    method = getattr(widget, action)
    with pytest.raises(WidgetUsageError, match=r"call ask_widget\.open\(\) first"):
        method("How?") if action == "ask" else method()


def test_the_plugin_is_registered_through_pytest11() -> None:
    from importlib.metadata import entry_points

    found = [e for e in entry_points(group="pytest11") if e.value == "agentskit_web.testing"]
    assert found, "pyproject.toml registers agentskit_web.testing under pytest11"
    extras = json.dumps(_extras())
    assert "pytest-playwright" in extras


def _extras() -> list[str]:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return list(project["optional-dependencies"]["testing"])
