"""`agentskit-web check URL`: does the Ask widget on this page work, as a reader would see it?

It fetches the page, then opens it in Chromium (Debian's, or `--chromium`),
reaches for `<agentskit-ask>` as a reader does (a click into the box, or on
the launcher button: the loader's intent) and reports, as a table or `--json`:

- loader: the `agentskit-ask.js` script is reachable (size sent, compression);
- runtime: every file the built loader declares (its assets manifest: the stylesheet and
  the `runtime.<hash>/` folder's files) and every file the page loaded while booting
  answered 2xx (sizes, and the compression sent: the `.br`/`.gz` copies beside each file);
- types: `.wasm` is `application/wasm`, `.mjs`/`.js` are JavaScript;
- csp: no Content-Security-Policy directive blocked the widget (names the directive);
- boot: the widget reached `data-state=ready` after intent, and how long it took;
- answer: one question (`--question`) got an answer; a backend that is unreachable or
  refuses is said plainly; a static index file the page asked for and did not get (a
  part missing on the host) is named with the HTTP status it got;
- sources: every source link of that answer is on the page's origin and loads (HTTP 200,
  HTML), and its `#anchor` is an `id` on that page; a failure names the link;
- compression: a warning (not a failure) for each runtime file sent uncompressed,
  with the bytes gzip would save;
- origin: no request of the widget left the page's origin (they are aborted, nothing
  leaves);
- console: no console errors or uncaught page errors from the widget, each with its URL.
  Not counted: Chromium's error line for the Ask endpoint's answer to the reader's question
  (a decline, 422 `ASK_NO_GROUNDED_SOURCES`; a rate limit, 429) when the widget showed it as
  its message: the protocol makes those error statuses, the widget renders them, and the
  answer row reports them;
- page: what the host page did itself (a theme's or analytics' off-origin request, its
  console errors, its own CSP violations such as a theme's inline script), with the URL
  or the directive and the `--allow-origin` to let a request through: warnings, failing
  only with `--strict-page`.

A finding is the widget's when its URL (the request, the console message's source, the
script of an uncaught error's first stack frame, the CSP violation's blocked URL or
source file) is in the loader's folder or is the element's endpoint or knowledge URL;
anything else is the page's. The static index's files are the answer's, not the
runtime's.

Only the checked page's origin is fetched (`--allow-origin ORIGIN` adds one): a URL the
page names on another origin is reported, not requested, by httpx and by Chromium alike,
and a redirect to another origin is reported, not followed. A CI runner checking an
untrusted page thus makes no request it did not choose.

Exit status: 0 when every check passes, 1 when one fails, 2 (one line on
stderr) when the URL does not answer, is not HTML, redirects off its origin, has no
`<agentskit-ask>`, or its element never gets the widget's shell.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import time
import zlib
from dataclasses import asdict, dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from ..build.assets import COMPRESS_MIN_BYTES, COMPRESS_MIN_SAVING, COMPRESSIBLE

DEFAULT_QUESTION = "What is this site about?"
BOOT_TIMEOUT_S = 240.0
ANSWER_TIMEOUT_S = 90.0
RENDERED_REFUSALS = frozenset({422, 429})
"""The Ask statuses that answer the reader's question itself (docs/protocol.md: no passage
matches, asked too fast): the widget shows their message. Any other 4xx (400, 401, 403, 405,
413, 415) means the widget and its backend disagree, a deployment fault that stays counted."""
FETCH_TIMEOUT_S = 20.0
SHELL_TIMEOUT_S = 30.0
"""How long the element may wait for the loader to give it its shell (`data-state`)."""
MAX_REDIRECTS = 5
"""Same-origin redirects followed per URL; an off-origin one stops at once."""
MAX_SOURCE_LINKS = 20
"""Source links of the answer fetched at most (an answer lists a handful)."""
MAX_SOURCE_BYTES = 5 * 1024 * 1024
"""A source page is read up to this many bytes to look for its anchors."""
JS_TYPES = ("text/javascript", "application/javascript", "application/x-javascript")
RUNTIME_SUFFIXES = (".wasm", ".mjs", ".js", ".whl", ".zip", ".json", ".tar", ".css", ".data")
CSP_DIRECTIVE = re.compile(r'Content Security Policy directive:? "([^"]+)"')
IN_PAGE_SCHEMES = frozenset({"data", "blob", "about"})
MANIFEST_JS = """() => {
  const kit = globalThis.agentskitAsk;
  return kit === undefined
    ? {loaded: false, assets: null, staticIndex: null}
    : {loaded: true, assets: kit.assets, staticIndex: kit.staticIndex ?? null};
}"""
STACK_URL = re.compile(r"(https?://[^\s()]+?)(?::\d+){0,2}(?=[\s)]|$)", re.MULTILINE)
"""A frame's script URL in a JavaScript stack (V8's `at f (URL:line:col)` or `at URL:line:col`)."""
CSP_LISTENER = """
window.__agentskitCsp = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__agentskitCsp.push({
    text: `directive ${e.effectiveDirective} (${e.originalPolicy}) ` +
      `refused ${e.blockedURI || 'inline'}` + (e.sourceFile ? ` in ${e.sourceFile}` : ''),
    blocked: e.blockedURI || '', source: e.sourceFile || ''});
});
"""


class CheckUsageError(Exception):
    """The URL cannot be checked at all (exit 2 with this one-line reason)."""


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    data: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


@dataclass
class FileReport:
    url: str
    status: int | None
    content_type: str
    encoding: str
    bytes_sent: int
    error: str | None = None
    would_save: int = 0
    """Bytes gzip would have saved on a compressible file sent uncompressed."""


@dataclass(frozen=True)
class Origins:
    """The origins `check` may fetch: the page's own, plus any `--allow-origin`."""

    page: str
    extra: frozenset[str] = frozenset()

    def allows(self, url: str) -> bool:
        return origin_of(url) in {self.page, *self.extra}

    def refusal(self, url: str) -> str:
        return (
            f"{url} is on another origin (not fetched; --allow-origin {origin_of(url)} allows it)"
        )


