"""The build step both plugins share: index the pages the generator just wrote.

MkDocs (`on_post_build`) and Sphinx (`build-finished`) call `write_build_index`
once every page is on disk, so the index holds exactly the HTML a reader gets:
the generator's URLs (directory URLs or `.html`, `index.html` as its folder),
its anchors, the code it included at build time, and titles as text. The file
goes into the widget's assets folder under a content-hashed name
(`agentskit-index.<hash>.json`), so it caches like the runtime beside it, and
an older index there is removed. One line in the build log says what was
written: pages indexed, the file, its size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..indexing.site import index_site, normalize_base_path, write_site_index


@dataclass(frozen=True, slots=True)
class BuildIndex:
    """What the step wrote (for the log line and the tests)."""

    path: Path
    pages: int
    chunks: int
    size: int

    def log_line(self) -> str:
        return (
            f"agentskit-ask: indexed {self.pages} pages ({self.chunks} sections) into "
            f"{self.path} ({_size(self.size)})"
        )


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
    say: Callable[[str], None],
) -> BuildIndex:
    """Index `site_dir` and write the file into `assets_dir`; raises SiteIndexError."""
    index = index_site(
        site_dir, base_path=base_path, site_name=site_name, body_selector=body_selector
    )
    written = write_site_index(index, assets_dir)
    result = BuildIndex(written, index.pages, len(index.chunks), written.stat().st_size)
    say(result.log_line())
    return result


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} kB"
    return f"{size / (1024 * 1024):.1f} MB"
