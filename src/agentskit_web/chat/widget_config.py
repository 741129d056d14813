"""The `<agentskit-ask>` element's attributes, read into a validated widget configuration.

Attributes are a shorthand for a chat definition plus presentation options:

| attribute | meaning | default |
|---|---|---|
| `protocol` | `ask` (Ask NDJSON) or `turn` (`agentskit.chat.turn` v1 snapshots) | `ask` |
| `endpoint` | service URL (relative stays relative) | none: the static index, else `/api/ask` |
| `corpus`, `persona` | hints sent as query parameters | none |
| `storage-key` | memory key | `agentskit:ask:<chat-id>` |
| `legacy-keys` | older keys to migrate, comma or space separated | none |
| `storage` | `local`, `session` or `none` | `local` |
| `chat-id` | the definition id (SafeId) | `ask` |
| `theme` | `light`, `dark` or `auto` (follows `prefers-color-scheme`) | `auto` |
| `suggestions` | starter questions: a JSON array of strings, or `|`-separated | none |
| `heading`, `placeholder`, `disclaimer` | UI text | see below |
| `knowledge` | same-origin URL of a local knowledge artifact (FAQ) | none |
| `layout` | `inline` (a box in the page) or `launcher` (a floating button, a dialog) | `inline` |
| `strings` | UI strings to replace, a JSON object (keys: `DEFAULT_STRINGS`) | none |
| `boot` | when the runtime loads: `intent`, `idle` or `eager` (read by the loader) | `intent` |
| `position`, `into` | the launcher's corner; the element an inline box moves into (loader) | none |
| `links` | where answer and source links open: `same-tab` or `new-tab` | `same-tab` |
| `images` | path prefix (`/assets/`) under which answer images may load | none: links |
| `feedback-endpoint` | where 👍/👎 are sent (chat/answer_feedback.py) | beside `endpoint`, if set |

Without `endpoint`, a page whose site published a static index answers from it in the
page (chat/static_answers.py); with no index either, `/api/ask` (`/api/turn` for `turn`).

Everything here is pure and bounded: at most 8 suggestions of at most 256
chars, blank ones dropped; an invalid value falls back to its default, so an
attribute typo never stops the widget from booting.
"""

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, Literal

from ..protocol.identifiers import is_safe_id
from ..protocol.limits import SITE_MAX_SUGGESTIONS
from ..protocol.text_metrics import js_is_blank, js_length, js_slice, js_trim
from ..protocol.wire_json import JSON_INVALID, parse_json

Theme = Literal["light", "dark", "auto"]
Protocol = Literal["ask", "turn"]
StorageChoice = Literal["local", "session", "none"]
Layout = Literal["inline", "launcher"]
Links = Literal["same-tab", "new-tab"]

DEFAULT_ENDPOINT: Final = "/api/ask"
DEFAULT_TURN_ENDPOINT: Final = "/api/turn"
DEFAULT_CHAT_ID: Final = "ask"
DEFAULT_HEADING: Final = "Ask the docs"
DEFAULT_PLACEHOLDER: Final = "Ask a question about these docs"
DEFAULT_DISCLAIMER: Final = "Answers can miss things: the linked sections are the reference."
SUGGESTION_MAX_CHARS: Final = 256
# `images`: an absolute path prefix ending in "/", of plain path characters (no "..", no "%",
# no query): anything else means no images load, and answer images are shown as links.
IMAGE_PREFIX_MAX_CHARS: Final = 256
IMAGE_PREFIX_PATTERN: Final = re.compile(r"/(?:[A-Za-z0-9_~-][A-Za-z0-9._~-]*/)*")
TEXT_MAX_CHARS: Final = 512
STRING_MAX_CHARS: Final = 200
"""Longest replacement UI string (the loader applies the same bound to its shell)."""
_THEMES: Final = ("light", "dark", "auto")
_STORAGES: Final = ("local", "session", "none")
_LAYOUTS: Final = ("inline", "launcher")
_LINKS: Final = ("same-tab", "new-tab")
_PROTOCOLS: Final = ("ask", "turn")

