"""The opt-in boot snapshot (`snapshot="keep"`, docs/design/snapshot-boot.md), in Chromium.

The demo (dist/ and the reference backend on one origin) runs under the strict policy
(`script-src 'self' 'wasm-unsafe-eval'`, nothing inline, no eval), with the widget's
element given `snapshot="keep"`. One browser context is shared by the tests of this
module, as one reader's browser would be: its first visit boots normally and a worker
keeps a snapshot in Cache Storage once the page is idle; every test starts from "a
snapshot is kept for this runtime" (`_ensure_kept`), so each holds on its own.

What must hold: a second visit restores it (data-snapshot, the mark, no wheel fetched
for the boot) and pydantic-core works afterwards (the conformance vectors in the page
give CPython's counts, the widget answers); a snapshot whose bytes are corrupt falls
back to a normal boot with exactly one console line (info, not an error) and is
replaced; one whose site-packages holds a file the runtime's wheels do not install, or a
changed byte of one they do, is refused the same way with one warning, and the page still
answers; a changed wheel hash finds no snapshot, boots normally without a word, and
the snapshot made then replaces the old one; a snapshot that does not fit the quota is
not kept (one info line). Every page: no console error, no policy violation, no
request off the origin.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, Route
from playwright.sync_api import Error as PlaywrightError

from agentskit_web.server.demo_server import create_demo_app
from agentskit_web.server.static import AppServer
from e2e_support import BOOT_TIMEOUT_MS, Watch, show_intent
from test_embed import RECORD_VIOLATIONS, STRICT_POLICY, demo_config, with_policy
from test_page_conformance import cpython_counts

SNAPSHOT_CACHE = "agentskit-ask:snapshot"
"""The loader's Cache Storage name for kept snapshots (web/agentskit-ask.js)."""
SAID = re.compile(r"^agentskit-ask: .*snapshot")
"""What the loader says in the console about a snapshot (console.info, once)."""
CACHED_URLS = f"""async () => {{
  const cache = await caches.open({SNAPSHOT_CACHE!r});
  return (await cache.keys()).map((request) => request.url).sort();
}}"""
SNAPSHOT_STATE = "() => document.querySelector('agentskit-ask').dataset.snapshot ?? null"
MARKS = "() => performance.getEntriesByType('mark').map((mark) => mark.name)"


@dataclass
class Visit:
    page: Page
    said: list[str] = field(default_factory=list)
    """Console lines of any type from the loader about the snapshot."""


@dataclass
class Reader:
    """One reader's browser (a context) on the demo under the strict policy."""

    context: BrowserContext
    watch: Watch
    url: str

    def visit(self, query: str = "", init: str | None = None) -> Visit:
        page = self.context.new_page()
        if init is not None:
            page.add_init_script(init)
        visit = Visit(page)
        page.on("console", self.watch.on_console)
        page.on("pageerror", self.watch.on_page_error)

        def said(message: ConsoleMessage) -> None:
            if SAID.search(message.text):
                visit.said.append(f"{message.type}: {message.text}")

        page.on("console", said)
        page.goto(self.url + "/" + query)
        show_intent(page)
        page.wait_for_selector(
            "agentskit-ask[data-state=ready], agentskit-ask[data-state=error]",
            state="attached",
            timeout=BOOT_TIMEOUT_MS,
        )
        assert page.get_attribute("agentskit-ask", "data-state") == "ready"
        return visit

    def close(self, visit: Visit) -> None:
        violations = visit.page.evaluate("window.__cspViolations")
        visit.page.close()
        assert violations == [], violations
        assert not self.watch.errors, "\n".join(self.watch.errors)


def _wait_made(page: Page) -> str:
    """Wait until the worker has kept the snapshot (or could not): the final data-snapshot."""
    page.wait_for_selector(
        "agentskit-ask[data-snapshot=kept], agentskit-ask[data-snapshot=unavailable]",
        state="attached",
        timeout=BOOT_TIMEOUT_MS,
    )
    return str(page.evaluate(SNAPSHOT_STATE))


