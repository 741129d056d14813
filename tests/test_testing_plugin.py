"""agentskit_web.testing without a browser: the scripted Ask server over real HTTP, misuse
errors, the page object's order check and the plugin's registration."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentskit_web.protocol import AskEventDecoder
from agentskit_web.testing import (
    CHROMIUM_ENV,
    AskServer,
    AskWidget,
    ScriptError,
    Source,
    WidgetUsageError,
    event_line,
    preset_names,
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
    url = "about:blank"

    def wait_for_selector(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the page must not be touched before page.goto")

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


def test_opening_before_the_page_is_loaded_says_to_goto_first() -> None:
    with pytest.raises(WidgetUsageError, match=r"call page\.goto\(url\) first"):
        AskWidget(_NoPage()).open()


def test_the_plugin_is_declared_under_pytest11_by_its_module_name() -> None:
    import importlib
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = project["entry-points"]["pytest11"]
    # Named as the module: `-p agentskit_web.testing` and the entry point are then one plugin.
    assert declared == {"agentskit_web.testing": "agentskit_web.testing"}
    plugin = importlib.import_module(declared["agentskit_web.testing"])
    for hook in ("pytest_addoption", "ask_server", "ask_widget", "same_origin_only"):
        assert callable(getattr(plugin, hook)), hook
    assert "pytest-playwright" in json.dumps(_extras())


def test_every_preset_copy_is_byte_identical_to_its_fixture() -> None:
    shipped = ROOT / "src" / "agentskit_web" / "testing" / "presets"
    originals = {
        "hostile_render.json": ROOT / "fixtures" / "hostile_render.json",
        "hostile.ndjson": ROOT / "fixtures" / "ask" / "hostile.ndjson",
        "error_midstream.ndjson": ROOT / "fixtures" / "ask" / "error_midstream.ndjson",
    }
    assert sorted(p.name for p in shipped.iterdir()) == sorted(originals)
    for name, original in originals.items():
        assert (shipped / name).read_bytes() == original.read_bytes(), (
            f"{original} changed: copy it to {shipped / name}"
        )


def test_presets_are_the_hostile_corpora_sent_as_their_exact_bytes(server: AskServer) -> None:
    names = preset_names()
    corpus = json.loads((ROOT / "fixtures" / "hostile_render.json").read_text(encoding="utf-8"))
    streamed = [c for c in corpus["cases"] if "events" in c["input"]]
    assert names[:2] == ("hostile stream", "error midstream")
    assert list(names[2:]) == [c["name"] for c in streamed]
    server.preset("hostile stream")
    response = _post(server)
    assert response.status_code == 200
    assert response.content == (ROOT / "fixtures" / "ask" / "hostile.ndjson").read_bytes()
    case = next(c for c in streamed if c["name"] == "script tag in text")
    server.preset("script tag in text")
    assert _events(_post(server)) == case["input"]["events"]


def test_an_unknown_preset_names_the_close_ones() -> None:
    with AskServer() as server, pytest.raises(ScriptError, match=r"did you mean 'hostile stream'"):
        server.preset("hostile-stream")
    with AskServer() as server, pytest.raises(ScriptError, match=r"preset_names\(\) lists"):
        server.preset("nothing like it at all 0123456789")


def test_a_server_without_a_site_says_how_to_give_it_one(server: AskServer) -> None:
    response = httpx.get(server.url + "/", timeout=10)
    assert response.status_code == 404
    assert "--agentskit-site DIR" in response.text


def _extras() -> list[str]:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return list(project["optional-dependencies"]["testing"])


MISUSE = """
def test_with_a_site(ask_server):
    pass


def test_with_chromium(browser_type_launch_args):
    pass
"""


def _pytest(tmp_path: Path, *args: str) -> str:
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "test_misuse.py").write_text(MISUSE, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop(CHROMIUM_ENV, None)
    plugin = ("-p", "agentskit_web.testing", "-p", "no:cacheprovider")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *plugin, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.stdout + done.stderr


def test_a_site_folder_without_index_html_says_to_build_it(tmp_path: Path) -> None:
    output = _pytest(tmp_path, "-k", "site", "--agentskit-site", str(tmp_path / "nowhere"))
    assert "has no index.html: build the site first" in output, output
    assert "1 error" in output, output


def test_a_chromium_that_does_not_exist_says_what_to_pass(tmp_path: Path) -> None:
    output = _pytest(tmp_path, "-k", "chromium", "--agentskit-chromium", "/no/such/chromium")
    assert "Chromium executable '/no/such/chromium' does not exist" in output, output
    assert "1 error" in output, output


def test_a_system_chromium_joins_the_launch_arguments(tmp_path: Path) -> None:
    probe = (
        "def test_with_chromium(browser_type_launch_args):\n"
        f"    assert browser_type_launch_args['executable_path'] == {sys.executable!r}\n"
        "    from agentskit_web.chromium_sandbox import sandbox_available\n"
        "    off = not sandbox_available()\n"
        "    assert browser_type_launch_args['chromium_sandbox'] is not off\n"
        "    assert ('--no-sandbox' in browser_type_launch_args['args']) is off\n"
    )
    (tmp_path / "test_probe.py").write_text(probe, encoding="utf-8")
    output = _pytest(tmp_path, "test_probe.py", "--agentskit-chromium", sys.executable)
    assert "1 passed" in output, output


def test_the_sandbox_is_on_unless_chromium_refuses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chromium refuses a sandboxed browser only for root; everyone else gets the sandbox."""
    from agentskit_web import chromium_sandbox
    from agentskit_web.bench.harness import CHROMIUM_FLAGS, chromium_launch_options

    assert "--no-sandbox" not in CHROMIUM_FLAGS
    monkeypatch.setattr(chromium_sandbox.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(chromium_sandbox, "_USERNS_SWITCHES", ())
    assert chromium_sandbox.sandbox_available() and chromium_sandbox.sandbox_args() == []
    options = chromium_launch_options()
    assert options["chromium_sandbox"] is True and "--no-sandbox" not in options["args"]
    monkeypatch.setattr(chromium_sandbox.os, "geteuid", lambda: 0)
    assert chromium_sandbox.sandbox_args() == ["--no-sandbox"]
    options = chromium_launch_options()
    assert options["chromium_sandbox"] is False and "--no-sandbox" in options["args"]


def test_a_kernel_without_user_namespaces_keeps_the_sandbox_off(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from agentskit_web import chromium_sandbox

    switch = tmp_path / "unprivileged_userns_clone"
    monkeypatch.setattr(chromium_sandbox.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(chromium_sandbox, "_USERNS_SWITCHES", ((str(switch), "0"),))
    monkeypatch.setattr(chromium_sandbox.sys, "platform", "linux")
    switch.write_text("0\n")
    assert not chromium_sandbox.sandbox_available()
    switch.write_text("1\n")
    assert chromium_sandbox.sandbox_available()
