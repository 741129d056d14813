"""The build step both plugins share: index the pages the generator just wrote.

MkDocs (`on_post_build`) and Sphinx (`build-finished`) call `write_build_index`
once every page is on disk, so the index holds exactly the HTML a reader gets:
the generator's URLs (directory URLs or `.html`, `index.html` as its folder),
its anchors, the code it included at build time, and titles as text.

The index is the static answers' source (split for the page by
static_answers.py) and, when the site has a backend, the backend's: `serve-ask
--site-dir` and `preview` read it instead of indexing the HTML again. Only then
is the whole file written into the widget's assets folder, under a
content-hashed name (`agentskit-index.<hash>.json`, cached like the runtime
beside it, an older one there removed): a static site's page reads only the
split parts, so publishing the backend's 155-700 kB file there would ship bytes
nothing reads (`backend_index` asks for it anyway). One line in the build log
says what was indexed and, when written, the file and its size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..answering.site_index import SiteIndex
from ..indexing.site import (
    index_site,
    normalize_base_path,
    remove_site_indexes,
    write_site_index,
)


@dataclass(frozen=True, slots=True)
class BuildIndex:
    """What the step indexed and wrote (for the log line and the tests)."""

    index: SiteIndex
    path: Path | None
    """The backend index file, or None when none was asked for."""
    size: int = 0

    def log_line(self) -> str:
        indexed = (
            f"agentskit-ask: indexed {self.index.pages} pages ({len(self.index.chunks)} sections)"
        )
        if self.path is None:
            return f"{indexed} (no backend index file: a static site reads only its split index)"
        return f"{indexed} into {self.path} ({_size(self.size)})"


def base_path_of(site_url: str | None) -> str:
    """The path a site is published below, from its full URL (`https://x.org/docs/` -> `/docs/`).

    No URL (MkDocs' `site_url` unset, Sphinx's `html_baseurl` empty) means the
    site is served at the root.
    """
    return normalize_base_path(urlsplit(site_url or "").path)


def write_build_index(
    site_dir: Path,
    assets_dir: Path,
    *,
    base_path: str,
    site_name: str | None,
    body_selector: str | None = None,
    backend_index: bool = True,
    say: Callable[[str], None],
) -> BuildIndex:
    """Index `site_dir`; with `backend_index`, write the file into `assets_dir`, else remove
    an earlier build's file there. Raises SiteIndexError."""
    index = index_site(
        site_dir, base_path=base_path, site_name=site_name, body_selector=body_selector
    )
    if backend_index:
        written = write_site_index(index, assets_dir)
        result = BuildIndex(index, written, written.stat().st_size)
    else:
        remove_site_indexes(assets_dir)
        result = BuildIndex(index, None)
    say(result.log_line())
    return result


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} kB"
    return f"{size / (1024 * 1024):.1f} MB"
