"""`agentskit-web demo`: one origin for the site and the Ask backend, clean start and stop."""

import asyncio
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from agentskit_web.protocol.ask_events import ask_event_wire_or_none
from agentskit_web.server.ask_serve import StartupError
from agentskit_web.server.demo_server import DemoConfig, DemoServer, create_demo_app

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
ASK = "/api/ask?corpus=docs&persona=guide"


@pytest.fixture
def dist(tmp_path: Path) -> Path:
    """A stand-in dist/: a page, a module, a wasm file, a JSON file and a docs page."""
    folder = tmp_path / "dist"
    (folder / "runtime").mkdir(parents=True)
    (folder / "docs").mkdir()
    (folder / "index.html").write_text("<!doctype html><title>home</title>", encoding="utf-8")
    (folder / "docs" / "offline.html").write_text("<h2 id='x'>x</h2>", encoding="utf-8")
    (folder / "runtime" / "pyodide.mjs").write_text("export {};", encoding="utf-8")
    (folder / "runtime" / "pyodide.asm.wasm").write_bytes(b"\0asm\1\0\0\0")
    (folder / "knowledge.json").write_text("{}", encoding="utf-8")
    return folder


def config(dist: Path) -> DemoConfig:
    return DemoConfig(dist=dist, site=DOCS / "site.json", docs=DOCS, pace_seconds=0)


class Client:
    """Requests to the ASGI app in-process (what the browser would send to the port)."""

    def __init__(self, app: Starlette) -> None:
        self.app = app

    def request(self, method: str, path: str, **options: Any) -> httpx.Response:
        async def run() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app, client=("127.0.0.1", 5000))
            async with httpx.AsyncClient(transport=transport, base_url="http://demo") as http:
                return await http.request(method, path, **options)

        return asyncio.run(run())

    def get(self, path: str, **options: Any) -> httpx.Response:
        return self.request("GET", path, **options)

    def post(self, path: str, **options: Any) -> httpx.Response:
        return self.request("POST", path, **options)


@pytest.fixture
def client(dist: Path) -> Client:
    return Client(create_demo_app(config(dist)))


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/", "text/html; charset=utf-8"),
        ("/docs/offline.html", "text/html; charset=utf-8"),
        ("/runtime/pyodide.asm.wasm", "application/wasm"),
        ("/runtime/pyodide.mjs", "text/javascript; charset=utf-8"),
        ("/knowledge.json", "application/json; charset=utf-8"),
    ],
)
def test_static_files_have_the_types_the_page_needs(
    client: Client, path: str, content_type: str
) -> None:
    response = client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"] == content_type
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["cache-control"] == "no-cache"


def test_revalidation_answers_not_modified(client: Client) -> None:
    etag = client.get("/knowledge.json").headers["etag"]
    assert client.get("/knowledge.json", headers={"if-none-match": etag}).status_code == 304


def test_a_missing_file_is_404(client: Client) -> None:
    assert client.get("/docs/design/compatibility.html").status_code == 404


def test_the_ask_backend_answers_on_the_same_origin_from_the_published_docs(
    client: Client,
) -> None:
    body = {"messages": [{"role": "user", "content": "How do I configure rate limiting?"}]}
    response = client.post(ASK, json=body)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/x-ndjson")
    events = [ask_event_wire_or_none(line) for line in response.text.splitlines() if line]
    assert all(event is not None for event in events)
    kinds = [event["type"] for event in events if event is not None]
    assert kinds[0] == "text" and kinds[-1] == "done" and kinds.count("tool") == 1
    cite = next(event for event in events if event is not None and event["type"] == "tool")
    paths = [source["path"] for source in cite["args"]["sources"]]
    assert paths[0] == "/docs/configuration.html"
    assert all(p.startswith("/docs/") and "/design/" not in p for p in paths)


def test_design_notes_are_not_in_the_demo_corpus(client: Client) -> None:
    """Words only the design notes use (U+2028, surrogates) find nothing to ground an answer in."""
    assert "surrogates" in (DOCS / "design" / "compatibility.md").read_text(encoding="utf-8")
    body = {"messages": [{"role": "user", "content": "lone surrogates"}]}
    response = client.post(ASK, json=body)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "ASK_NO_GROUNDED_SOURCES"


def test_hints_are_checked_like_the_standalone_backend(client: Client) -> None:
    body = {"messages": [{"role": "user", "content": "How do I embed the widget?"}]}
    response = client.post("/api/ask?corpus=other", json=body)
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "ASK_FORBIDDEN"


def test_no_site_is_a_startup_error(tmp_path: Path) -> None:
    with pytest.raises(StartupError, match="has no site yet"):
        create_demo_app(config(tmp_path))


def test_a_bad_site_config_is_a_startup_error(dist: Path, tmp_path: Path) -> None:
    bad = tmp_path / "site.json"
    bad.write_text('{"protocol": "agentskit.chat.backend-site"}', encoding="utf-8")
    with pytest.raises(StartupError, match="Site config"):
        create_demo_app(DemoConfig(dist=dist, site=bad, docs=DOCS))


def test_the_threaded_server_serves_then_refuses_connections(dist: Path) -> None:
    server = DemoServer(config(dist)).start()
    with urllib.request.urlopen(server.url + "/", timeout=5) as response:
        assert response.status == 200
    server.stop()
    assert not server.running
    with pytest.raises(OSError):
        urllib.request.urlopen(server.url + "/", timeout=5)


# -- the command ----------------------------------------------------------------------------------


def start_command(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "agentskit_web.cli", "demo", "--no-build", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_url(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("Demo: "):
            return line.removeprefix("Demo: ").strip()
    raise AssertionError(
        f"no URL printed; stderr: {process.stderr.read() if process.stderr else ''}"
    )


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_the_command_prints_the_url_serves_and_stops_cleanly(
    dist: Path, stop: signal.Signals
) -> None:
    process = start_command("--port", "0", "--dist", str(dist))
    try:
        url = wait_for_url(process)
        assert url.startswith("http://127.0.0.1:") and url.endswith("/")
        with urllib.request.urlopen(url, timeout=5) as response:
            assert b"<title>home</title>" in response.read()
        process.send_signal(stop)
        out, err = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert "Demo stopped." in out
    assert "Traceback" not in err


def test_the_command_says_when_the_port_is_taken(dist: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = start_command("--port", str(port), "--dist", str(dist))
        _out, err = process.communicate(timeout=30)
    assert process.returncode == 2
    assert f"agentskit-web demo: cannot listen on port {port}" in err
    assert "Traceback" not in err


def test_the_command_without_a_site_says_build_first(tmp_path: Path) -> None:
    process = start_command("--port", "0", "--dist", str(tmp_path))
    _out, err = process.communicate(timeout=30)
    assert process.returncode == 2
    assert "has no site yet: run `agentskit-web build` first" in err
