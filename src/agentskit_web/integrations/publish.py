"""The widget published into a built site: what the plugins do after a build, for any generator.

`agentskit-web publish SITE_DIR` (Hugo, Jekyll, Docusaurus, hand-written HTML),
the MkDocs plugin's `on_post_build` and the Sphinx extension's `build-finished`
all call `publish_site`, so a site gets the same three things whichever way it
was built:

1. the assets folder (`assets_source.publish_assets`: the release's packaged
   folder, a folder the owner names, or a checkout's build);
2. the site's search index (`index_step.write_build_index`: the pages as
   published, below `base_path`), written into the assets folder as the
   backend's index file only when a backend reads it (an `endpoint`, or
   `backend_index` set);
3. the static index split for the page, with the loader pointed at its
   manifest (`static_answers.publish_static_answers`), so the page answers
   with no server (or when the backend cannot be reached).

`inject_embed` is for sites without a template hook (or an owner who would
rather not edit one): every HTML page lacking the loader gets its script tag
before `</head>`, every page lacking the element gets `<agentskit-ask>` before
`</body>`. A page that has either keeps it as it is, so a second run changes
nothing. Paths are written from the site's root (`base_path`), not relative to
each page: a generator's 404 page is served at any URL, and a relative path
would break there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..build.files import BuildError, write_if_changed
from .assets_source import publish_assets
from .embed import EmbedOptions, element_tag, loader_path, loader_tag

_HEAD_END: Final = re.compile(r"</head\s*>", re.IGNORECASE)
_BODY_START: Final = re.compile(r"<body\b[^>]*>", re.IGNORECASE)
_BODY_END: Final = re.compile(r"</body\s*>", re.IGNORECASE)
HAS_LOADER: Final = re.compile(
    r"""<script\b[^>]*\bsrc\s*=\s*["']?[^"'\s>]*agentskit-ask\.js""", re.IGNORECASE
)
"""A page that loads the widget already (any path to the loader)."""
HAS_ELEMENT: Final = re.compile(r"<agentskit-ask[\s>]", re.IGNORECASE)
HTML_SUFFIXES: Final = (".html", ".htm")


@dataclass(frozen=True)
class PublishSettings:
    """Where the widget goes in the site and how the site is indexed."""

    options: EmbedOptions
    base_path: str = "/"
    """The path the site is served below (`/docs/`): the index's URLs start with it."""
    site_name: str | None = None
    body_selector: str | None = None
    """The element holding each page's content (indexing/selector.py); None: the usual ones."""
    index: bool = True
    """False: only the assets (the plugins' `index: false`)."""
    assets_from: Path | None = None
    with_pyscript: bool = False
    backend_index: bool | None = None
    """Write the backend's index file (`agentskit-index.<hash>.json`) into the assets folder:
    None (the default) when the element has an `endpoint` (`serve-ask --site-dir` reads it),
    True or False to say so. A static site's page reads only the split index."""

    @property
    def writes_backend_index(self) -> bool:
        if self.backend_index is None:
            return self.options.endpoint is not None
        return self.backend_index


def publish_site(
    site_dir: Path,
    settings: PublishSettings,
    *,
    say: Callable[[str], None] = print,
    warn: Callable[[str], None] = print,
    detail: Callable[[str], None] = lambda message: None,
) -> None:
    """Write the assets folder, the site's index and the static index into `site_dir`.

    Raises BuildError with one line for the build log when any step cannot be
    done (no assets source, a site that cannot be indexed while the page needs
    the static index, i.e. there is no endpoint).
    """
    from ..indexing.site import SiteIndexError
    from .index_step import write_build_index
    from .static_answers import publish_static_answers

    if not site_dir.is_dir():
        raise BuildError(f"{site_dir} is not a folder (build the site first)")
    assets_path = settings.options.assets_path
    target = site_dir / assets_path
    origin = publish_assets(
        target, settings.assets_from, detail, with_pyscript=settings.with_pyscript
    )
    say(f"agentskit-ask: assets written to {target} ({origin})")
    if not settings.index:
        return
    try:
        built = write_build_index(
            site_dir,
            target,
            base_path=settings.base_path,
            site_name=settings.site_name,
            body_selector=settings.body_selector,
            backend_index=settings.writes_backend_index,
            say=say,
        )
    except SiteIndexError as error:
        raise BuildError(str(error)) from error
    publish_static_answers(
        site_dir,
        assets_path,
        base_path=settings.base_path,
        required=settings.options.endpoint is None,
        index=built.index,
        say=say,
        warn=warn,
    )


@dataclass(frozen=True)
class InjectReport:
    """How many pages `inject_embed` changed and how many had the embed already."""

    changed: int
    unchanged: int


def html_pages(site_dir: Path, assets_path: str) -> list[Path]:
    """Every HTML file of the site, outside the widget's own assets folder."""
    assets = (site_dir / assets_path).resolve()
    return [
        path
        for path in sorted(site_dir.rglob("*"))
        if path.suffix.lower() in HTML_SUFFIXES
        and path.is_file()
        and not path.resolve().is_relative_to(assets)
    ]


def embed_into(text: str, loader: str, element: str) -> str:
    """`text` with the loader before `</head>` and the element before `</body>`, each only
    when the page lacks it (so the result of a second call is the same text)."""
    if not HAS_LOADER.search(text):
        text = _insert(text, loader, before=_HEAD_END, after=_BODY_START)
    if not HAS_ELEMENT.search(text):
        ends = list(_BODY_END.finditer(text))
        at = ends[-1].start() if ends else len(text)
        text = text[:at] + element + "\n" + text[at:]
    return text


def _insert(text: str, tag: str, *, before: re.Pattern[str], after: re.Pattern[str]) -> str:
    found = before.search(text)
    if found is not None:
        return text[: found.start()] + tag + "\n" + text[found.start() :]
    opened = after.search(text)
    at = opened.end() if opened is not None else 0
    return text[:at] + tag + "\n" + text[at:]


def inject_embed(site_dir: Path, options: EmbedOptions, base_path: str = "/") -> InjectReport:
    """Add the loader and the element to every page of `site_dir` that lacks them."""

    def rooted(path: str) -> str:
        return base_path + path

    loader = loader_tag(rooted(loader_path(options)))
    element = element_tag(options, rooted)
    changed = unchanged = 0
    for page in html_pages(site_dir, options.assets_path):
        text = page.read_text(encoding="utf-8", errors="surrogateescape")
        embedded = embed_into(text, loader, element)
        if embedded == text:
            unchanged += 1
            continue
        write_if_changed(page, embedded.encode("utf-8", errors="surrogateescape"))
        changed += 1
    return InjectReport(changed, unchanged)
