"""What the MkDocs plugin and the Sphinx extension share: validated options and the embed markup.

Every attribute of `<agentskit-ask>` a site may set for all its pages is a
setting of both generators (ATTRIBUTES: one row each; lists and mappings in
YAML's or Python's own form). Both need the same three things: the site
owner's settings checked once, with a message that names the setting (a typo
must stop the build, not ship a page whose widget silently falls back to a
default); the two lines of the embed written with paths relative to each page
(so the site works under any base path, e.g. a project page at `/project/`);
and the assets folder written into the built site
(`assets_source.publish_assets`).
"""

from __future__ import annotations

import html
import json
import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from ..build.assets import LOADER
from ..chat.widget_config import (
    DEFAULT_STRINGS,
    IMAGE_PREFIX_MAX_CHARS,
    IMAGE_PREFIX_PATTERN,
    STRING_MAX_CHARS,
    SUGGESTION_MAX_CHARS,
    TEXT_MAX_CHARS,
    suggestions_from_attribute,
)
from ..protocol.identifiers import is_safe_id
from ..protocol.limits import SITE_MAX_SUGGESTIONS

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
class Attribute:
    """One attribute of `<agentskit-ask>` (docs/embedding.md's table), as a site-wide setting.

    The plugins' options, the Sphinx settings and `embed_options` are all derived
    from ATTRIBUTES, so an attribute added there is an option of both generators at
    once (tests/test_integrations.py walks the docs' table to hold them equal).
    """

    name: str
    """The element's attribute (`storage-key`); the option is it with `_` (`storage_key`)."""
    kind: str
    """How a value is checked and written (`_VALUE_KINDS`)."""
    choices: tuple[str, ...] = ()
    default: str | None = None
    """Written on every element even when unset (None: left out, the widget's default)."""

    @property
    def option(self) -> str:
        return self.name.replace("-", "_")


ATTRIBUTES: Final = (
    Attribute("endpoint", "link"),
    Attribute("protocol", "choice", ("ask", "turn")),
    Attribute("corpus", "hint"),
    Attribute("persona", "hint"),
    Attribute("storage-key", "storage-key"),
    Attribute("legacy-keys", "storage-keys"),
    Attribute("storage", "choice", ("local", "session", "none")),
    Attribute("chat-id", "safe-id"),
    Attribute("images", "image-prefix"),
    Attribute("knowledge", "link"),
    Attribute("feedback-endpoint", "link"),
    Attribute("suggestions", "suggestions"),
    Attribute("strings", "strings"),
    Attribute("theme", "choice", THEMES, "auto"),
    Attribute("layout", "choice", LAYOUTS, LAYOUTS[0]),
    Attribute("position", "choice", POSITIONS),
    Attribute("into", "selector"),
    Attribute("links", "choice", LINKS),
    Attribute("boot", "choice", BOOTS, "intent"),
    Attribute("offline", "choice", ("none", "cache")),
    Attribute("snapshot", "choice", ("none", "keep")),
    Attribute("offline-scope", "root-path"),
    Attribute("heading", "text"),
    Attribute("placeholder", "text"),
    Attribute("disclaimer", "text"),
)
"""Every attribute a site may set for all its pages, in the order they are written."""
LIST_KINDS: Final = frozenset({"suggestions", "storage-keys"})
"""Attributes a site gives as a list (or in the attribute's own text form)."""
MAPPING_KINDS: Final = frozenset({"strings"})
"""Attributes a site gives as a mapping (or as the attribute's JSON text)."""


@dataclass(frozen=True)
class EmbedOptions:
    """The site-wide settings of the embed, already validated (see `embed_options`)."""

    attributes: Mapping[str, str] = field(default_factory=dict)
    """Attribute name -> its value as written on the element (only those set)."""
    placement: str = PLACEMENTS[0]
    """Where the generator writes an inline box: `end` or `start` of the content (a selector
    is written as the element's `into`)."""
    assets_path: str = DEFAULT_ASSETS_PATH
    """The assets folder inside the built site, always ending in `/`."""

    def value(self, name: str) -> str | None:
        """The attribute's value on the element: the one set, else its written default."""
        given = self.attributes.get(name)
        return given if given is not None else _BY_NAME[name].default

    @property
    def endpoint(self) -> str | None:
        """The Ask backend; None answers in the page from the static index the build writes."""
        return self.value("endpoint")

    @property
    def layout(self) -> str:
        return self.value("layout") or ""

    @property
    def boot(self) -> str:
        return self.value("boot") or ""


_BY_NAME: Final = {attribute.name: attribute for attribute in ATTRIBUTES}


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


def _pattern(name: str, value: object, pattern: re.Pattern[str], what: str) -> str:
    if not isinstance(value, str) or not pattern.match(value):
        raise EmbedConfigError(f"{name}: {value!r} is not {what}")
    return value


def _text(name: str, value: object, limit: int = TEXT_MAX_CHARS) -> str:
    if not isinstance(value, str) or not value.strip():
        raise EmbedConfigError(f"{name}: expected a non-empty text, got {value!r}")
    if len(value) > limit or any(ord(c) < 0x20 and c not in "\t" for c in value):
        raise EmbedConfigError(
            f"{name}: {value[:40]!r}... must be one line of at most {limit} characters"
        )
    return value


def _listed(name: str, value: object) -> list[object]:
    """A list as YAML or Python gives it (the text forms are read by the callers)."""
    if isinstance(value, list | tuple):
        return list(value)
    raise EmbedConfigError(f"{name}: expected a list, got {value!r}")


