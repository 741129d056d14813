"""Section `static`, the browser part: static answers as a reader sees them, beside serve-ask.

The Starlette docs (`../shared/corpora/starlette`, read in place) are built with
MkDocs and the `agentskit-ask` plugin with no endpoint, as a docs owner would
(the corpus README's recipe: no analytics, no mkdocstrings, no network fonts),
so the build writes the split static index. One Starlette app on loopback serves
the built site with the product's header policy (content-hashed files
`immutable`, brotli/gzip negotiated) and, for the baseline, the reference Ask
backend over the same pages at `/api/ask`; `backend.html` is the home page with
`endpoint="/api/ask"` on its element.

Each run is a fresh browser context (empty HTTP cache): the widget boots (the
runtime warm before any question is timed), then the same questions are asked
in order, first on the static page, then on the backend page. Per question:

- question -> first answer text painted: from the Enter key (dispatched in the
  page) to the first frame after the answer's first text is in the DOM;
- the static index bytes the browser fetched for it (Resource Timing
  `transferSize`: compressed body plus headers; a cache hit is 0), and the
  decoded size (`decodedBodySize`).

Goals (issue 21): first answer painted <= 300 ms with the runtime warm; first
question <= 150 kB of index, later ones <= 50 kB each.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .harness import BOOT_TIMEOUT_MS, SHOW_INTENT, chromium_launch_options

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT.parent / "shared" / "corpora" / "starlette"
QUESTIONS = (
    "How do I add CORS middleware to my application?",
    "How can I serve static files from a directory?",
    "How do I run a background task after the response is sent?",
    "How do I read cookies from a request?",
)
PAINT_GOAL_MS = 300.0
FIRST_BYTES_GOAL = 150_000
LATER_BYTES_GOAL = 50_000
BACKEND_PAGE = "backend.html"
INDEX_MARKER = "/agentskit/index/"

# Asks `question` in the widget and resolves with the time to the first frame after the
# answer's first text is in the DOM, and the index files fetched meanwhile.
ASK_AND_TIME = """async ([question, marker, first]) => {
  const root = document.querySelector("agentskit-ask").shadowRoot;
  const before = root.querySelectorAll(".ak-assistant").length;
  // The first question counts the manifest its intent prefetched while the runtime booted.
  const seen = first ? 0 : performance.getEntriesByType("resource").length;
  const input = root.querySelector(".ak-input");
  input.value = question;
  input.dispatchEvent(new Event("input", { bubbles: true }));
  const started = performance.now();
  const enter = { key: "Enter", bubbles: true, composed: true };
  input.dispatchEvent(new KeyboardEvent("keydown", enter));
  await new Promise((resolve) => {
    const check = () => {
      const answer = root.querySelectorAll(".ak-assistant")[before];
      const body = answer && answer.querySelector(".ak-body");
      if (body && !body.querySelector(".ak-thinking") && body.textContent.trim()) {
        observer.disconnect();
        resolve();
      }
    };
    const observer = new MutationObserver(check);
    observer.observe(root, { subtree: true, childList: true, characterData: true });
    check();
  });
  await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve)));
  const painted = performance.now() - started;
  await new Promise((resolve) => {
    const done = () => {
      const answer = root.querySelectorAll(".ak-assistant")[before];
      return answer && answer.dataset.status !== "streaming";
    };
    if (done()) return resolve();
    const timer = setInterval(() => done() && (clearInterval(timer), resolve()), 10);
  });
  const fetched = performance.getEntriesByType("resource").slice(seen)
    .filter((entry) => entry.name.includes(marker))
    .map((entry) => [entry.name, entry.transferSize, entry.decodedBodySize]);
  const answer = root.querySelectorAll(".ak-assistant")[before];
  return { painted, fetched, status: answer.dataset.status,
           declined: Boolean(answer.querySelector(".ak-message-notfound")) };
}"""


class StaticBenchError(RuntimeError):
    """The corpus is missing or a page did not reach the state a figure needs."""


# ---------------------------------------------------------------- the site


def mkdocs_config(corpus: Path, site_dir: Path) -> str:
    """The eval's build of the corpus (bench/corpora.py) with the `agentskit-ask` plugin and
    no endpoint, and no network fonts (nothing may leave loopback)."""
    from .corpora import config_text, generated_config

    settings = generated_config(corpus, "mkdocs.yml")
    settings["plugins"] = [*settings.get("plugins", []), "agentskit-ask"]
    settings["theme"] = {**settings.get("theme", {}), "font": False}
    settings["site_dir"] = str(site_dir)
    return config_text(settings)


def build_corpus_site(corpus: Path, work: Path) -> Path:
    """The corpus built with MkDocs and the plugin (no endpoint) into `work/site`."""
    if not (corpus / "mkdocs.yml").is_file():
        raise StaticBenchError(f"no corpus at {corpus} (the shared corpora are not here)")
    site = work / "site"
    config = work / "mkdocs.yml"
    config.write_text(mkdocs_config(corpus, site), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise StaticBenchError(f"mkdocs build failed:\n{done.stdout}\n{done.stderr}")
    home = (site / "index.html").read_text(encoding="utf-8")
    backend = home.replace("<agentskit-ask ", '<agentskit-ask endpoint="/api/ask" ', 1)
    if backend == home:
        raise StaticBenchError("the built home page has no <agentskit-ask> element")
    (site / BACKEND_PAGE).write_text(backend, encoding="utf-8")
    return site


@contextmanager
def serve(site: Path, corpus: Path) -> Iterator[str]:
    """The built site and the reference backend over the same pages, on one origin."""
    from ..server.ask_app import ask_route
    from ..server.static import AppServer, create_static_app

    endpoint = backend_endpoint(site, corpus)
    app = create_static_app(site, routes=[ask_route(endpoint)])
    with AppServer(app) as server:
        yield server.url


def backend_endpoint(site: Path, corpus: Path) -> Any:
    """The Ask endpoint `serve-ask --index` runs over the index the build wrote: the same
    chunks as the page's static index, searched by the same engine, quoted the same way."""
    from ..answering.ranking import SearchIndex
    from ..build.static_index import site_index_of
    from ..server.ask_app import create_ask_endpoint
    from ..server.generators import ExtractiveGenerator
    from ..server.retrieval import IndexRetriever

    index = site_index_of(site, site / "agentskit", "/")
    retriever = IndexRetriever(SearchIndex.from_chunks(index.chunk_list()))
    return create_ask_endpoint(
        BENCH_SITE_CONFIG, retriever=retriever, generator=ExtractiveGenerator(pace_seconds=0)
    )