def _ensure_kept(reader: Reader) -> list[str]:
    """A snapshot for the served runtime is kept; the URLs of its cache entries."""
    visit = reader.visit()
    if visit.page.evaluate(SNAPSHOT_STATE) != "restored":
        assert _wait_made(visit.page) == "kept", visit.said
    urls: list[str] = visit.page.evaluate(CACHED_URLS)
    reader.close(visit)
    assert len(urls) == 3, urls  # memory, files, meta of one key
    return urls


def _with_snapshot_attribute(route: Route) -> None:
    try:
        response = route.fetch()
    except PlaywrightError:  # the page closed meanwhile
        return
    body = response.text().replace("<agentskit-ask ", '<agentskit-ask snapshot="keep" ', 1)
    route.fulfill(response=response, body=body)


@pytest.fixture(scope="module")
def reader(browser: Browser, dist: Path) -> Iterator[Reader]:
    app = with_policy(create_demo_app(demo_config(dist)), STRICT_POLICY)
    with AppServer(app) as server:
        watch = Watch(origin=server.url)
        context = browser.new_context()
        context.on("request", watch.on_request)
        context.on("serviceworker", watch.on_service_worker)
        context.route(lambda url: not watch.same_origin(url), lambda route: route.abort())
        context.route(server.url + "/", _with_snapshot_attribute)
        context.route(server.url + "/?*", _with_snapshot_attribute)
        context.add_init_script(RECORD_VIOLATIONS)
        try:
            yield Reader(context, watch, server.url)
        finally:
            context.close()
        assert not watch.off_origin, f"requests to other origins: {watch.off_origin}"
        assert not watch.service_workers, f"service workers started: {watch.service_workers}"


def _wheels(watch: Watch, since: int) -> list[str]:
    """Wheels requested since `since`."""
    return [url for url in watch.requests[since:] if url.endswith(".whl")]


def test_a_second_visit_restores_the_snapshot_and_pydantic_core_works(
    reader: Reader, dist: Path
) -> None:
    _ensure_kept(reader)
    since = len(reader.watch.requests)
    visit = reader.visit("?conformance=1")
    page = visit.page
    assert page.evaluate(SNAPSHOT_STATE) == "restored"
    assert "agentskit:snapshot-restored" in page.evaluate(MARKS)
    assert _wheels(reader.watch, since) == [], "the restore installed wheels again"
    page.wait_for_selector(
        "html[data-conformance=done], html[data-conformance=error]",
        state="attached",
        timeout=BOOT_TIMEOUT_MS,
    )
    published: dict[str, Any] = page.evaluate("window.agentskitConformance")
    assert page.get_attribute("html", "data-conformance") == "done", published.get("error")
    assert published["files"] == cpython_counts(dist / "fixtures")
    page.locator("agentskit-ask .ak-input").fill("How do I embed the widget?")
    page.locator("agentskit-ask .ak-send").click()
    page.locator("agentskit-ask .ak-assistant[data-status=complete]").wait_for(timeout=60_000)
    assert page.locator("agentskit-ask .ak-source-link").count() >= 1
    assert visit.said == [], visit.said
    reader.close(visit)


CORRUPT = f"""async () => {{
  const cache = await caches.open({SNAPSHOT_CACHE!r});
  const [memory] = (await cache.keys()).filter((request) => request.url.endsWith("/memory"));
  const size = (await (await cache.match(memory)).arrayBuffer()).byteLength;
  const junk = new Uint8Array(size);
  for (let i = 0; i < size; i += 4096) junk[i] = (i * 2654435761) >>> 24;
  await cache.put(memory, new Response(junk));
  return size;
}}"""
"""Overwrite the kept memory part with junk of the same length (passes the length check)."""


