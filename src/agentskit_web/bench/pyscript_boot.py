"""Section `boot`, PyScript sub-figure: the documented PyScript page next to the plain embed.

Both pages are served from one assets folder written with `--with-pyscript`
(a temporary folder, from the same runtime the site build made), as a site
owner would publish them: `ask.html` is the complete page of docs/pyscript.md,
extracted as it is; `index.html` is the one-line embed with intent shown as
soon as the page is parsed. Each is timed from navigation to `agentskit:ready`
(the loader marks it for the embed; `mount_chat` marks it for the PyScript
page, which boots at load: it has no intent to wait for), cold (a fresh
context) and warm (reloaded), the two pages alternating run by run so the
shared machine's load hits both alike. `--pyscript-runs 0` leaves it out.
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from .boot_runs import PageKind, Samples, median, one_run
from .harness import Session

DOC_PAGE_MARKER: Final = "<!-- pyscript-page:"
"""Marks, in docs/pyscript.md, the html block that is the complete PyScript page."""
PYSCRIPT_PAGE = PageKind(
    "pyscript",
    "/ask.html",
    "#ask[data-state=ready]",
    "#ask[data-state=error]",
    "agentskit:ready",
    None,
)
EMBED_PAGE = PageKind(
    "embed",
    "/",
    "agentskit-ask[data-state=ready]",
    "agentskit-ask[data-state=error]",
    "agentskit:ready",
    "agentskit:shell-painted",
    intent_at_load=True,
)
EMBED_HTML: Final = (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Embed</title>'
    '<script type="module" src="agentskit-ask.js"></script></head><body><main>'
    '<agentskit-ask endpoint="/api/ask"></agentskit-ask></main></body></html>\n'
)


def documented_page(doc: Path) -> str:
    """The complete page of docs/pyscript.md: the html block after the marker, as it is."""
    text = doc.read_text(encoding="utf-8")
    start = text.find(DOC_PAGE_MARKER)
    match = re.search(r"```html\n(.*?)\n```", text[start:], re.DOTALL) if start >= 0 else None
    if match is None:
        raise ValueError(f"{doc}: no html block after {DOC_PAGE_MARKER!r}")
    return match.group(1) + "\n"


def write_pyscript_folder(target: Path, root: Path) -> None:
    """`agentskit-web assets target --with-pyscript`, plus the two pages the figure loads."""
    from ..build.assets import write_assets
    from ..build.files import Paths, Report
    from ..build.site import runtime_input

    paths = Paths(root=root, dist=target, cache=root / ".cache")
    inputs = runtime_input(paths, lambda _message: None, Report())
    write_assets(target, paths.web, inputs, paths.cache, with_pyscript=True)
    (target / "ask.html").write_text(documented_page(root / "docs/pyscript.md"), encoding="utf-8")
    (target / "index.html").write_text(EMBED_HTML, encoding="utf-8")
    (target / "favicon.ico").write_bytes((root / "web/favicon.svg").read_bytes())


@contextmanager
def pyscript_session(session: Session) -> Iterator[Session]:
    """A session serving a fresh `--with-pyscript` folder in the same browser."""
    from ..build.files import find_root
    from ..server.static import StaticSite

    with tempfile.TemporaryDirectory(prefix="agentskit-pyscript-bench-") as folder:
        target = Path(folder)
        write_pyscript_folder(target, find_root())
        with StaticSite(target) as site:
            yield Session(target, site.url, session.browser)


def run_pyscript_boot(runs: int, session: Session) -> list[str]:
    """The sub-figure's lines: navigation -> ready, PyScript page vs the plain embed."""
    kinds = (PYSCRIPT_PAGE, EMBED_PAGE)
    cold = {kind.label: Samples() for kind in kinds}
    warm = {kind.label: Samples() for kind in kinds}
    with pyscript_session(session) as served:
        for run in range(runs):
            for kind in kinds if run % 2 == 0 else reversed(kinds):
                one_run(served, kind, cold[kind.label], warm[kind.label], None)
            print(f"  pyscript run {run + 1}/{runs} done", file=sys.stderr, flush=True)
    lines = [
        "",
        f"  {'intent -> ready, one assets folder':<34}{'cold':>12}{'warm':>12}"
        f"   (median of {runs}, --with-pyscript)",
    ]
    for label, text in (("embed", "plain embed (ms)"), ("pyscript", "PyScript page (ms)")):
        lines.append(
            f"  {text:<34}{median(cold[label].ready):>12.0f}{median(warm[label].ready):>12.0f}"
        )
    lines.append(
        f"  {'ratio PyScript/embed':<34}"
        f"{median(cold['pyscript'].ready) / median(cold['embed'].ready):>12.2f}"
        f"{median(warm['pyscript'].ready) / median(warm['embed'].ready):>12.2f}"
    )
    for state, samples in (("cold", cold), ("warm", warm)):
        lines.append(
            f"  {state} samples ms: embed {_ints(samples['embed'].ready)};"
            f" pyscript {_ints(samples['pyscript'].ready)}"
        )
    return lines


def _ints(values: list[float]) -> str:
    return "[" + ", ".join(f"{v:.0f}" for v in values) + "]"
