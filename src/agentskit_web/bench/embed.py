"""Section `embed`: what the one-line embed costs a docs site, each figure beside its baseline.

Headless Debian Chromium against a copy of dist/ served on 127.0.0.1 by the
product's own static server (content-hashed files `immutable`, pre-compressed
copies negotiated by `Accept-Encoding`). The copy adds one page,
`no-embed.html`: the docs home with the loader's script tag and the
`<agentskit-ask>` element taken out, the baseline of the first figure.

1. A page view with no interaction, the home page against `no-embed.html`, each
   in a fresh context: bytes transferred (CDP `Network.loadingFinished`
   `encodedDataLength`: compressed body plus headers, as DevTools counts them;
   goal <= 60 kB extra) and total blocking time (long tasks beyond 50 ms each,
   from navigation until 1 s after `load`; goal <= 10 ms extra).
2. Intent -> ready (`agentskit:intent` to `agentskit:ready`), cold (a fresh
   context) and warm (the same context reloaded), against bare Pyodide +
   pydantic from the same runtime files (dist/bench/raw.html, navigation start
   to `raw:ready`). The two kinds alternate so background load hits both alike.
3. A second docs page after one boot, in a persistent context (a user-data
   directory, so a disk cache): network requests and bytes for the runtime
   folder and the stylesheet (goal 0 requests), beside the same counts for the
   first page.

It also reports whether the loader's parallel prefetch made Pyodide download
any runtime file twice on a cold boot (network fetches per URL).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .harness import BOOT_TIMEOUT_MS, SHOW_INTENT, chromium_launch_options

BYTES_GOAL = 60_000
TBT_GOAL_MS = 10.0
SECOND_PAGE_GOAL_REQUESTS = 0
QUIET_AFTER_LOAD_MS = 1_000
BASELINE_PAGE = "no-embed.html"
SECOND_PAGE = "/docs/configuration.html"
LOADER_TAG = '<script type="module" src="./agentskit/agentskit-ask.js"></script>'

# Installed before any page script: every long task from the start of the navigation.
LONGTASKS = """
window.__akLongTasks = [];
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__akLongTasks.push([e.startTime, e.duration]);
  }).observe({ type: "longtask", buffered: true });
} catch (error) {}
"""
BLOCKING_MS = (
    """() => (window.__akLongTasks || []).reduce((sum, [, d]) => sum + Math.max(0, d - 50), 0)"""
)
INTENT_TO_READY = """() => {
  const at = (name) => performance.getEntriesByName(name)[0]?.startTime ?? null;
  const intent = at("agentskit:intent"), ready = at("agentskit:ready");
  return intent === null || ready === null ? null : ready - intent;
}"""
RAW_READY = """() => performance.getEntriesByName("raw:ready")[0]?.startTime ?? null"""


class EmbedBenchError(RuntimeError):
    """A page did not reach the state a figure needs."""


# ---------------------------------------------------------------- the site


def without_embed(html: str) -> str:
    """The docs home with the loader's script tag and the element removed."""
    if html.count(LOADER_TAG) != 1:
        raise EmbedBenchError("the docs home no longer has the loader tag this bench removes")
    html = html.replace(LOADER_TAG, "")
    start = html.find("<agentskit-ask ")
    end = html.find("</agentskit-ask>", start)
    if start < 0 or end < 0:
        raise EmbedBenchError("the docs home no longer has the <agentskit-ask> element")
    return html[:start] + html[end + len("</agentskit-ask>") :]


def _link_or_copy(source: str, destination: str) -> str:
    try:
        os.link(source, destination)
    except OSError:
        shutil.copy2(source, destination)
    return destination


@contextmanager
def bench_site(dist: Path) -> Iterator[Path]:
    """A throw-away copy of dist/ with `no-embed.html` added (dist/ itself is not touched)."""
    with tempfile.TemporaryDirectory(prefix="agentskit-embed-") as tmp:
        site = Path(tmp) / "site"
        shutil.copytree(dist, site, copy_function=_link_or_copy)
        home = (dist / "index.html").read_text(encoding="utf-8")
        (site / BASELINE_PAGE).write_text(without_embed(home), encoding="utf-8")
        yield site


# ---------------------------------------------------------------- network accounting


@dataclass
class Fetch:
    url: str
    from_cache: bool = False
    bytes: int = 0
    encoding: str = ""
    finished: bool = False