def test_a_corrupt_snapshot_falls_back_with_one_console_line_and_is_replaced(
    reader: Reader,
) -> None:
    _ensure_kept(reader)
    visit = reader.visit()
    assert visit.page.evaluate(SNAPSHOT_STATE) == "restored"
    assert visit.page.evaluate(CORRUPT) > 0
    reader.close(visit)

    visit = reader.visit()
    assert "agentskit:snapshot-failed" in visit.page.evaluate(MARKS)
    assert _wait_made(visit.page) == "kept"
    assert len(visit.said) == 1, visit.said
    assert visit.said[0].startswith("info: agentskit-ask: the kept boot snapshot could not be")
    reader.close(visit)

    visit = reader.visit()
    assert visit.page.evaluate(SNAPSHOT_STATE) == "restored", "the snapshot was not replaced"
    reader.close(visit)


def _changed_wheel_hash(route: Route) -> None:
    """The loader as a build with another pydantic-core wheel would name it."""
    try:
        response = route.fetch()
        text = response.text()
    except PlaywrightError:  # the page closed meanwhile
        return
    changed = re.sub(
        r'("name": "pydantic_core-[^"]+\.whl", "sha256": ")([0-9a-f]{64})',
        lambda match: match.group(1) + match.group(2)[::-1],
        text,
    )
    assert changed != text, "the loader's ASSETS names no pydantic-core sha256"
    route.fulfill(response=response, body=changed)


def test_a_changed_wheel_hash_boots_normally_and_replaces_the_snapshot(reader: Reader) -> None:
    before = _ensure_kept(reader)
    loader = reader.url + "/agentskit/agentskit-ask.js"
    reader.context.route(loader, _changed_wheel_hash)
    try:
        since = len(reader.watch.requests)
        visit = reader.visit()
        marks = visit.page.evaluate(MARKS)
        assert (
            "agentskit:snapshot-restored" not in marks and "agentskit:snapshot-failed" not in marks
        )
        assert _wheels(reader.watch, since), "no normal boot: no wheel was installed"
        assert _wait_made(visit.page) == "kept"
        after: list[str] = visit.page.evaluate(CACHED_URLS)
        assert visit.said == [], "a snapshot of another runtime is not a failure to report"
        reader.close(visit)
    finally:
        reader.context.unroute(loader, _changed_wheel_hash)
    assert len(after) == 3 and not set(after) & set(before), (before, after)


def test_a_snapshot_over_the_quota_is_not_kept_and_said_once(reader: Reader) -> None:
    _ensure_kept(reader)
    loader = reader.url + "/agentskit/agentskit-ask.js"
    holder = reader.visit()  # restored; its DevTools session sets the origin's quota
    session = reader.context.new_cdp_session(holder.page)
    session.send("Storage.overrideQuotaForOrigin", {"origin": reader.url, "quotaSize": 1_000_000})
    reader.context.route(loader, _changed_wheel_hash)  # a new key: the loader makes one
    try:
        visit = reader.visit()
        assert "agentskit:snapshot-restored" not in visit.page.evaluate(MARKS)
        assert _wait_made(visit.page) == "unavailable"
        assert len(visit.said) == 1, visit.said
        assert "QuotaExceededError" in visit.said[0] and visit.said[0].startswith("info: ")
        assert visit.page.evaluate(CACHED_URLS) == [], "a partial snapshot was left behind"
        reader.close(visit)
    finally:
        reader.context.unroute(loader, _changed_wheel_hash)
        session.send("Storage.overrideQuotaForOrigin", {"origin": reader.url})
        session.detach()
        reader.close(holder)


IN_THE_GAP = """
window.__akGap = null;
const mark = performance.mark.bind(performance);
performance.mark = (name, ...rest) => {
  const made = mark(name, ...rest);
  if (name === "agentskit:widget-mount") {
    // The runtime is ready and the loader is about to call Python's mount_element, which
    // starts a task later: ask in that gap, as a reader pressing Enter then would.
    setTimeout(() => {
      const host = document.querySelector("agentskit-ask");
      const input = host.shadowRoot.querySelector(".ak-input");
      input.value = "How do I embed the widget?";
      window.__akGap = host.dataset.mounted === undefined;
      const enter = { key: "Enter", bubbles: true, composed: true };
      input.dispatchEvent(new KeyboardEvent("keydown", enter));
    }, 0);
  }
  return made;
};
"""


