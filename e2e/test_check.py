"""`agentskit-web check URL` against the demo and against deliberately broken sites.

Every run is the real command (`python -m agentskit_web.cli check … --json`) in
a subprocess, with Debian's Chromium, against real loopback servers: the demo
(`DemoServer`: dist/ and the reference backend on one origin) passes every
check; broken sites built from the same dist/ fail exactly the checks they
break; URLs that cannot be checked exit 2 with one line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentskit_web.bench.harness import chromium_executable
from agentskit_web.server.demo_server import DemoConfig, DemoServer
from agentskit_web.server.static import AppServer, bind_socket, create_static_app
from agentskit_web.testing import AskServer, Source
from e2e_support import ROOT

OFF_ORIGIN = "http://127.0.0.2:9/pixel.png"
NO_WASM_CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'"


def check(url: str, *extra: str) -> tuple[int, dict[str, Any] | None, str]:
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentskit_web.cli",
            "check",
            url,
            "--json",
            "--chromium",
            chromium_executable(),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    report = json.loads(run.stdout) if run.stdout.strip().startswith("{") else None
    return run.returncode, report, run.stderr


def verdicts(report: dict[str, Any] | None) -> dict[str, bool]:
    assert report is not None
    return {c["name"]: c["ok"] for c in report["checks"]}


def detail(report: dict[str, Any] | None, name: str) -> str:
    assert report is not None
    return next(str(c["detail"]) for c in report["checks"] if c["name"] == name)


class Broken:
    """dist/ served with one or more faults (an ASGI wrapper around the product's static app)."""

    def __init__(
        self,
        dist: Path,
        *,
        wasm_type: str | None = None,
        missing: str | None = None,
        csp: str | None = None,
        off_origin_image: bool = False,
    ) -> None:
        self.app: ASGIApp = create_static_app(dist)  # no Ask route: POST /api/ask is refused
        self.dist = dist
        self.wasm_type = wasm_type
        self.missing = missing
        self.csp = csp
        self.off_origin_image = off_origin_image

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if path == "/plain.html":
            page = "<!doctype html><html><body><p>No widget here.</p></body></html>"
            await HTMLResponse(page)(scope, receive, send)
            return
        if self.missing and path.endswith(self.missing):
            await PlainTextResponse("gone", status_code=404)(scope, receive, send)
            return
        if path == "/" and self.off_origin_image:
            html = (self.dist / "index.html").read_text(encoding="utf-8")
            html = html.replace("</body>", f'<img alt="" src="{OFF_ORIGIN}"></body>')
            await HTMLResponse(html)(scope, receive, send)
            return

        async def patched(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message["headers"]]
                if self.wasm_type and path.endswith(".wasm"):
                    headers = [(k, v) for k, v in headers if k.lower() != b"content-type"]
                    headers.append((b"content-type", self.wasm_type.encode()))
                if self.csp and (path == "/" or path.endswith(".html")):
                    headers.append((b"content-security-policy", self.csp.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, patched)


@pytest.fixture
def serve(dist: Path) -> Iterator[Any]:
    running: list[AppServer] = []

    def start(**faults: Any) -> str:
        server = AppServer(Broken(dist, **faults)).start()
        running.append(server)
        return server.url + "/"

    yield start
    for server in running:
        server.stop()


def test_the_demo_passes_every_check(dist: Path) -> None:
    config = DemoConfig(dist=dist, site=ROOT / "docs" / "site.json", docs=ROOT / "docs")
    with DemoServer(config) as demo:
        status, report, stderr = check(
            demo.url + "/", "--question", "How do I configure rate limiting?"
        )
    assert status == 0, (stderr, report)
    assert verdicts(report) == dict.fromkeys(
        [
            "loader",
            "runtime",
            "types",
            "csp",
            "boot",
            "answer",
            "sources",
            "compression",
            "origin",
            "console",
            "page",
        ],
        True,
    )
    assert "each loads and has its anchor" in detail(report, "sources")
    assert "every compressible runtime file was sent compressed" in detail(report, "compression")
    runtime = detail(report, "runtime")
    assert "br" in runtime or "gzip" in runtime
    # Every file the built loader declares (assets.json: stylesheet, runtime files, pyodide.mjs).
    manifest = json.loads((dist / "agentskit" / "assets.json").read_text(encoding="utf-8"))
    declared = len(manifest["files"]) + 2
    assert f"({declared} declared by the loader in /agentskit/{manifest['runtime']})" in runtime
    assert "from the backend" in detail(report, "answer")
    assert report is not None and report["ok"] is True


def test_a_wrong_wasm_type_is_named(serve: Any) -> None:
    status, report, stderr = check(
        serve(wasm_type="application/octet-stream"), "--boot-timeout", "120"
    )
    assert status == 1, (stderr, report)
    found = verdicts(report)
    assert found["types"] is False
    assert ".wasm is application/octet-stream" in detail(report, "types")
    assert found["loader"] is True and found["boot"] is False


def test_a_refusing_backend_and_the_page_s_own_off_origin_request(serve: Any) -> None:
    """The page's image on another origin is the page's finding, not the widget's: the origin
    row passes, the page row names the URL and the --allow-origin that lets it through, and
    fails under --strict-page; the refused answer fails the answer, sources and console rows."""
    url = serve(off_origin_image=True)
    status, report, stderr = check(
        url, "--question", "How do I configure rate limiting?", "--strict-page"
    )
    assert status == 1, (stderr, report)
    found = verdicts(report)
    assert found["boot"] is True and found["types"] is True
    assert found["origin"] is True, detail(report, "origin")
    assert found["page"] is False
    # The refused POST is the widget's own console error, named by its URL.
    assert found["console"] is False and "/api/ask" in detail(report, "console")
    assert report is not None
    page = next(c for c in report["checks"] if c["name"] == "page")
    assert any(
        OFF_ORIGIN in w and "--allow-origin http://127.0.0.2:9" in w for w in page["warnings"]
    )
    assert found["answer"] is False and found["sources"] is False
    assert "refused: HTTP 405" in detail(report, "answer")


def test_a_csp_without_wasm_unsafe_eval_is_named(serve: Any) -> None:
    status, report, _ = check(serve(csp=NO_WASM_CSP), "--boot-timeout", "120")
    assert status == 1
    found = verdicts(report)
    assert found["csp"] is False and found["boot"] is False
    assert "script-src" in detail(report, "csp")
    assert "wasm-eval" in detail(report, "csp")  # the browser's report
    assert "script-src 'self' lacks 'wasm-unsafe-eval'" in detail(report, "csp")  # read first


def test_a_missing_runtime_file_fails_runtime_and_boot(serve: Any) -> None:
    status, report, _ = check(serve(missing="pyodide.asm.wasm"), "--boot-timeout", "120")
    assert status == 1
    found = verdicts(report)
    assert found["runtime"] is False and "pyodide.asm.wasm" in detail(report, "runtime")
    assert found["boot"] is False
    assert found["answer"] is False and "did not boot" in detail(report, "answer")


def test_urls_that_cannot_be_checked_exit_2_with_one_line(serve: Any, dist: Path) -> None:
    closed = bind_socket("127.0.0.1", 0)
    port = closed.getsockname()[1]
    closed.close()
    base = serve()
    plain = sorted(dist.glob("agentskit/assets.json"))[0].relative_to(dist).as_posix()
    cases = {
        f"http://127.0.0.1:{port}/": "does not answer",
        base + plain: "is not HTML",
        base + "no-such-page.html": "answered HTTP 404",
        base + "plain.html": "has no <agentskit-ask> element",
        "ftp://example.invalid/": "not an http(s) URL",
    }
    for url, reason in cases.items():
        status, report, stderr = check(url)
        assert status == 2 and report is None, (url, stderr)
        assert reason in stderr and stderr.count("\n") == 1, stderr


class Plain:
    """An ASGI wrapper that drops the request's Accept-Encoding: every file goes out raw."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"accept-encoding"]
            scope = {**scope, "headers": headers}
        await self.app(scope, receive, send)


GOOD_SOURCE = Source("Fields", "/docs/configuration.html", "fields")
BROKEN_SOURCES = [
    GOOD_SOURCE,
    Source("Gone", "/docs/no-such-page.html"),
    Source("Lost anchor", "/docs/configuration.html", "no-such-heading"),
    Source("Not a page", "/agentskit/assets.json"),
]


def test_a_backend_citing_broken_links_fails_sources_naming_each(dist: Path) -> None:
    """The answer's links, as a reader would click them: a 404, a missing anchor, not HTML."""
    with AskServer(site=dist) as ask:
        ask.answer("See these pages.", sources=BROKEN_SOURCES)
        status, report, stderr = check(ask.url + "/")
    assert status == 1, (stderr, report)
    found = verdicts(report)
    assert found["answer"] is True and found["sources"] is False
    text = detail(report, "sources")
    assert "/docs/no-such-page.html: HTTP 404" in text
    assert "#no-such-heading is not an id on that page" in text
    assert "/agentskit/assets.json: not HTML" in text
    assert "#fields" not in text  # the good link is not named


def test_a_decline_is_the_answer_row_s_finding_not_a_console_error(dist: Path) -> None:
    """The contract's decline (422 ASK_NO_GROUNDED_SOURCES), shown by the widget as its
    message: the answer row says so with that message; the console row does not count
    Chromium's line for it (a 405 still counts: test_a_refusing_backend_...)."""
    declined = "No passage of the documentation matches this question."
    with AskServer(site=dist) as ask:
        ask.error(422, "ASK_NO_GROUNDED_SOURCES", declined)
        status, report, stderr = check(ask.url + "/", "--question", "Best pizza in Naples?")
    assert status == 1, (stderr, report)
    found = verdicts(report)
    assert found["boot"] is True and found["answer"] is False
    assert "refused: HTTP 422" in detail(report, "answer")
    assert declined in detail(report, "answer")
    assert found["console"] is True, detail(report, "console")


def test_a_backend_citing_good_links_passes_sources(dist: Path) -> None:
    with AskServer(site=dist) as ask:
        ask.answer("See this page.", sources=[GOOD_SOURCE])
        status, report, stderr = check(ask.url + "/")
    assert status == 0, (stderr, report)
    assert "each loads and has its anchor" in detail(report, "sources")


def test_an_uncompressed_server_warns_with_the_bytes_it_would_save(dist: Path) -> None:
    plain = AppServer(Plain(create_static_app(dist))).start()
    try:
        _, report, stderr = check(plain.url + "/", "--boot-timeout", "120")
    finally:
        plain.stop()
    assert report is not None, stderr
    compression = next(c for c in report["checks"] if c["name"] == "compression")
    assert compression["ok"] is True and compression["warnings"]
    wasm = [w for w in compression["warnings"] if "pyodide.asm.wasm sent uncompressed" in w]
    assert wasm, compression["warnings"]
    assert compression["data"]["would_save"] > 5_000_000  # the wasm alone gzips by ~7 MB
    # The same dist served with its .br/.gz copies warns about nothing.
    with AskServer(site=dist) as ask:
        ask.answer("Hi.")
        _, compressed, _ = check(ask.url + "/")
    quiet = next(c for c in compressed["checks"] if c["name"] == "compression")  # type: ignore[index]
    assert quiet["warnings"] == [] and quiet["data"]["would_save"] == 0


class Redirecting:
    """dist/ whose page, or one runtime file, redirects to another origin."""

    def __init__(self, dist: Path, suffix: str, target: str) -> None:
        self.app = create_static_app(dist)
        self.suffix = suffix
        self.target = target

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].endswith(self.suffix):
            await RedirectResponse(self.target, status_code=302)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def test_an_off_origin_redirect_is_reported_not_followed(dist: Path) -> None:
    """Neither httpx nor Chromium follows it: the page's own is exit 2, a file's is `origin`."""
    landed: list[str] = []
    trap = AppServer(Landing(landed)).start()
    target = f"{trap.url}/elsewhere"  # 127.0.0.1 on another port: another origin
    page = AppServer(Redirecting(dist, "/moved.html", target)).start()
    file = AppServer(Redirecting(dist, "pyodide.asm.wasm", target)).start()
    try:
        status, report, stderr = check(page.url + "/moved.html")
        assert status == 2 and report is None
        assert f"redirects to {target}, another origin" in stderr and stderr.count("\n") == 1
        status, report, stderr = check(file.url + "/", "--boot-timeout", "60")
        assert status == 1, (stderr, report)
        assert verdicts(report)["origin"] is False
        assert f"redirects to {target}, not followed" in detail(report, "origin")
        assert verdicts(report)["runtime"] is False
        assert "pyodide.asm.wasm" in detail(report, "runtime")
    finally:
        page.stop()
        file.stop()
        trap.stop()
    assert landed == [], f"check followed a redirect off the page's origin: {landed}"


class Landing:
    """The other origin: records every request that reaches it."""

    def __init__(self, landed: list[str]) -> None:
        self.landed = landed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.landed.append(scope["path"])
            await PlainTextResponse("elsewhere")(scope, receive, send)


def test_a_page_whose_element_gets_no_shell_is_one_line(serve: Any) -> None:
    status, report, stderr = check(serve(missing="agentskit-ask.js"))
    assert status == 2 and report is None, stderr
    assert "got no shell within 30 s" in stderr and stderr.count("\n") == 1, stderr
    assert "Traceback" not in stderr
