"""`agentskit-web check` without a browser: the CSP reading, the loader's manifest, and the
URLs it refuses with one line and exit 2 (real loopback servers, no Chromium involved)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from agentskit_web.cli import check
from agentskit_web.server.static import AppServer, bind_socket

WIDGET_PAGE = (
    "<!doctype html><html><head>"
    "<meta http-equiv='Content-Security-Policy' content=\"script-src 'self'\">"
    "<script type=module src='/agentskit/agentskit-ask.js'></script></head>"
    "<body><agentskit-ask endpoint='/ask'></agentskit-ask></body></html>"
)


def test_a_policy_without_wasm_unsafe_eval_is_named_with_its_directive() -> None:
    assert check.csp_blockers(["default-src 'self'; script-src 'self'"]) == [
        "script-src 'self' lacks 'wasm-unsafe-eval' (Pyodide compiles WebAssembly)"
    ]
    # No script-src: default-src governs scripts.
    assert check.csp_blockers(["default-src 'self'; img-src *"]) == [
        "default-src 'self' lacks 'wasm-unsafe-eval' (Pyodide compiles WebAssembly)"
    ]
    # Each policy applies on its own: the header allows it, the <meta> does not.
    both = ["script-src 'self' 'wasm-unsafe-eval'", "script-src 'self'"]
    assert len(check.csp_blockers(both)) == 1


@pytest.mark.parametrize(
    "policy",
    [
        "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'",
        "script-src 'self' 'WASM-UNSAFE-EVAL'",
        "default-src 'self' 'unsafe-eval'",
        "img-src 'self'; style-src 'self'",  # nothing about scripts: not ours to judge
        "",
    ],
)
def test_policies_that_let_pyodide_compile_are_not_blockers(policy: str) -> None:
    assert check.csp_blockers([policy]) == []


def test_the_first_of_a_repeated_directive_wins() -> None:
    policy = "script-src 'self'; script-src 'self' 'wasm-unsafe-eval'"
    assert check.csp_blockers([policy]) != []


def test_the_declared_files_are_resolved_against_the_loader() -> None:
    manifest = {
        "loaded": True,
        "assets": {
            "runtime": "runtime.0123456789abcdef/",
            "stylesheet": "agentskit-ask.fedcba9876543210.css",
            "files": [{"name": "pyodide.asm.wasm", "size": 1}, {"name": "a.whl", "size": 2}],
        },
    }
    urls, why = check.declared_files("http://h:1/docs/agentskit/agentskit-ask.js", manifest)
    assert why is None
    folder = "http://h:1/docs/agentskit/runtime.0123456789abcdef/"
    assert urls == [
        "http://h:1/docs/agentskit/agentskit-ask.fedcba9876543210.css",
        folder + "pyodide.asm.wasm",
        folder + "a.whl",
        folder + "pyodide.mjs",
    ]


@pytest.mark.parametrize(
    ("manifest", "reason"),
    [
        ({"loaded": False, "assets": None}, "the loader did not run"),
        ({"loaded": True, "assets": None}, "the loader was not built"),
        ({"loaded": True, "assets": {"runtime": 3, "files": []}}, "malformed"),
        ({"loaded": True, "assets": {"runtime": "r/", "files": [{"name": None}]}}, "malformed"),
        ({"loaded": True, "assets": ["not", "a", "dict"]}, "malformed"),
        ("nonsense", "the loader did not run"),
    ],
)
def test_a_missing_or_malformed_manifest_is_a_reason_not_a_crash(
    manifest: object, reason: str
) -> None:
    urls, why = check.declared_files("http://h:1/agentskit-ask.js", manifest)
    assert urls == [] and why is not None and reason in why


def _app() -> Starlette:
    async def widget(request: Request) -> Response:
        headers = {"Content-Security-Policy": "default-src 'self'"}
        return HTMLResponse(WIDGET_PAGE, headers=headers)

    async def plain(request: Request) -> Response:
        return HTMLResponse("<!doctype html><p>No widget here.</p>")

    async def data(request: Request) -> Response:
        return JSONResponse({"not": "html"})

    async def gone(request: Request) -> Response:
        return Response("gone", status_code=410)

    routes = [("/", widget), ("/plain", plain), ("/data", data), ("/gone", gone)]
    return Starlette(routes=[Route(path, handler) for path, handler in routes])


@pytest.fixture(scope="module")
def server() -> Iterator[AppServer]:
    with AppServer(_app()) as running:
        yield running


def test_the_page_scan_reads_the_embed_and_every_policy(server: AppServer) -> None:
    scan = check.inspect_page(server.url + "/")
    assert scan.has_widget and scan.endpoint == "/ask"
    assert scan.scripts == ["/agentskit/agentskit-ask.js"]
    assert scan.policies == ["default-src 'self'", "script-src 'self'"]
    assert len(check.csp_blockers(scan.policies)) == 2


def test_urls_that_cannot_be_checked_exit_2_with_one_line(
    server: AppServer, capsys: pytest.CaptureFixture[str]
) -> None:
    closed = bind_socket("127.0.0.1", 0)
    port = closed.getsockname()[1]
    closed.close()
    cases = {
        f"http://127.0.0.1:{port}/": "does not answer",
        server.url + "/data": "is not HTML (Content-Type: application/json)",
        server.url + "/gone": "answered HTTP 410",
        server.url + "/plain": "has no <agentskit-ask> element",
        "ftp://example.invalid/": "is not an http(s) URL",
        "no scheme at all": "is not an http(s) URL",
    }
    for url, reason in cases.items():
        assert check.main([url]) == 2, url
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1, (url, err)
        assert err.startswith("agentskit-web check: ") and reason in err, (url, err)


def test_an_empty_question_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert check.main(["http://127.0.0.1:9/", "--question", "  "]) == 2
    assert "--question must not be empty" in capsys.readouterr().err


def test_the_table_names_every_failed_check() -> None:
    checks = [check.Check("loader", True, "ok"), check.Check("csp", False, "blocked: x")]
    table = check.format_table("http://h/", checks)
    assert table.splitlines()[-1] == "failed: csp"
    assert "FAIL  csp" in table


@pytest.mark.parametrize("allowed", [True, False], ids=["sandbox-allowed", "sandbox-refused"])
def test_check_starts_chromium_with_its_sandbox_wherever_the_platform_allows(
    monkeypatch: pytest.MonkeyPatch, allowed: bool
) -> None:
    """`check` loads a page we do not control: Chromium's sandbox stays on unless refused."""
    from agentskit_web import chromium_sandbox

    monkeypatch.setattr(chromium_sandbox, "sandbox_available", lambda: allowed)
    options = check.check_launch_options("/opt/owners/chromium")
    assert options["executable_path"] == "/opt/owners/chromium"
    assert options["chromium_sandbox"] is allowed
    assert ("--no-sandbox" in options["args"]) is not allowed
    assert "--headless" in options["args"]