@dataclass(frozen=True)
class Attribution:
    """Whose a finding is: the widget's (its assets folder, its endpoint) or the host page's.

    A theme's analytics, a repository badge calling an API, an inline script the
    site's CSP forbids: the page's, reported in the `page` row with the URL or the
    directive, and failing only with `--strict-page`. What the widget itself
    requests or runs is judged in its own rows."""

    assets: str
    """The loader's folder (`https://site/agentskit/`): everything the widget loads."""
    endpoints: frozenset[str]
    """The Ask endpoint (and knowledge artifact) URLs, without query."""

    def is_widget(self, *urls: str) -> bool:
        return any(
            url.startswith(self.assets) or url.split("?", 1)[0] in self.endpoints
            for url in urls
            if url
        )


def rendered_refusal(source: str, ask_url: str, statuses: dict[str, int], shown: bool) -> bool:
    """Is this console error Chromium's line for a decline (or rate limit) the widget showed?

    The Ask contract answers a decline with 422 and a rate limit with 429, each with a JSON
    error that the widget renders as the answer's message (docs/protocol.md); Chromium logs
    every 4xx response as a console error regardless. Such a line is the answer row's
    business, not a console fault of the widget (docs/design/decline-is-a-4xx.md)."""
    return (
        shown and source.split("?", 1)[0] == ask_url and statuses.get(source) in RENDERED_REFUSALS
    )


def stack_source(stack: str) -> str:
    """The script an uncaught error was thrown in: the URL of its stack's first frame.

    Playwright gives a page error's whole stack (the message first, then the frames);
    attribution needs the URL of the script that threw, as a console message's
    location gives it. A stack without a frame URL (an error in an inline script
    or from eval) is the page's ('')."""
    found = STACK_URL.search(stack)
    return found.group(1) if found else ""


def index_folder_of(page_url: str, manifest: Any) -> str | None:
    """The folder of the static index the loader was told about (its manifest's folder),
    from the page's `agentskitAsk.staticIndex`; None when the page answers without one."""
    url = manifest.get("staticIndex") if isinstance(manifest, dict) else None
    if not isinstance(url, str) or not url:
        return None
    return urljoin(urljoin(page_url, url), ".")


def failed_index_files(
    folder: str | None, requested: list[str], statuses: dict[str, int], failed: dict[str, str]
) -> list[str]:
    """The static index's files the page asked for and did not get, each with what it got:
    a missing part is the answer's fault (the site must be published again), not the
    runtime's."""
    if folder is None:
        return []
    missing = []
    for url in dict.fromkeys(requested):
        if not url.startswith(folder):
            continue
        status = statuses.get(url)
        if status is not None and status >= 400:
            missing.append(f"{urlsplit(url).path}: HTTP {status}")
        elif status is None and url in failed and "ERR_ABORTED" not in failed[url]:
            missing.append(f"{urlsplit(url).path}: {failed[url]}")
    return missing