DEFAULT_STRINGS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "heading": DEFAULT_HEADING,
        "placeholder": DEFAULT_PLACEHOLDER,
        "disclaimer": DEFAULT_DISCLAIMER,
        "label": "Your question",
        "send": "Send",
        "stop": "Stop",
        "stop_label": "Stop the answer",
        "new": "New conversation",
        "new_done": "New conversation.",
        "close": "Close",
        "open": "Open",
        "thinking": "Thinking…",
        "copy": "Copy",
        "copied": "Copied",
        "copy_failed": "Copy failed",
        "copy_label": "Copy answer",
        "up_label": "Helpful",
        "down_label": "Not helpful",
        "regenerate": "Regenerate",
        "regenerate_label": "Regenerate the answer",
        "retry": "Retry",
        "retry_label": "Retry this answer",
        "edit": "Edit",
        "edit_label": "Edit this question",
        "edit_field": "Edit your question",
        "save": "Save",
        "save_label": "Save the question and ask it again",
        "cancel": "Cancel",
        "cancel_label": "Cancel the edit",
        "comment_field": "What was wrong with this answer? (optional)",
        "comment_send": "Send feedback",
        "comment_skip": "Skip",
        "comment_thanks": "Thanks: your feedback was sent.",
        "reconnecting": "Connection lost; reconnecting…",
        "static_note": "Answered in your browser from this site's pages.",
        "fallback_note": (
            "The answer service could not be reached: answered in your browser "
            "from this site's pages."
        ),
        "you": "You",
        "assistant": "Assistant",
        # The loader's shell (web/agentskit-ask.js) reads these from the same attribute.
        "launcher": "Ask",
        "idle": "Ask a question about these docs.",
        "loading": "Loading the assistant: {done} of {total} MB…",
        "starting": "Starting the assistant…",
        "kept": "Your question is kept and will be sent as soon as the assistant is ready.",
        "failed": "The assistant could not start.",
        "waiting": "your conversation is waiting",
        "glance": "Your last conversation",
        "intro": (
            "Ask in your own words. Answers come from these docs, "
            "with a link to each section they use."
        ),
    }
)
"""Every UI string a site can replace through the `strings` attribute, with its default."""


@dataclass(frozen=True)
class WidgetConfig:
    """Everything the widget needs from its element, validated."""

    endpoint: str = DEFAULT_ENDPOINT
    corpus: str | None = None
    persona: str | None = None
    chat_id: str = DEFAULT_CHAT_ID
    storage_key: str = f"agentskit:ask:{DEFAULT_CHAT_ID}"
    legacy_keys: tuple[str, ...] = ()
    storage: StorageChoice = "local"
    theme: Theme = "auto"
    suggestions: tuple[str, ...] = ()
    heading: str = DEFAULT_HEADING
    placeholder: str = DEFAULT_PLACEHOLDER
    disclaimer: str = DEFAULT_DISCLAIMER
    knowledge_url: str | None = None
    layout: Layout = "inline"
    strings: Mapping[str, str] = field(default_factory=dict)
    """The site's replacements only; `text` falls back to DEFAULT_STRINGS."""
    image_prefix: str | None = None
    protocol: Protocol = "ask"
    feedback_endpoint: str | None = None
    """Where feedback goes when the owner names it; else beside `endpoint`, if one is set."""
    links: Links = "same-tab"
    """Where links in answers open: the same tab by default (a reader following a source
    stays on the site; a new tab would start another runtime), a new tab if the site asks."""
    endpoint_set: bool = False
    """Whether the element names its `endpoint`: without one, a page whose site published
    a static index answers from it (chat/static_answers.py), else the default endpoint."""

    def text(self, key: str) -> str:
        """The UI string `key`: the site's replacement, else the default."""
        return self.strings.get(key) or DEFAULT_STRINGS[key]


def strings_from_attribute(value: str | None) -> dict[str, str]:
    """Replacement UI strings from a JSON object; unknown keys and bad values are dropped.

    A value must be a non-blank string of at most STRING_MAX_CHARS; anything else
    keeps the default, so a typo in a translation never leaves a control unlabelled.
    """
    if value is None or js_is_blank(value):
        return {}
    parsed = parse_json(js_trim(value))
    if not isinstance(parsed, dict):
        return {}
    return {
        key: js_trim(text)
        for key, text in parsed.items()
        if key in DEFAULT_STRINGS
        and isinstance(text, str)
        and not js_is_blank(text)
        and js_length(text) <= STRING_MAX_CHARS
    }


def suggestions_from_attribute(value: object) -> tuple[str, ...]:
    """Starter questions from a JSON array of strings or a `|`-separated list (<= 8)."""
    items: list[object]
    if isinstance(value, list | tuple):
        items = list(value)
    elif isinstance(value, str):
        text = js_trim(value)
        parsed = parse_json(text) if text.startswith("[") else JSON_INVALID
        items = list(parsed) if isinstance(parsed, list) else list(text.split("|"))
    else:
        return ()
    cleaned: list[str] = []
    for item in items:
        if not isinstance(item, str) or js_is_blank(item):
            continue
        suggestion = js_slice(js_trim(item), SUGGESTION_MAX_CHARS)
        if suggestion not in cleaned:
            cleaned.append(suggestion)
        if len(cleaned) == SITE_MAX_SUGGESTIONS:
            break
    return tuple(cleaned)