def test_findings_are_the_widget_s_only_under_its_folder_or_at_its_endpoints() -> None:
    scan = check._EmbedScan()
    scan.feed("<agentskit-ask endpoint='https://ask.example/v1?x=1' knowledge='faq.json'>")
    whose = check.attribution_of(
        "https://docs.example/guide/", "https://docs.example/agentskit/agentskit-ask.js", scan
    )
    assert whose.is_widget("https://docs.example/agentskit/runtime.0123/pyodide.asm.wasm")
    assert whose.is_widget("https://ask.example/v1?corpus=docs")
    assert whose.is_widget("https://docs.example/guide/faq.json")
    assert not whose.is_widget("https://api.github.com/repos/pallets/flask")
    assert not whose.is_widget("https://docs.example/guide/", "")
    assert not whose.is_widget("https://docs.example/agentskit-other/x.js")


def test_the_page_s_own_findings_warn_and_fail_only_when_strict() -> None:
    findings = ["request to another origin https://api.github.com/x (aborted; ...)"]
    lenient = check.page_check(findings, strict=False)
    assert lenient.ok and lenient.warnings == findings and "--strict-page" in lenient.detail
    assert not check.page_check(findings, strict=True).ok
    assert check.page_check([], strict=True).ok


def test_only_a_decline_or_rate_limit_the_widget_showed_leaves_the_console_row() -> None:
    ask = "https://docs.example/api/ask"
    statuses = {
        f"{ask}?corpus=docs": 422,
        ask: 429,
        "https://docs.example/agentskit/runtime.0123/pyodide.mjs": 404,
        "https://docs.example/api/ask-other": 422,
    }
    assert check.rendered_refusal(f"{ask}?corpus=docs", ask, statuses, shown=True)
    assert check.rendered_refusal(ask, ask, statuses, shown=True)
    # Not shown as the answer's message: a console error like any other.
    assert not check.rendered_refusal(ask, ask, statuses, shown=False)
    # Another URL's 4xx still counts.
    for source in (
        "https://docs.example/agentskit/runtime.0123/pyodide.mjs",
        "https://docs.example/api/ask-other",
    ):
        assert not check.rendered_refusal(source, ask, statuses, shown=True)
    # A 4xx that means widget and backend disagree, or a 5xx, still counts.
    for status in (400, 401, 403, 405, 413, 415, 421, 423, 500, 502):
        assert not check.rendered_refusal(ask, ask, {ask: status}, shown=True), status


