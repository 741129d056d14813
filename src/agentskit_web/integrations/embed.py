"""What the MkDocs plugin and the Sphinx extension share: validated options and the embed markup.

Both generators need the same three things: the site owner's settings checked
once, with a message that names the setting (a typo must stop the build, not
ship a page whose widget silently falls back to a default); the two lines of
the embed written with paths relative to each page (so the site works under
any base path, e.g. a project page at `/project/`); and the assets folder
written into the built site (`assets_source.publish_assets`).
"""

from __future__ import annotations

import html
import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from ..build.assets import LOADER

BOOTS: Final = ("intent", "idle", "eager")
LAYOUTS: Final = ("launcher", "inline")
"""The first is the default: a labelled button in a corner of every page, found at once."""
POSITIONS: Final = ("bottom-right", "bottom-left")
"""Where the launcher sits (the first is the default)."""
PLACEMENTS: Final = ("end", "start")
"""Where the inline box goes in each page's content; any other value is a CSS selector
of an element the site names (the loader moves the box into it: `into`)."""
LINKS: Final = ("same-tab", "new-tab")
THEMES: Final = ("auto", "light", "dark")
DEFAULT_ASSETS_PATH: Final = "agentskit/"
DEFAULT_ENDPOINT: Final = None
"""No endpoint: the page answers from the site's static index (no server needed)."""
_ABSOLUTE: Final = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|/)")
"""A URL with a scheme or a path from the host's root: written into pages as given."""
_STORAGE_KEY: Final = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
_HINT: Final = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
_SELECTOR: Final = re.compile(r"^[#.\[]?[A-Za-z0-9_\-#.:\[\]=\s>~+()*]{1,200}$")
"""A CSS selector of plain characters (no quotes or angle brackets: it is written into an
attribute and read by querySelector, which reports anything invalid)."""


class EmbedConfigError(ValueError):
    """A setting of the plugin or extension is invalid; the message names it and its choices."""


@dataclass(frozen=True)
class EmbedOptions:
    """The site-wide settings of the embed, already validated (see `embed_options`)."""

    endpoint: str | None = DEFAULT_ENDPOINT
    """The Ask backend; None answers in the page from the static index the build writes."""
    corpus: str | None = None
    persona: str | None = None
    boot: str = "intent"
    layout: str = LAYOUTS[0]
    position: str = POSITIONS[0]
    placement: str = PLACEMENTS[0]
    """For the inline layout: `end`, `start`, or a selector the box is moved into."""
    links: str = LINKS[0]
    knowledge: str | None = None
    storage_key: str | None = None
    theme: str = "auto"
    assets_path: str = DEFAULT_ASSETS_PATH
    """The assets folder inside the built site, always ending in `/`."""


def _choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise EmbedConfigError(f"{name}: {value!r} is not one of {', '.join(choices)}")
    return str(value)