@dataclass
class NetworkLog:
    """Every request of one page, from the DevTools protocol (what reached the network)."""

    fetches: dict[str, Fetch] = field(default_factory=dict)

    def attach(self, cdp: Any) -> None:
        cdp.send("Network.enable")
        cdp.on("Network.requestWillBeSent", self._sent)
        cdp.on("Network.requestServedFromCache", self._cached)
        cdp.on("Network.responseReceived", self._response)
        cdp.on("Network.loadingFinished", self._finished)

    def _sent(self, event: dict[str, Any]) -> None:
        self.fetches[event["requestId"]] = Fetch(url=event["request"]["url"])

    def _cached(self, event: dict[str, Any]) -> None:
        if event["requestId"] in self.fetches:
            self.fetches[event["requestId"]].from_cache = True

    def _response(self, event: dict[str, Any]) -> None:
        fetch = self.fetches.get(event["requestId"])
        if fetch is None:
            return
        response = event["response"]
        if response.get("fromDiskCache") or response.get("fromServiceWorker"):
            fetch.from_cache = True
        headers = {k.lower(): v for k, v in response.get("headers", {}).items()}
        fetch.encoding = headers.get("content-encoding", "")

    def _finished(self, event: dict[str, Any]) -> None:
        fetch = self.fetches.get(event["requestId"])
        if fetch is not None:
            fetch.bytes = int(event.get("encodedDataLength", 0))
            fetch.finished = True

    def network(self, marker: str = "") -> list[Fetch]:
        """Requests that went to the server (not answered by a cache), whose URL has `marker`."""
        return [
            f
            for f in self.fetches.values()
            if not f.from_cache and marker in f.url and not f.url.startswith("data:")
        ]


def _new_page(context: Any) -> tuple[Any, NetworkLog]:
    page = context.new_page()
    log = NetworkLog()
    log.attach(context.new_cdp_session(page))
    return page, log


def _wait_quiet(page: Any) -> None:
    page.wait_for_load_state("load")
    page.wait_for_timeout(QUIET_AFTER_LOAD_MS)


def _intent_and_ready(page: Any) -> None:
    page.wait_for_selector("agentskit-ask[data-state=idle]", state="attached")
    page.evaluate(SHOW_INTENT)
    page.wait_for_selector(
        "agentskit-ask[data-state=ready], agentskit-ask[data-state=error]",
        state="attached",
        timeout=BOOT_TIMEOUT_MS,
    )
    if page.get_attribute("agentskit-ask", "data-state") != "ready":
        message = page.text_content("agentskit-ask .ak-error-message")
        raise EmbedBenchError(f"the widget failed to boot: {message}")


def _raw_ready(page: Any) -> float:
    page.wait_for_selector(
        "#status[data-state=ready], #status[data-state=error]",
        state="attached",
        timeout=BOOT_TIMEOUT_MS,
    )
    value = page.evaluate(RAW_READY)
    if value is None:
        raise EmbedBenchError(f"the bare Pyodide page failed: {page.text_content('#status')}")
    return float(value)


# ---------------------------------------------------------------- 1. a page view


def page_view(browser: Any, url: str) -> tuple[int, float, int]:
    """(bytes transferred, total blocking time ms, requests) for one cold view, no interaction."""
    context = browser.new_context()
    context.add_init_script(LONGTASKS)
    try:
        page, log = _new_page(context)
        page.goto(url)
        _wait_quiet(page)
        blocking = float(page.evaluate(BLOCKING_MS))
        fetched = log.network()
        if page.locator("agentskit-ask").count() and (
            page.get_attribute("agentskit-ask", "data-state") != "idle"
        ):
            raise EmbedBenchError("the widget left idle without interaction")
        return sum(f.bytes for f in fetched), blocking, len(fetched)
    finally:
        context.close()


# ---------------------------------------------------------------- 2. intent -> ready


def widget_boot(browser: Any, url: str) -> tuple[float, float, list[Fetch], list[Fetch]]:
    """(cold and warm intent->ready, the cold boot's network fetches, and all its fetches)."""
    context = browser.new_context()
    try:
        page, log = _new_page(context)
        page.goto(url)
        _intent_and_ready(page)
        cold = page.evaluate(INTENT_TO_READY)
        fetched = log.network()
        every = list(log.fetches.values())
        page.reload()
        _intent_and_ready(page)
        warm = page.evaluate(INTENT_TO_READY)
        if cold is None or warm is None:
            raise EmbedBenchError("the widget has no agentskit:intent/ready marks")
        return float(cold), float(warm), fetched, every
    finally:
        context.close()


def raw_boot(browser: Any, url: str) -> tuple[float, float]:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(url)
        cold = _raw_ready(page)
        page.reload()
        return cold, _raw_ready(page)
    finally:
        context.close()


# ---------------------------------------------------------------- 3. the second page