def test_an_uncaught_error_is_attributed_by_its_first_frame_s_script() -> None:
    """Playwright gives a page error's whole stack: the URL is the first frame's script."""
    widget = (
        "TypeError: x is undefined\n"
        "    at mount (https://docs.example/agentskit/agentskit-ask.js:120:7)\n"
        "    at https://docs.example/_static/theme.js:3:1"
    )
    theme = (
        "TypeError: Failed to fetch\n"
        "    at getReleasedVersions (https://docs.example/_static/describe_version.js:91:24)"
    )
    anonymous = "at http://127.0.0.1:8000/agentskit/agentskit-ask.js:9"
    assert check.stack_source(widget) == "https://docs.example/agentskit/agentskit-ask.js"
    assert check.stack_source(theme) == "https://docs.example/_static/describe_version.js"
    assert check.stack_source(anonymous) == "http://127.0.0.1:8000/agentskit/agentskit-ask.js"
    assert check.stack_source("Error: thrown in an inline script") == ""
    assert check.stack_source("") == ""
    scan = check._EmbedScan()
    whose = check.attribution_of(
        "https://docs.example/", "https://docs.example/agentskit/agentskit-ask.js", scan
    )
    assert whose.is_widget(check.stack_source(widget))
    assert not whose.is_widget(check.stack_source(theme))


def test_a_static_index_file_the_page_did_not_get_is_named_with_its_status() -> None:
    page = "https://docs.example/guide/"
    manifest = {"loaded": True, "staticIndex": "https://docs.example/agentskit/index/m.1.json"}
    folder = check.index_folder_of(page, manifest)
    assert folder == "https://docs.example/agentskit/index/"
    assert check.index_folder_of(page, {"loaded": True, "staticIndex": None}) is None
    assert check.index_folder_of(page, None) is None
    part, gone, fine = (folder + name for name in ("p.2.json", "p.3.json", "m.1.json"))
    other = "https://docs.example/agentskit/runtime.0/pyodide.asm.wasm"
    requested = [fine, part, part, gone, other]
    statuses = {fine: 200, part: 404, other: 404}
    failed = {gone: "net::ERR_CONNECTION_REFUSED"}
    assert check.failed_index_files(folder, requested, statuses, failed) == [
        "/agentskit/index/p.2.json: HTTP 404",
        "/agentskit/index/p.3.json: net::ERR_CONNECTION_REFUSED",
    ]
    # A fetch the page itself cancelled is not a missing file; no index, nothing to name.
    assert check.failed_index_files(folder, [gone], {}, {gone: "net::ERR_ABORTED"}) == []
    assert check.failed_index_files(None, requested, statuses, failed) == []