def test_a_question_sent_between_ready_and_the_mount_is_answered(reader: Reader) -> None:
    """A fast (restored) boot makes it likelier that Enter lands after the runtime is ready
    but before Python's mount has started: the question must still be sent (it was left
    unsent in the box, found by the bench's question at intent + 2 s)."""
    _ensure_kept(reader)
    blank = reader.context.new_page()  # a new conversation: no earlier test's answer shown
    blank.goto(reader.url + "/agentskit/assets.json")
    blank.evaluate("localStorage.clear()")
    blank.close()
    visit = reader.visit(init=IN_THE_GAP)
    page = visit.page
    page.wait_for_function("window.__akGap !== null")
    assert page.evaluate("window.__akGap") is True, "the question did not land in the gap"
    page.locator("agentskit-ask .ak-assistant[data-status=complete]").wait_for(timeout=60_000)
    assert "How do I embed the widget?" in page.locator("agentskit-ask .ak-user").first.inner_text()
    reader.close(visit)


def test_a_snapshot_at_the_size_bound_is_kept_and_one_byte_past_it_is_not(
    reader: Reader, dist: Path
) -> None:
    """SNAPSHOT_MAX_BYTES, through the module the loader ships (imported as the page would)."""
    module = (
        "/agentskit/" + json.loads((dist / "agentskit" / "assets.json").read_text())["snapshot"]
    )
    page = reader.context.new_page()
    try:
        page.goto(reader.url + "/")
        bound, at_bound, past_bound = page.evaluate(
            """async (url) => {
                const m = await import(url);
                return [m.SNAPSHOT_MAX_BYTES, m.snapshotSizeRefusal(m.SNAPSHOT_MAX_BYTES),
                        m.snapshotSizeRefusal(m.SNAPSHOT_MAX_BYTES + 1)];
            }""",
            module,
        )
    finally:
        page.close()
    assert bound == 128 * 1024 * 1024
    assert at_bound is None
    assert past_bound == "it would take 128 MiB, more than 128"


PLANT = f"""async (edit) => {{
  const cache = await caches.open({SNAPSHOT_CACHE!r});
  const requests = await cache.keys();
  const part = (name) => requests.find((request) => request.url.endsWith("/" + name));
  const meta = await (await cache.match(part("meta"))).json();
  const files = new Uint8Array(await (await cache.match(part("files"))).arrayBuffer());
  const site = meta.files[0][0].slice(0, meta.files[0][0].indexOf("/site-packages/") + 14);
  let bytes = files;
  if (edit === "plant") {{
    // A module the wheels do not install, where an import would find it.
    const code = new TextEncoder().encode("import js; js.planted = True\\n");
    meta.files.push([site + "/agentskit_web/planted.py", code.byteLength]);
    bytes = new Uint8Array(files.byteLength + code.byteLength);
    bytes.set(files);
    bytes.set(code, files.byteLength);
  }} else {{
    // One byte of a listed module changed, at the same length.
    const target = meta.files.findIndex(([path]) => path.endsWith("/agentskit_web/__init__.pyc"));
    if (target < 0) throw new Error("no agentskit_web/__init__.pyc in the snapshot");
    let offset = 0;
    for (let i = 0; i < target; i += 1) offset += meta.files[i][1];
    bytes = files.slice();
    bytes[offset] ^= 0x20;
  }}
  meta.filesBytes = bytes.byteLength;
  await cache.put(part("files"), new Response(bytes));
  await cache.put(part("meta"), new Response(JSON.stringify(meta)));
  return meta.files.length;
}}"""
"""Rewrite the kept snapshot as a same-origin script could: plant a module in its
site-packages, or alter one byte of a file the wheels install (the format and size checks
still pass: the index and lengths are kept consistent)."""