def page_check(findings: list[str], strict: bool) -> Check:
    """The `page` row: the host page's own findings as warnings, a failure only if `strict`."""
    if not findings:
        return Check("page", True, "nothing from the page itself")
    summary = f"{len(findings)} findings of the page, not the widget"
    if not strict:
        summary += " (they fail only with --strict-page)"
    return Check("page", not strict, summary, {"findings": findings}, list(findings))


def attribution_of(page_url: str, loader_src: str | None, scan: _EmbedScan) -> Attribution:
    assets = loader_src.rsplit("/", 1)[0] + "/" if loader_src else "\0"
    endpoints = {urljoin(page_url, scan.endpoint or "/api/ask").split("?", 1)[0]}
    if scan.knowledge:
        endpoints.add(urljoin(page_url, scan.knowledge).split("?", 1)[0])
    return Attribution(assets, frozenset(endpoints))


class _Ids(HTMLParser):
    """Every `id` on a page (and `<a name>`, which browsers also scroll to)."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if value and (key == "id" or (tag == "a" and key == "name")):
                self.ids.add(value)


class _EmbedScan(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.has_widget = False
        self.endpoint: str | None = None
        self.knowledge: str | None = None
        self.scripts: list[str] = []
        self.policies: list[str] = []  # Content-Security-Policy: the header's and <meta>'s

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        equiv = (values.get("http-equiv") or "").strip().lower()
        if tag == "meta" and equiv == "content-security-policy" and values.get("content"):
            self.policies.append(str(values["content"]))
        if tag == "agentskit-ask":
            self.has_widget = True
            self.endpoint = self.endpoint or values.get("endpoint")
            self.knowledge = self.knowledge or values.get("knowledge")
        elif tag == "script" and values.get("src"):
            self.scripts.append(str(values["src"]))


def _directives(policy: str) -> dict[str, list[str]]:
    """One policy's directives (the first of a repeated name wins, as in browsers)."""
    found: dict[str, list[str]] = {}
    for part in policy.split(";"):
        words = part.split()
        if words:
            found.setdefault(words[0].lower(), [w.lower() for w in words[1:]])
    return found


def csp_blockers(policies: list[str]) -> list[str]:
    """What in the page's policies stops the loader, read before any browser runs.

    The loader starts Pyodide itself, and Pyodide compiles WebAssembly, which
    needs 'wasm-unsafe-eval' (or the wider 'unsafe-eval') in script-src, or in
    default-src when there is no script-src: without it the boot hangs rather than
    fails. Every policy applies (a header and a <meta> both must allow it). Where
    scripts may come from (nonces, 'strict-dynamic', hosts) is left to the browser:
    its violation reports name the directive.
    """
    blockers: list[str] = []
    for policy in policies:
        directives = _directives(policy)
        name = "script-src" if "script-src" in directives else "default-src"
        sources = directives.get(name)
        if sources is None:
            continue
        if not {"'wasm-unsafe-eval'", "'unsafe-eval'"} & set(sources):
            listed = " ".join(sources) or "(empty)"
            blockers.append(
                f"{name} {listed} lacks 'wasm-unsafe-eval' (Pyodide compiles WebAssembly)"
            )
    return blockers


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _get(client: Any, url: str, origins: Origins, **options: Any) -> tuple[str, Any]:
    """Open a GET stream, following same-origin redirects only (the caller closes it).

    Returns the final URL and the open response; CheckUsageError names an off-origin
    redirect (or a chain longer than MAX_REDIRECTS) instead of following it.
    """
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        request = client.build_request("GET", current, **options)
        response = client.send(request, stream=True, follow_redirects=False)
        if not response.is_redirect:
            return current, response
        response.close()
        target = urljoin(current, response.headers.get("location", ""))
        if not origins.allows(target):
            raise CheckUsageError(
                f"{current} redirects to {target}, another origin (not followed; "
                f"--allow-origin {origin_of(target)} allows it)"
            )
        current = target
    raise CheckUsageError(f"{url}: more than {MAX_REDIRECTS} redirects")