def second_page(playwright: Any, base: str, runtime_marker: str) -> dict[str, int]:
    """Runtime requests and bytes on the first and the second page of a disk-cached profile."""
    with tempfile.TemporaryDirectory(prefix="agentskit-profile-") as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, **chromium_launch_options()
        )
        try:
            first, first_log = _new_page(context)
            first.goto(base + "/")
            _intent_and_ready(first)
            second, second_log = _new_page(context)
            second.goto(base + SECOND_PAGE)
            _intent_and_ready(second)
            one = first_log.network(runtime_marker)
            two = second_log.network(runtime_marker)
            seen = [f for f in second_log.fetches.values() if runtime_marker in f.url]
            return {
                "first_requests": len(one),
                "first_bytes": sum(f.bytes for f in one),
                "second_requests": len(two),
                "second_bytes": sum(f.bytes for f in two),
                "second_from_cache": sum(1 for f in seen if f.from_cache),
            }
        finally:
            context.close()


# ---------------------------------------------------------------- the section


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def duplicates(fetches: list[Fetch], marker: str) -> dict[str, int]:
    """Runtime URLs fetched from the network more than once in one boot."""
    counts: dict[str, int] = {}
    for fetch in fetches:
        if marker in fetch.url:
            counts[fetch.url] = counts.get(fetch.url, 0) + 1
    return {url: n for url, n in counts.items() if n > 1}


def run_embed(args: argparse.Namespace, site: Path, base: str, playwright: Any) -> dict[str, Any]:
    browser = playwright.chromium.launch(**chromium_launch_options())
    manifest = json.loads((site / "agentskit" / "assets.json").read_text(encoding="utf-8"))
    runtime_marker = "/agentskit/" + manifest["runtime"]
    result: dict[str, Any] = {"runs": args.runs}
    try:
        views: dict[str, dict[str, list[float]]] = {
            kind: {"bytes": [], "blocking": [], "requests": []} for kind in ("embed", "bare")
        }
        boots: dict[str, list[float]] = {k: [] for k in ("widget_cold", "widget_warm")}
        boots.update({"raw_cold": [], "raw_warm": []})
        doubled: dict[str, int] = {}
        runtime_fetches: list[int] = []
        runtime_requests: list[int] = []
        runtime_bytes: list[int] = []
        encodings: set[str] = set()
        for run in range(args.runs):
            pages = [("embed", "/"), ("bare", f"/{BASELINE_PAGE}")]
            for kind, path in pages if run % 2 == 0 else pages[::-1]:
                size, blocking, requests = page_view(browser, base + path)
                views[kind]["bytes"].append(size)
                views[kind]["blocking"].append(blocking)
                views[kind]["requests"].append(requests)
            order = ("widget", "raw") if run % 2 == 0 else ("raw", "widget")
            for kind in order:
                if kind == "widget":
                    cold, warm, fetched, every = widget_boot(browser, base + "/")
                    doubled.update(duplicates(fetched, runtime_marker))
                    runtime_requests.append(sum(1 for f in every if runtime_marker in f.url))
                    ours = [f for f in fetched if runtime_marker in f.url]
                    runtime_fetches.append(len(ours))
                    runtime_bytes.append(sum(f.bytes for f in ours))
                    encodings |= {f.encoding or "identity" for f in ours}
                else:
                    cold, warm = raw_boot(browser, base + "/bench/raw.html")
                boots[f"{kind}_cold"].append(cold)
                boots[f"{kind}_warm"].append(warm)
            print(f"  run {run + 1}/{args.runs} done", file=sys.stderr, flush=True)
        seconds = [second_page(playwright, base, runtime_marker) for _ in range(args.runs)]
        result["views"] = {
            kind: {key: _median(values) for key, values in numbers.items()}
            for kind, numbers in views.items()
        }
        result["view_samples"] = views
        result["boot"] = {key: _median(values) for key, values in boots.items()}
        result["boot_samples"] = boots
        result["second_page"] = {
            key: _median([float(s[key]) for s in seconds]) for key in seconds[0]
        }
        result["second_page_samples"] = seconds
        result["prefetch"] = {
            "distinct_runtime_files": len(manifest["files"]) + 1,
            "runtime_network_fetches": _median([float(n) for n in runtime_fetches]),
            "runtime_requests": _median([float(n) for n in runtime_requests]),
            "runtime_bytes": _median([float(n) for n in runtime_bytes]),
            "compressed_sizes_on_disk": _on_disk(site, manifest, encodings),
            "fetched_twice": doubled,
            "encodings": sorted(encodings),
        }
        result["browser"] = browser.version
    finally:
        browser.close()
    return result