def _url(name: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip() or value != value.strip():
        raise EmbedConfigError(f"{name}: expected a URL or a path, got {value!r}")
    if any(c in value for c in "\"'<>` \\") or any(ord(c) < 0x20 for c in value):
        raise EmbedConfigError(f"{name}: {value!r} contains a character a URL cannot hold")
    return value


def _pattern(name: str, value: object, pattern: re.Pattern[str], what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not pattern.match(value):
        raise EmbedConfigError(f"{name}: {value!r} is not {what}")
    return value


def _placement(name: str, value: object) -> str:
    if value in PLACEMENTS:
        return str(value)
    if isinstance(value, str) and _SELECTOR.match(value) and value.strip() == value:
        return value
    raise EmbedConfigError(
        f"{name}: {value!r} is not one of {', '.join(PLACEMENTS)} or a CSS selector "
        "of an element on the page (e.g. #ask-here)"
    )


def assets_folder(name: str, value: object) -> str:
    """`agentskit` -> `agentskit/`: a relative folder inside the site, never outside it."""
    if not isinstance(value, str) or not value.strip("/"):
        raise EmbedConfigError(f"{name}: expected a folder inside the site, got {value!r}")
    folder = posixpath.normpath(value.strip("/"))
    if _ABSOLUTE.match(value.lstrip("/")) or folder.startswith("..") or folder == ".":
        raise EmbedConfigError(
            f"{name}: {value!r} must be a relative folder inside the built site (e.g. agentskit/)"
        )
    _url(name, folder)
    return folder + "/"


def embed_options(settings: Mapping[str, object], prefix: str = "") -> EmbedOptions:
    """Validate raw settings (None = unset); `prefix` is how the host names them in messages."""

    def named(key: str) -> str:
        return f"{prefix}{key}"

    def get(key: str, default: object = None) -> object:
        value = settings.get(key)
        return default if value is None else value

    return EmbedOptions(
        endpoint=None if get("endpoint") is None else _url(named("endpoint"), get("endpoint")),
        corpus=_pattern(
            named("corpus"), get("corpus"), _HINT, "an identifier (letters, digits, _.:-)"
        ),
        persona=_pattern(
            named("persona"), get("persona"), _HINT, "an identifier (letters, digits, _.:-)"
        ),
        boot=_choice(named("boot"), get("boot", "intent"), BOOTS),
        layout=_choice(named("layout"), get("layout", LAYOUTS[0]), LAYOUTS),
        position=_choice(named("position"), get("position", POSITIONS[0]), POSITIONS),
        placement=_placement(named("placement"), get("placement", PLACEMENTS[0])),
        links=_choice(named("links"), get("links", LINKS[0]), LINKS),
        knowledge=None if get("knowledge") is None else _url(named("knowledge"), get("knowledge")),
        storage_key=_pattern(
            named("storage_key"),
            get("storage_key"),
            _STORAGE_KEY,
            "a storage key (1-128 letters, digits, _.:-)",
        ),
        theme=_choice(named("theme"), get("theme", "auto"), THEMES),
        assets_path=assets_folder(named("assets_path"), get("assets_path", DEFAULT_ASSETS_PATH)),
    )


def loader_path(options: EmbedOptions) -> str:
    """The loader's path from the site's root, e.g. `agentskit/agentskit-ask.js`."""
    return options.assets_path + LOADER


def loader_tag(src: str) -> str:
    """The one script tag (a module, so it is deferred and runs once per page)."""
    return f'<script type="module" src="{html.escape(src)}"></script>'


def is_site_path(target: str) -> bool:
    """True for a path inside the built site (written relative to each page), False for a URL."""
    return not _ABSOLUTE.match(target)


def inline_before_content(options: EmbedOptions) -> bool:
    """Whether the inline box goes before the page's content (`placement: start`)."""
    return options.layout == "inline" and options.placement == "start"


def element_tag(options: EmbedOptions, relative: Callable[[str], str]) -> str:
    """`<agentskit-ask ...>` with the site's settings.

    `relative` turns a path from the site's root into one from the current page
    (the generator's own function: MkDocs' `get_relative_url`, Sphinx's `pathto`);
    it is applied only to site paths, never to a URL or a `/`-rooted path.
    """

    def link(target: str) -> str:
        return relative(target) if is_site_path(target) else target

    attributes: dict[str, str | None] = {
        "endpoint": None if options.endpoint is None else link(options.endpoint),
        "corpus": options.corpus,
        "persona": options.persona,
        "boot": options.boot,
        "layout": options.layout,
        "position": options.position if options.layout == "launcher" else None,
        "into": (
            options.placement
            if options.layout == "inline" and options.placement not in PLACEMENTS
            else None
        ),
        "links": None if options.links == LINKS[0] else options.links,
        "theme": options.theme,
        "knowledge": None if options.knowledge is None else link(options.knowledge),
        "storage-key": options.storage_key,
    }
    written = " ".join(
        f'{name}="{html.escape(value)}"' for name, value in attributes.items() if value is not None
    )
    return f"<agentskit-ask {written}></agentskit-ask>"