def _fetch_file(client: Any, url: str, origins: Origins) -> FileReport:
    """GET as a browser would (brotli/gzip accepted); the bytes actually sent.

    A compressible file sent uncompressed is gzipped here (level 9, as the build's
    `.gz` copies) to say how many bytes compression would have saved; by the build's
    own rule (build/assets.py), a saving under COMPRESS_MIN_SAVING is none.
    """
    import httpx

    if not origins.allows(url):
        return FileReport(url, None, "", "", 0, error=origins.refusal(url))
    try:
        _, response = _get(client, url, origins, headers={"Accept-Encoding": "br, gzip"})
        with contextlib.closing(response):
            encoding = response.headers.get("content-encoding", "identity")
            packer = None
            if encoding == "identity" and urlsplit(url).path.endswith(tuple(COMPRESSIBLE)):
                packer = zlib.compressobj(9, zlib.DEFLATED, 31)
            packed = 0
            for chunk in response.iter_raw():
                if packer is not None:
                    packed += len(packer.compress(chunk))
            sent = response.num_bytes_downloaded
            if packer is not None:
                packed += len(packer.flush())
            pays = packer is not None and sent >= COMPRESS_MIN_BYTES
            saving = sent - packed if pays and packed <= sent * (1 - COMPRESS_MIN_SAVING) else 0
            return FileReport(
                url=url,
                status=response.status_code,
                content_type=response.headers.get("content-type", ""),
                encoding=encoding,
                bytes_sent=sent,
                would_save=max(saving, 0),
            )
    except CheckUsageError as error:
        return FileReport(url, None, "", "", 0, error=str(error))
    except httpx.HTTPError as error:
        return FileReport(url, None, "", "", 0, error=f"{type(error).__name__}: {error}")


def source_link_problem(client: Any, href: str, origins: Origins) -> str | None:
    """Why a source link would fail a reader (None when it loads and its anchor exists).

    The page must answer 200 with HTML; a `#fragment` must be an `id` on it.
    """
    import httpx

    if not origins.allows(href):
        return origins.refusal(href)
    fragment = unquote(urlsplit(href).fragment)
    try:
        _, response = _get(client, href.split("#", 1)[0], origins)
        with contextlib.closing(response):
            if response.status_code != 200:
                return f"{href}: HTTP {response.status_code}"
            kind = response.headers.get("content-type", "")
            if "html" not in kind.lower():
                return f"{href}: not HTML ({kind or 'no Content-Type'})"
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_SOURCE_BYTES:
                    break
    except CheckUsageError as error:
        return f"{href}: {error}"
    except httpx.HTTPError as error:
        return f"{href}: {type(error).__name__}: {error}"
    if fragment:
        scan = _Ids()
        scan.feed(body.decode(response.encoding or "utf-8", errors="replace"))
        if fragment not in scan.ids:
            return f"{href}: #{fragment} is not an id on that page"
    return None


def inspect_page(url: str, origins: Origins | None = None) -> _EmbedScan:
    """Fetch the page itself; CheckUsageError when it cannot be checked."""
    import httpx

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise CheckUsageError(f"{url} is not an http(s) URL")
    origins = origins or Origins(origin_of(url))
    try:
        with httpx.Client(timeout=FETCH_TIMEOUT_S) as client:
            _, response = _get(client, url, origins)
            try:
                response.read()
            finally:
                response.close()
    except httpx.HTTPError as error:
        reason = str(error) or type(error).__name__
        raise CheckUsageError(f"{url} does not answer: {reason}") from None
    if response.status_code >= 400:
        raise CheckUsageError(f"{url} answered HTTP {response.status_code}")
    kind = response.headers.get("content-type", "")
    if "html" not in kind.lower():
        raise CheckUsageError(f"{url} is not HTML (Content-Type: {kind or 'none'})")
    scan = _EmbedScan()
    scan.policies.extend(response.headers.get_list("content-security-policy"))
    scan.feed(response.text)
    if not scan.has_widget:
        raise CheckUsageError(f"{url} has no <agentskit-ask> element")
    return scan


def _size(count: int) -> str:
    return f"{count / 1024:.1f} kB" if count < 1024 * 1024 else f"{count / 1048576:.2f} MB"


def _type_ok(path: str, kind: str) -> bool:
    kind = kind.split(";")[0].strip().lower()
    if path.endswith(".wasm"):
        return kind == "application/wasm"
    if path.endswith((".mjs", ".js")):
        return kind in JS_TYPES
    return True