def keys_from_attribute(value: str | None) -> tuple[str, ...]:
    """Storage keys separated by commas or whitespace, in order, without duplicates."""
    if not value:
        return ()
    keys: list[str] = []
    for key in value.replace(",", " ").split():
        if key not in keys:
            keys.append(key)
    return tuple(keys)


def _text(value: str | None, default: str) -> str:
    if value is None or js_is_blank(value):
        return default
    return js_slice(js_trim(value), TEXT_MAX_CHARS)


def image_prefix_from_attribute(value: str | None) -> str | None:
    """The `images` path prefix, or None (images as links) for a missing or unsafe value."""
    prefix = _optional(value)
    if prefix is None or len(prefix) > IMAGE_PREFIX_MAX_CHARS:
        return None
    if not IMAGE_PREFIX_PATTERN.fullmatch(prefix) or prefix == "/":  # "/" would be all
        return None
    return prefix


IMAGE_PATH_REFUSED: Final = re.compile(r"%(?:2f|5c|2e)|\\", re.IGNORECASE)
"""In an image path: an encoded slash, backslash or dot, or a raw backslash.

The browser's URL parser removes plain `.`/`..` segments but keeps `%2F` and
`%2E` as they are, and many servers decode them before routing:
`/agentskit/..%2F..%2Flogout` passes a text prefix test and reaches `/logout`."""


def image_path_allowed(pathname: str, prefix: str) -> bool:
    """Whether a parsed URL's path may load as an image under the `images` prefix.

    The path must be free of encoded separators and dots (`IMAGE_PATH_REFUSED`)
    and of dot segments, then start with the prefix: what the test sees is what
    any server will route.
    """
    if IMAGE_PATH_REFUSED.search(pathname):
        return False
    if any(segment in (".", "..") for segment in pathname.split("/")):
        return False
    return pathname.startswith(prefix)


def _optional(value: str | None) -> str | None:
    return None if value is None or js_is_blank(value) else js_trim(value)


def config_from_attributes(get: Callable[[str], str | None] | Mapping[str, str]) -> WidgetConfig:
    """Read the element's attributes (a getter like `getAttribute`, or a mapping)."""
    read: Callable[[str], str | None] = get.get if isinstance(get, Mapping) else get

    def attribute(name: str) -> str | None:
        value = read(name)
        return value if isinstance(value, str) else None

    chat_id = _optional(attribute("chat-id")) or DEFAULT_CHAT_ID
    if not is_safe_id(chat_id):
        chat_id = DEFAULT_CHAT_ID
    theme = _optional(attribute("theme")) or "auto"
    storage = _optional(attribute("storage")) or "local"
    layout = (_optional(attribute("layout")) or "inline").lower()
    strings = strings_from_attribute(attribute("strings"))
    protocol = _optional(attribute("protocol")) or "ask"
    protocol = protocol if protocol in _PROTOCOLS else "ask"
    default_endpoint = DEFAULT_TURN_ENDPOINT if protocol == "turn" else DEFAULT_ENDPOINT
    endpoint = _optional(attribute("endpoint"))
    links = (_optional(attribute("links")) or "same-tab").lower()
    return WidgetConfig(
        endpoint=endpoint or default_endpoint,
        endpoint_set=endpoint is not None,
        corpus=_optional(attribute("corpus")),
        persona=_optional(attribute("persona")),
        chat_id=chat_id,
        storage_key=_optional(attribute("storage-key")) or f"agentskit:ask:{chat_id}",
        legacy_keys=keys_from_attribute(attribute("legacy-keys")),
        storage=storage if storage in _STORAGES else "local",  # type: ignore[arg-type]
        theme=theme if theme in _THEMES else "auto",  # type: ignore[arg-type]
        suggestions=suggestions_from_attribute(attribute("suggestions") or ""),
        heading=_text(attribute("heading"), strings.get("heading", DEFAULT_HEADING)),
        placeholder=_text(
            attribute("placeholder"), strings.get("placeholder", DEFAULT_PLACEHOLDER)
        ),
        disclaimer=_text(attribute("disclaimer"), strings.get("disclaimer", DEFAULT_DISCLAIMER)),
        knowledge_url=_optional(attribute("knowledge")),
        layout=layout if layout in _LAYOUTS else "inline",  # type: ignore[arg-type]
        strings=MappingProxyType(strings),
        image_prefix=image_prefix_from_attribute(attribute("images")),
        protocol=protocol,  # type: ignore[arg-type]
        feedback_endpoint=_optional(attribute("feedback-endpoint")),
        links=links if links in _LINKS else "same-tab",  # type: ignore[arg-type]
    )