@pytest.mark.parametrize("edit", ["plant", "alter"])
def test_a_snapshot_with_files_the_wheels_do_not_install_is_refused(
    reader: Reader, edit: str
) -> None:
    _ensure_kept(reader)
    visit = reader.visit()
    assert visit.page.evaluate(SNAPSHOT_STATE) == "restored"
    assert visit.page.evaluate(PLANT, edit) > 0
    reader.close(visit)

    since = len(reader.watch.requests)
    visit = reader.visit()
    page = visit.page
    marks = page.evaluate(MARKS)
    assert "agentskit:snapshot-failed" in marks and "agentskit:snapshot-restored" not in marks
    assert _wheels(reader.watch, since), "no normal boot: no wheel was installed"
    assert page.evaluate("window.planted ?? null") is None
    assert len(visit.said) == 1, visit.said
    assert visit.said[0].startswith("warning: agentskit-ask: the kept boot snapshot was refused")
    page.locator("agentskit-ask .ak-input").fill("How do I embed the widget?")
    page.locator("agentskit-ask .ak-send").click()
    page.locator("agentskit-ask .ak-assistant[data-status=complete]").last.wait_for(timeout=60_000)
    assert _wait_made(page) == "kept"
    reader.close(visit)

    visit = reader.visit()
    assert visit.page.evaluate(SNAPSHOT_STATE) == "restored", "the snapshot was not replaced"
    reader.close(visit)


def test_the_files_check_accepts_what_the_wheels_install_and_nothing_more(
    reader: Reader, dist: Path
) -> None:
    """snapshotFilesRefusal, the pure check, through the module the loader ships: a record
    of two files, the snapshot's files at it (both, exact bytes; Pyodide's INSTALLER in a
    recorded .dist-info) and one past it (a third file, one byte more, one byte changed,
    a path outside site-packages, INSTALLER outside a recorded .dist-info)."""
    assets = json.loads((dist / "agentskit" / "assets.json").read_text())
    page = reader.context.new_page()
    try:
        page.goto(reader.url + "/")
        verdicts = page.evaluate(
            """async (url) => {
                const m = await import(url);
                const text = (s) => new TextEncoder().encode(s);
                const sha = async (s) => [
                  ...new Uint8Array(await crypto.subtle.digest("SHA-256", text(s)))
                ].map((b) => b.toString(16).padStart(2, "0")).join("");
                const site = "/lib/python3.14/site-packages";
                const files = {
                  "p/__init__.py": await sha("x = 1\\n"), "p-1.dist-info/RECORD": await sha("r"),
                };
                const installerMetadata = ["INSTALLER", "PYODIDE_SOURCE"];
                const record = { format: 1, installerMetadata, files };
                const check = (entries) => {
                  const bytes = text(entries.map(([, body]) => body).join(""));
                  const index = entries.map(([path, body]) => [path, text(body).byteLength]);
                  return m.snapshotFilesRefusal(record, site, index, bytes);
                };
                const good = [
                  [site + "/p/__init__.py", "x = 1\\n"], [site + "/p-1.dist-info/RECORD", "r"],
                ];
                return {
                  exact: await check(good),
                  installer: await check([...good, [site + "/p-1.dist-info/INSTALLER", "pyodide"]]),
                  third: await check([...good, [site + "/p/evil.py", ""]]),
                  longer: await check([[site + "/p/__init__.py", "x = 1\\n "]]),
                  changed: await check([[site + "/p/__init__.py", "x = 2\\n"]]),
                  outside: await check([["/lib/python3.14/p/__init__.py", "x = 1\\n"]]),
                  dotdot: await check([[site + "/p/../p/__init__.py", "x = 1\\n"]]),
                  stray: await check([[site + "/p/INSTALLER", "pyodide"]]),
                  unknown: await check([[site + "/p-1.dist-info/entry_points.txt", "[x]"]]),
                };
            }""",
            "/agentskit/" + assets["snapshot"],
        )
    finally:
        page.close()
    assert verdicts["exact"] is None and verdicts["installer"] is None
    assert verdicts["third"] == "p/evil.py is not installed by the runtime's wheels"
    assert (
        verdicts["longer"]
        == verdicts["changed"]
        == "p/__init__.py differs from the runtime's wheels"
    )
    assert verdicts["outside"] == "/lib/python3.14/p/__init__.py is outside site-packages"
    for case in ("dotdot", "stray", "unknown"):
        assert verdicts[case] is not None and "is not installed" in verdicts[case], verdicts