def declared_files(loader_url: str, manifest: Any) -> tuple[list[str], str | None]:
    """The URLs the built loader will fetch (from its ASSETS manifest), or why there are none.

    The manifest comes from the page, so its shape is checked rather than trusted.
    """
    if not isinstance(manifest, dict) or not manifest.get("loaded"):
        return [], "the loader did not run (no globalThis.agentskitAsk on the page)"
    assets = manifest.get("assets")
    if assets is None:
        return [], "the loader was not built (no assets manifest: run `agentskit-web assets`)"
    files = assets.get("files") if isinstance(assets, dict) else None
    runtime = assets.get("runtime") if isinstance(assets, dict) else None
    names = [f.get("name") for f in files] if isinstance(files, list) else []
    if not isinstance(runtime, str) or not names or not all(isinstance(n, str) for n in names):
        return [], "the loader's assets manifest is malformed"
    base = urljoin(loader_url, ".")
    folder = urljoin(base, runtime)
    urls = [urljoin(folder, str(name)) for name in names]
    urls.append(urljoin(folder, "pyodide.mjs"))  # the loader imports it to start Pyodide
    stylesheet = assets.get("stylesheet")
    if isinstance(stylesheet, str):
        urls.insert(0, urljoin(base, stylesheet))
    return list(dict.fromkeys(urls)), None


def _note(seen: dict[str, Any], key: str, value: Any) -> None:
    seen.setdefault(key, value)


def check_launch_options(executable: str) -> dict[str, Any]:
    """How `check` starts Chromium: the shared options (its sandbox on wherever the platform
    allows it, since `check` loads a page we do not control) with the owner's executable."""
    from ..bench.harness import chromium_launch_options

    return {**chromium_launch_options(), "executable_path": executable}