BENCH_SITE_CONFIG: dict[str, Any] = {
    "protocol": "agentskit.chat.backend-site",
    "version": 1,
    "siteId": "bench-static",
    "assistant": {"id": "guide", "name": "Bench", "suggestions": []},
    "corpus": {"id": "docs", "mode": "local"},
    "components": ["source-list"],
    "actions": [],
    "limits": {
        "requestTimeoutMs": 60000,
        "retrievalTimeoutMs": 5000,
        "generationTimeoutMs": 45000,
        "maxSources": 4,
    },
    "persistence": {"mode": "disabled"},
}
"""The backend's site: the page's number of sources (STATIC_ANSWER_MAX_SOURCES)."""


# ---------------------------------------------------------------- the runs


@dataclass
class Asked:
    painted_ms: float
    transfer: int
    decoded: int
    files: int
    declined: bool


@dataclass
class Runs:
    static: list[list[Asked]] = field(default_factory=list)
    backend: list[list[Asked]] = field(default_factory=list)


def _ask_all(page: Any, questions: tuple[str, ...]) -> list[Asked]:
    asked = []
    for number, question in enumerate(questions):
        result = page.evaluate(ASK_AND_TIME, [question, INDEX_MARKER, number == 0])
        if result["status"] != "complete":
            raise StaticBenchError(f"{question!r} ended {result['status']}")
        fetched = result["fetched"]
        asked.append(
            Asked(
                painted_ms=float(result["painted"]),
                transfer=sum(int(item[1]) for item in fetched),
                decoded=sum(int(item[2]) for item in fetched),
                files=sum(1 for item in fetched if int(item[1]) > 0),
                declined=bool(result["declined"]),
            )
        )
    return asked