def _suggestions(name: str, value: object) -> str:
    if isinstance(value, str):
        items: list[object] = list(suggestions_from_attribute(value))
    else:
        items = _listed(name, value)
    if not 1 <= len(items) <= SITE_MAX_SUGGESTIONS:
        raise EmbedConfigError(f"{name}: expected 1 to {SITE_MAX_SUGGESTIONS} questions")
    texts = [_text(name, item, SUGGESTION_MAX_CHARS) for item in items]
    return json.dumps(texts, ensure_ascii=False)


def _storage_keys(name: str, value: object) -> str:
    items = value.replace(",", " ").split() if isinstance(value, str) else _listed(name, value)
    what = "a storage key (1-128 letters, digits, _.:-)"
    return " ".join(_pattern(name, item, _STORAGE_KEY, what) for item in items)


def _strings(name: str, value: object) -> str:
    parsed = json.loads(value) if isinstance(value, str) and value.strip() else value
    if not isinstance(parsed, dict) or not parsed:
        raise EmbedConfigError(f"{name}: expected a mapping of UI strings, got {value!r}")
    unknown = sorted(str(key) for key in parsed if key not in DEFAULT_STRINGS)
    if unknown:
        raise EmbedConfigError(
            f"{name}: unknown UI string {', '.join(unknown)} "
            f"(known: {', '.join(sorted(DEFAULT_STRINGS))})"
        )
    texts = {
        str(key): _text(f"{name}.{key}", text, STRING_MAX_CHARS) for key, text in parsed.items()
    }
    return json.dumps(texts, ensure_ascii=False, sort_keys=True)


def _image_prefix(name: str, value: object) -> str:
    if (
        not isinstance(value, str)
        or value == "/"
        or len(value) > IMAGE_PREFIX_MAX_CHARS
        or not IMAGE_PREFIX_PATTERN.fullmatch(value)
    ):
        raise EmbedConfigError(f"{name}: {value!r} is not a folder path such as /assets/")
    return value


def _root_path(name: str, value: object) -> str:
    if not isinstance(value, str) or not value.startswith("/"):
        raise EmbedConfigError(f"{name}: {value!r} is not a path from the site's root (/docs/)")
    return _url(name, value)


_VALUE_KINDS: Final[dict[str, Callable[[str, object, Attribute], str]]] = {
    "link": lambda name, value, _a: _url(name, value),
    "choice": lambda name, value, a: _choice(name, value, a.choices),
    "hint": lambda name, value, _a: _pattern(
        name, value, _HINT, "an identifier (letters, digits, _.:-)"
    ),
    "storage-key": lambda name, value, _a: _pattern(
        name, value, _STORAGE_KEY, "a storage key (1-128 letters, digits, _.:-)"
    ),
    "storage-keys": lambda name, value, _a: _storage_keys(name, value),
    "safe-id": lambda name, value, _a: _safe_id(name, value),
    "image-prefix": lambda name, value, _a: _image_prefix(name, value),
    "suggestions": lambda name, value, _a: _suggestions(name, value),
    "strings": lambda name, value, _a: _strings(name, value),
    "root-path": lambda name, value, _a: _root_path(name, value),
    "text": lambda name, value, _a: _text(name, value),
    "selector": lambda name, value, _a: _selector(name, value),
}
"""How each kind of attribute is checked and turned into the text written on the element."""


def _safe_id(name: str, value: object) -> str:
    if not is_safe_id(value):
        raise EmbedConfigError(f"{name}: {value!r} is not a safe id (letters, digits, _-)")
    return str(value)


def _selector(name: str, value: object) -> str:
    if isinstance(value, str) and _SELECTOR.match(value) and value.strip() == value:
        return value
    raise EmbedConfigError(f"{name}: {value!r} is not a CSS selector (e.g. #ask-here)")


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
    """Validate raw settings by option name (None = unset); `prefix` is how the host names
    them in messages (`agentskit_ask_` for Sphinx)."""
    attributes = {}
    for attribute in ATTRIBUTES:
        value = settings.get(attribute.option)
        if value is None:
            continue
        check = _VALUE_KINDS[attribute.kind]
        try:
            attributes[attribute.name] = check(f"{prefix}{attribute.option}", value, attribute)
        except json.JSONDecodeError as error:
            raise EmbedConfigError(f"{prefix}{attribute.option}: not JSON ({error})") from None
    given = settings.get("placement")
    placement = _placement(f"{prefix}placement", PLACEMENTS[0] if given is None else given)
    if placement not in PLACEMENTS and "into" not in attributes:
        attributes["into"] = placement  # a selector: the loader moves the box into it
    assets_path = settings.get("assets_path")
    return EmbedOptions(
        attributes=attributes,
        assets_path=assets_folder(
            f"{prefix}assets_path", DEFAULT_ASSETS_PATH if assets_path is None else assets_path
        ),
        placement=placement if placement in PLACEMENTS else PLACEMENTS[0],
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
    """`<agentskit-ask ...>` with the site's settings, in ATTRIBUTES' order.

    `relative` turns a path from the site's root into one from the current page
    (the generator's own function: MkDocs' `get_relative_url`, Sphinx's `pathto`);
    it is applied only to the site paths of `link` attributes, never to a URL or a
    `/`-rooted path.
    """
    written = []
    for attribute in ATTRIBUTES:
        value = options.value(attribute.name)
        if value is None:
            continue
        if attribute.kind == "link" and is_site_path(value):
            value = relative(value)
        written.append(f'{attribute.name}="{html.escape(value)}"')
    return f"<agentskit-ask {' '.join(written)}></agentskit-ask>"