def run_checks(
    url: str,
    question: str,
    chromium: str | None,
    boot_timeout_s: float = BOOT_TIMEOUT_S,
    allow_origins: tuple[str, ...] = (),
    strict_page: bool = False,
) -> list[Check]:
    import httpx
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    from ..bench.harness import chromium_executable
    from ..testing.widget import reach_for

    origin = origin_of(url)
    origins = Origins(origin, frozenset(origin_of(extra) for extra in allow_origins))
    scan = inspect_page(url, origins)
    checks: list[Check] = []
    requested: list[str] = []
    failed: dict[str, str] = {}
    statuses: dict[str, int] = {}
    off_origin: list[str] = []
    console: list[tuple[str, str]] = []
    """Each console error or page error, with the URL it came from ('' when none)."""
    ask_url = urljoin(url, scan.endpoint or "/api/ask").split("?", 1)[0]
    ask_path = urlsplit(ask_url).path

    def route(route: Any) -> None:
        target = route.request.url
        if urlsplit(target).scheme in IN_PAGE_SCHEMES:
            route.fallback()
        elif not origins.allows(target):
            off_origin.append(target)
            route.abort()
        elif route.request.method != "GET":
            route.fallback()
        else:
            # Chromium follows redirects without asking the route again: fetch without
            # following, and hand the page only a redirect that stays on an allowed origin.
            try:
                response = route.fetch(max_redirects=0)
            except PlaywrightError as error:
                failed.setdefault(target, str(error).splitlines()[0])
                route.abort()
                return
            location = response.headers.get("location")
            if 300 <= response.status < 400 and location:
                onward = urljoin(target, location)
                if not origins.allows(onward):
                    off_origin.append(f"{target} (redirects to {onward}, not followed)")
                    route.abort()
                    return
            route.fulfill(response=response)

    loader_srcs = [urljoin(url, s) for s in scan.scripts if "agentskit-ask" in s]
    with sync_playwright() as playwright:
        executable = chromium or chromium_executable()
        try:
            browser = playwright.chromium.launch(**check_launch_options(executable))
        except PlaywrightError as error:
            first = str(error).strip().splitlines()[0] if str(error).strip() else "failed"
            raise CheckUsageError(f"cannot start Chromium {executable}: {first}") from None
        try:
            context = browser.new_context()
            context.route("**/*", route)
            page = context.new_page()
            page.add_init_script(CSP_LISTENER)
            page.on("request", lambda r: requested.append(r.url))
            page.on("requestfailed", lambda r: _note(failed, r.url, r.failure or "failed"))
            page.on("response", lambda r: _note(statuses, r.url, r.status))
            page.on(
                "console",
                lambda m: (
                    console.append((m.text, str(m.location.get("url") or "")))
                    if m.type == "error"
                    else None
                ),
            )
            page.on(
                "pageerror",
                lambda e: console.append((f"page error: {e}", stack_source(e.stack or ""))),
            )
            try:
                page.goto(url, wait_until="load")
            except PlaywrightError as error:
                first = str(error).strip().splitlines()[0]
                raise CheckUsageError(f"{url} did not load in Chromium: {first}") from None
            manifest = page.evaluate(MANIFEST_JS)
            host = page.locator("agentskit-ask").first
            try:
                host.wait_for(state="attached", timeout=SHELL_TIMEOUT_S * 1000)
                page.wait_for_selector(
                    "agentskit-ask[data-state]", state="attached", timeout=SHELL_TIMEOUT_S * 1000
                )
            except PlaywrightError:
                script = loader_srcs[0] if loader_srcs else "(no agentskit-ask script on the page)"
                raise CheckUsageError(
                    f"{url}: the <agentskit-ask> element got no shell within "
                    f"{SHELL_TIMEOUT_S:.0f} s: the loader {script} did not run"
                ) from None
            started = time.monotonic()
            reach_for(page)  # a click into the box (or on the launcher): the loader's intent
            state = None
            try:
                page.wait_for_selector(
                    "agentskit-ask[data-state=ready], agentskit-ask[data-state=error]",
                    state="attached",
                    timeout=boot_timeout_s * 1000,
                )
                state = host.get_attribute("data-state")
            except PlaywrightError:
                state = host.get_attribute("data-state")
            boot_seconds = time.monotonic() - started
            error_text = None
            if state != "ready":
                node = page.locator("agentskit-ask .ak-error-message")
                error_text = (node.first.text_content() or "").strip() if node.count() else None
            violations = list(page.evaluate("() => window.__agentskitCsp || []"))
            answer = _ask(page, question, state == "ready", statuses, failed, ask_path)
        finally:
            browser.close()

    whose = attribution_of(url, loader_srcs[0] if loader_srcs else None, scan)
    same_origin = [u for u in dict.fromkeys(requested) if origin_of(u) == origin]
    declared, unbuilt = declared_files(loader_srcs[0], manifest) if loader_srcs else ([], None)
    index_folder = index_folder_of(url, manifest)
    missing_index = failed_index_files(index_folder, requested, statuses, failed)
    if not answer["ok"] and missing_index:
        answer["detail"] += f" (static index files missing: {', '.join(missing_index)})"
    observed = [
        u
        for u in same_origin
        if urlsplit(u).path.endswith(RUNTIME_SUFFIXES)
        and not (index_folder and u.startswith(index_folder))
    ]
    runtime_urls = list(dict.fromkeys([*declared, *observed]))
    hrefs: list[str] = answer["data"].get("sources", [])
    with httpx.Client(timeout=FETCH_TIMEOUT_S) as client:
        loaders = [_fetch_file(client, u, origins) for u in loader_srcs]
        files = [_fetch_file(client, u, origins) for u in runtime_urls if u not in loader_srcs]
        checked = list(dict.fromkeys(hrefs))[:MAX_SOURCE_LINKS]
        link_problems = [p for h in checked if (p := source_link_problem(client, h, origins))]

    # loader
    if not loaders:
        checks.append(Check("loader", False, "no <script src=…agentskit-ask…> on the page"))
    else:
        loader = loaders[0]
        ok = loader.status is not None and loader.status < 400 and loader.url not in failed
        detail = (
            f"{urlsplit(loader.url).path}: HTTP {loader.status}, {_size(loader.bytes_sent)} "
            f"sent ({loader.encoding})"
            if loader.status is not None
            else f"{loader.url}: {loader.error}"
        )
        checks.append(Check("loader", ok, detail, asdict(loader)))

    # runtime files
    broken = [
        f"{urlsplit(u).path} "
        f"({f'HTTP {statuses[u]}' if statuses.get(u, 200) >= 400 else failed.get(u)})"
        for u in runtime_urls
        if (u in failed and "ERR_ABORTED" not in failed[u]) or statuses.get(u, 200) >= 400
    ]
    broken += [
        f"{urlsplit(f.url).path} ({f.error or f'HTTP {f.status}'})"
        for f in files
        if (f.status or 500) >= 400 and f.url not in failed and statuses.get(f.url, 200) < 400
    ]
    total = sum(f.bytes_sent for f in files)
    encodings = sorted({f.encoding for f in files if f.status and f.status < 400})
    # The last declared file is pyodide.mjs, in the runtime.<hash>/ folder.
    folder = urlsplit(declared[-1]).path.rsplit("/", 1)[0] + "/" if declared else None
    where = f" in {folder}" if folder else ""
    detail = (
        f"missing or failing: {', '.join(broken)}"
        if broken
        else unbuilt
        if unbuilt
        else f"{len(files)} files ({len(declared)} declared by the loader{where}), "
        f"{_size(total)} sent ({', '.join(encodings) or 'none'})"
    )
    checks.append(
        Check(
            "runtime",
            not broken and not unbuilt and bool(files),
            detail,
            {"files": [asdict(f) for f in files], "declared": declared},
        )
    )

    # content types
    typed = [f for f in [*loaders, *files] if urlsplit(f.url).path.endswith((".wasm", ".mjs"))]
    wrong = [
        f"{urlsplit(f.url).path} is {f.content_type or 'untyped'}"
        for f in typed
        if f.status and f.status < 400 and not _type_ok(urlsplit(f.url).path, f.content_type)
    ]
    checks.append(
        Check(
            "types",
            not wrong and bool(typed),
            "; ".join(wrong)
            if wrong
            else f"{len(typed)} .wasm/.mjs files correctly typed"
            if typed
            else "no .wasm or .mjs file was loaded",
        )
    )

    # CSP
    page_findings: list[str] = []
    blocked = {
        m.group(1)
        for text, source in console
        if (m := CSP_DIRECTIVE.search(text)) and whose.is_widget(source)
    }
    for violation in violations:
        text = str(violation.get("text", ""))
        if whose.is_widget(str(violation.get("blocked", "")), str(violation.get("source", ""))):
            blocked.add(text)
        else:
            page_findings.append(f"CSP {text}")
    blocked.update(csp_blockers(scan.policies))
    if error_text and "Content-Security-Policy" in error_text:
        blocked.add(error_text)
    checks.append(
        Check(
            "csp",
            not blocked,
            f"blocked: {'; '.join(sorted(blocked))}" if blocked else "nothing blocked",
            {"blocked": sorted(blocked)},
        )
    )

    # boot
    boot_ok = state == "ready"
    checks.append(
        Check(
            "boot",
            boot_ok,
            f"ready {boot_seconds:.1f} s after intent"
            if boot_ok
            else f"state {state!r} after {boot_seconds:.1f} s: {error_text or 'no message'}",
            {"seconds": round(boot_seconds, 3), "state": state},
        )
    )

    # answer and sources
    checks.append(Check("answer", answer["ok"], answer["detail"], answer["data"]))
    foreign = [h for h in hrefs if origin_of(h) != origin]
    problems = [f"off-origin link {h}" for h in foreign if h not in checked]
    problems += link_problems
    checks.append(
        Check(
            "sources",
            answer["ok"] and not foreign and not problems,
            f"broken: {'; '.join(problems)}"
            if problems
            else f"{len(hrefs)} source links on this origin, each loads and has its anchor"
            if answer["ok"]
            else "not checked: the answer failed",
            {"hrefs": hrefs, "problems": problems},
        )
    )

    # compression: a warning per runtime file (the loader and what it declares) sent raw
    runtime_files = [*loaders, *(f for f in files if f.url in declared)]
    plain = [f for f in runtime_files if f.would_save > 0]
    saving = sum(f.would_save for f in plain)
    checks.append(
        Check(
            "compression",
            True,
            f"{len(plain)} files sent uncompressed: {_size(saving)} ({saving} bytes) "
            "would be saved by serving the .br/.gz copies"
            if plain
            else "every compressible runtime file was sent compressed",
            {"would_save": saving, "files": {f.url: f.would_save for f in plain}},
            [
                f"{urlsplit(f.url).path} sent uncompressed: {f.would_save} bytes would be saved"
                for f in plain
            ],
        )
    )

    # origin and console: the widget's in their rows, the host page's in `page`
    leaving = list(dict.fromkeys(off_origin))
    widget_leaving = [u for u in leaving if whose.is_widget(u.split(" ", 1)[0])]
    page_leaving = [u for u in leaving if u not in widget_leaving]
    checks.append(
        Check(
            "origin",
            not widget_leaving,
            f"the widget requested other origins: {', '.join(widget_leaving)}"
            if widget_leaving
            else "no request of the widget left the page's origin",
            {"urls": widget_leaving},
        )
    )
    page_findings[:0] = [
        f"request to another origin {u} (aborted; --allow-origin {origin_of(u.split(' ', 1)[0])} "
        "lets it through)"
        for u in page_leaving
    ]
    widget_console = []
    shown = answer["data"].get("status") in {"complete", "error"}
    for text, source in console:
        if rendered_refusal(source, ask_url, statuses, shown):
            continue
        named = f"{text} ({source.splitlines()[0]})" if source and source not in text else text
        if whose.is_widget(source) or whose.assets in text:
            widget_console.append(named)
        elif not any(u.split(" ", 1)[0] == source for u in page_leaving):
            page_findings.append(f"console: {named}")
    checks.append(
        Check(
            "console",
            not widget_console,
            f"{len(widget_console)} errors: {widget_console[0]}"
            if widget_console
            else "no console errors from the widget",
            {"errors": widget_console},
        )
    )
    checks.append(page_check(page_findings, strict_page))
    return checks