def _booted(context: Any, url: str) -> Any:
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("agentskit-ask[data-state]", state="attached")
    page.evaluate(SHOW_INTENT)
    page.wait_for_selector(
        "agentskit-ask[data-state=ready], agentskit-ask[data-state=error]",
        state="attached",
        timeout=BOOT_TIMEOUT_MS,
    )
    if page.get_attribute("agentskit-ask", "data-state") != "ready":
        raise StaticBenchError(f"the widget did not boot on {url}")
    if page.get_attribute("agentskit-ask", "data-answers") == "static":
        # Runtime warm: the widget read the manifest its intent prefetched.
        page.wait_for_selector("agentskit-ask[data-index=ready]", state="attached")
    page.wait_for_timeout(500)  # the markdown package installs after ready
    return page


def run_static_browser(runs: int, corpus: Path = CORPUS) -> dict[str, Any]:
    """The browser figures (see the module doc)."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="agentskit-static-") as tmp:
        site = build_corpus_site(corpus, Path(tmp))
        pages = len(list(site.rglob("index.html")))
        index_files = sorted((site / "agentskit" / "index").glob("*.json"))
        result = Runs()
        with serve(site, corpus) as base, sync_playwright() as playwright:
            browser = playwright.chromium.launch(**chromium_launch_options())
            try:
                version = browser.version
                for _ in range(runs):
                    context = browser.new_context()
                    try:
                        page = _booted(context, base + "/")
                        result.static.append(_ask_all(page, QUESTIONS))
                        page = _booted(context, base + "/" + BACKEND_PAGE)
                        result.backend.append(_ask_all(page, QUESTIONS))
                    finally:
                        context.close()
            finally:
                browser.close()
        on_disk = sum(path.stat().st_size for path in index_files)
        shutil.rmtree(site, ignore_errors=True)
    return {
        "browser": version,
        "runs": runs,
        "pages": pages,
        "index_files": len(index_files),
        "index_bytes": on_disk,
        "questions": list(QUESTIONS),
        "static": [[a.__dict__ for a in run] for run in result.static],
        "backend": [[a.__dict__ for a in run] for run in result.backend],
    }


def _median(values: list[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def format_static_browser(result: dict[str, Any]) -> str:
    """The table `make bench` prints: each static figure beside serve-ask's, and its goal."""
    static, backend = result["static"], result["backend"]
    lines = [
        f"static answers in the browser: Starlette docs built with MkDocs ({result['pages']} "
        f"pages, {result['index_files']} index files, {result['index_bytes']:,} bytes raw), "
        f"median of {result['runs']} runs, headless Chromium {result['browser']}",
        "  question -> first answer text painted, runtime warm (ms)   static  serve-ask  goal",
    ]
    for number, question in enumerate(result["questions"]):
        mine = _median([run[number]["painted_ms"] for run in static])
        theirs = _median([run[number]["painted_ms"] for run in backend])
        verdict = "ok" if mine <= PAINT_GOAL_MS else "MISSED"
        declined = " (declined)" if static[0][number]["declined"] else ""
        lines.append(
            f"    q{number + 1} {question[:44]:<44}{declined:<11} {mine:>6.0f} {theirs:>9.0f}"
            f"  <= {PAINT_GOAL_MS:.0f} {verdict}"
        )
    lines.append("  index bytes fetched per question (transfer, compressed; decoded)  goal")
    for number, _question in enumerate(result["questions"]):
        transfer = _median([run[number]["transfer"] for run in static])
        decoded = _median([run[number]["decoded"] for run in static])
        files = _median([run[number]["files"] for run in static])
        goal = FIRST_BYTES_GOAL if number == 0 else LATER_BYTES_GOAL
        verdict = "ok" if transfer <= goal else "MISSED"
        lines.append(
            f"    q{number + 1} {transfer / 1000:>8.1f} kB  ({decoded / 1000:.1f} kB decoded, "
            f"{files:.0f} files)  <= {goal / 1000:.0f} kB {verdict}"
        )
    lines.append("    serve-ask fetches no index: its figure is the answer stream")
    return "\n".join(lines)