def _on_disk(site: Path, manifest: dict[str, Any], encodings: set[str]) -> int:
    """Sum of the runtime files' sizes as served (the .br copy when brotli was negotiated)."""
    folder = site / "agentskit" / manifest["runtime"]
    suffix = ".br" if "br" in encodings else ".gz" if "gzip" in encodings else ""
    total = 0
    for name in ["pyodide.mjs", *(entry["name"] for entry in manifest["files"])]:
        packed = folder / (name + suffix)
        total += (packed if suffix and packed.is_file() else folder / name).stat().st_size
    return total


def _kb(value: float) -> str:
    return f"{value / 1000:,.1f} kB"


def format_embed(result: dict[str, Any]) -> str:
    views, boot, second = result["views"], result["boot"], result["second_page"]
    extra_bytes = views["embed"]["bytes"] - views["bare"]["bytes"]
    extra_tbt = views["embed"]["blocking"] - views["bare"]["blocking"]

    def verdict(ok: bool) -> str:
        return "ok" if ok else "MISSED"

    prefetch = result["prefetch"]
    lines = [
        f"embed benchmark: median of {result['runs']} runs, headless Chromium {result['browser']}",
        "  1. a page view, no interaction     with embed    without   extra   goal",
        f"     bytes transferred             {_kb(views['embed']['bytes']):>12}"
        f"{_kb(views['bare']['bytes']):>11}{_kb(extra_bytes):>10}"
        f"   <= {_kb(BYTES_GOAL)} ({verdict(extra_bytes <= BYTES_GOAL)})",
        f"     requests                      {views['embed']['requests']:>12.0f}"
        f"{views['bare']['requests']:>11.0f}"
        f"{views['embed']['requests'] - views['bare']['requests']:>10.0f}",
        f"     total blocking time (ms)      {views['embed']['blocking']:>12.1f}"
        f"{views['bare']['blocking']:>11.1f}{extra_tbt:>10.1f}"
        f"   <= {TBT_GOAL_MS:.0f} ({verdict(extra_tbt <= TBT_GOAL_MS)})",
        "  2. boot (ms)                          cold       warm",
        f"     widget, intent -> ready       {boot['widget_cold']:>10.0f}"
        f"{boot['widget_warm']:>11.0f}",
        f"     bare Pyodide + pydantic       {boot['raw_cold']:>10.0f}{boot['raw_warm']:>11.0f}",
        f"     ratio widget/bare             {boot['widget_cold'] / boot['raw_cold']:>10.2f}"
        f"{boot['widget_warm'] / boot['raw_warm']:>11.2f}",
        "  3. runtime files, disk-cached profile   requests      bytes",
        f"     first page (boot)             {second['first_requests']:>13.0f}"
        f"{_kb(second['first_bytes']):>12}",
        f"     second page (boot)            {second['second_requests']:>13.0f}"
        f"{_kb(second['second_bytes']):>12}"
        f"   goal {SECOND_PAGE_GOAL_REQUESTS} requests"
        f" ({verdict(second['second_requests'] <= SECOND_PAGE_GOAL_REQUESTS)});"
        f" {second['second_from_cache']:.0f} answered by the cache",
        "  prefetch vs Pyodide's own fetches (cold widget boot):",
        f"     runtime files {prefetch['distinct_runtime_files']}, requests"
        f" {prefetch['runtime_requests']:.0f}, of which to the network"
        f" {prefetch['runtime_network_fetches']:.0f}, bytes {_kb(prefetch['runtime_bytes'])}"
        f" (files as served, {'/'.join(prefetch['encodings'])}:"
        f" {_kb(prefetch['compressed_sizes_on_disk'])}); fetched twice:"
        f" {prefetch['fetched_twice'] or 'none'}",
    ]
    samples = result["boot_samples"]
    for key in ("widget_cold", "raw_cold", "widget_warm", "raw_warm"):
        lines.append(f"  samples {key} ms: [{', '.join(f'{v:.0f}' for v in samples[key])}]")
    for kind in ("embed", "bare"):
        numbers = result["view_samples"][kind]
        lines.append(
            f"  samples view {kind}: bytes {[int(v) for v in numbers['bytes']]},"
            f" tbt ms {[round(v, 1) for v in numbers['blocking']]}"
        )
    return "\n".join(lines)


def embed_command(args: argparse.Namespace) -> int:
    from playwright.sync_api import sync_playwright

    from ..build.files import find_root
    from ..build.site import build as build_site
    from ..server.static import StaticSite

    root = find_root()
    dist = (args.dist or root / "dist").resolve()
    if not args.no_build:
        build_site(root, dist)
    started = time.monotonic()
    with bench_site(dist) as site, StaticSite(site) as server, sync_playwright() as playwright:
        result = run_embed(args, site, server.url, playwright)
    print(format_embed(result))
    print(f"  ({time.monotonic() - started:.0f} s)", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0