def _ask(
    page: Any,
    question: str,
    ready: bool,
    statuses: dict[str, int],
    failed: dict[str, str],
    ask_path: str,
) -> dict[str, Any]:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import expect

    if not ready:
        return {"ok": False, "detail": "not asked: the widget did not boot", "data": {}}
    posts: list[Any] = []
    page.on(
        "request",
        lambda r: (
            posts.append(r) if r.method == "POST" and urlsplit(r.url).path == ask_path else None
        ),
    )
    field_ = page.locator("agentskit-ask .ak-input")
    field_.fill(question)
    field_.press("Enter")
    last = page.locator("agentskit-ask .ak-assistant").last
    try:
        last.wait_for(state="attached", timeout=30_000)
        expect(last).to_have_attribute(
            "data-status", re.compile(r"^(complete|error)$"), timeout=ANSWER_TIMEOUT_S * 1000
        )
    except (PlaywrightError, AssertionError):
        return {"ok": False, "detail": f"no answer within {ANSWER_TIMEOUT_S:.0f} s", "data": {}}
    status = last.get_attribute("data-status")
    text = (last.locator(".ak-body").first.text_content() or "").strip()
    sources = last.locator(".ak-source-link").evaluate_all("(ns) => ns.map((n) => n.href)")
    data: dict[str, Any] = {"status": status, "chars": len(text), "sources": sources}
    request = posts[-1].url if posts else None
    errors = last.locator(".ak-message-error-text")
    message = (errors.first.text_content() or "").strip() if errors.count() else text or "error"
    # A stream the page cancels after `done` fails with ERR_ABORTED: unreachable means no response.
    if request is not None and request in failed and request not in statuses:
        return {
            "ok": False,
            "detail": f"the Ask backend {ask_path} is unreachable ({failed[request]})",
            "data": data,
        }
    if request is not None and statuses.get(request, 200) >= 400:
        return {
            "ok": False,
            "detail": f"the Ask backend {ask_path} refused: HTTP {statuses[request]} "
            f"(the widget showed: {message})",
            "data": data,
        }
    if status != "complete":
        return {"ok": False, "detail": f"the answer failed: {message}", "data": data}
    where = "from the backend" if request is not None else "locally (no request)"
    return {"ok": True, "detail": f"{len(text)} characters {where}", "data": data}


def format_table(url: str, checks: list[Check]) -> str:
    width = max(len(c.name) for c in checks)
    lines = [f"agentskit-web check {url}"]
    for check in checks:
        mark = "FAIL" if not check.ok else "warn" if check.warnings else "ok  "
        lines.append(f"  {mark}  {check.name.ljust(width)}  {check.detail}")
        lines.extend(f"          {warning}" for warning in check.warnings)
    failed = [c.name for c in checks if not c.ok]
    warned = sum(len(c.warnings) for c in checks)
    note = f" ({warned} warnings)" if warned else ""
    lines.append(f"all checks passed{note}" if not failed else f"failed: {', '.join(failed)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="agentskit-web check", description="Check the Ask widget on a page in Chromium."
    )
    parser.add_argument("url", metavar="URL")
    parser.add_argument("--question", default=DEFAULT_QUESTION, help="the question to ask")
    parser.add_argument("--json", action="store_true", help="print JSON (for CI)")
    parser.add_argument(
        "--chromium", default=None, help="Chromium executable (default: $AGENTSKIT_CHROMIUM)"
    )
    parser.add_argument(
        "--boot-timeout", type=float, default=BOOT_TIMEOUT_S, help="seconds to wait for ready"
    )
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="another origin check may fetch (default: only the page's own); repeatable",
    )
    parser.add_argument(
        "--strict-page",
        action="store_true",
        help="also fail on the host page's own findings (its off-origin requests, console "
        "errors and CSP violations), reported as warnings by default",
    )
    args = parser.parse_args(argv)
    if not args.question.strip():
        print("agentskit-web check: --question must not be empty", file=sys.stderr)
        return 2
    try:
        checks = run_checks(
            args.url,
            args.question,
            args.chromium,
            args.boot_timeout,
            tuple(args.allow_origin),
            strict_page=args.strict_page,
        )
    except CheckUsageError as error:
        print(f"agentskit-web check: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(
            json.dumps(
                {
                    "url": args.url,
                    "ok": all(c.ok for c in checks),
                    "checks": [asdict(c) for c in checks],
                },
                indent=1,
            )
        )
    else:
        print(format_table(args.url, checks))
    return 0 if all(c.ok for c in checks) else 1
