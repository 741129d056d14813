"""`source-list` component props, its `open` event rule and PortableUrl (PROTOCOL.md 3).

A citation link is the classic XSS vector of a docs Ask widget, so
PortableUrl is decided by a small explicit grammar rather than by
`urllib.parse`, which is lenient in exactly the wrong places: it accepts
`https:evil` (a browser reads it as `https://evil/`), userinfo, and hosts a
browser would refuse. Anything the grammar is unsure about is rejected; the
renderer still normalises an accepted URL with the browser's own parser.
"""

import ipaddress
import re
from typing import Annotated, Any, Final

from pydantic import AfterValidator, Field, ValidationError, field_validator, model_validator

from .identifiers import SafeId, js_chars
from .limits import (
    PORTABLE_URL_MAX_CHARS,
    SOURCE_LIST_LABEL_MAX_CHARS,
    SOURCE_LIST_MAX_SOURCES,
    SOURCE_SNIPPET_MAX_CHARS,
    SOURCE_TITLE_MAX_CHARS,
)
from .text_metrics import js_length
from .wire_model import StrictWireModel

SOURCE_LIST_COMPONENT_KEY: Final = "source-list"
SOURCE_LIST_OPEN_EVENT: Final = "open"

URL_FORBIDDEN_CHARS: Final = re.compile(r"[\x00-\x1f\x7f\\]")
"""C0 controls, DEL and backslash: never part of a URL this package lets through."""
URL_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
"""A URL scheme at the start of a string (RFC 3986 `scheme ":"`), matched with `.match`."""
_HTTP_SCHEME: Final = re.compile(r"https?://", re.IGNORECASE)
_AUTHORITY_END: Final = re.compile(r"[/?#]")
_HOST_LABEL: Final = re.compile(r"[A-Za-z0-9_-]{1,63}")
_NUMERIC_LABEL: Final = re.compile(r"[0-9]+|0[xX][0-9A-Fa-f]*")
_IPV4_PART: Final = re.compile(r"0|[1-9][0-9]{0,2}")
_PORT: Final = re.compile(r"[0-9]{0,5}")
_MAX_PORT: Final = 65_535
_IPV4_PARTS: Final = 4
_IPV4_PART_MAX: Final = 255


def _is_ipv4(labels: list[str]) -> bool:
    """Only plain dotted-decimal IPv4; the odd forms browsers also accept are refused."""
    return len(labels) == _IPV4_PARTS and all(
        _IPV4_PART.fullmatch(part) is not None and int(part) <= _IPV4_PART_MAX for part in labels
    )


def _is_punycode_label(label: str) -> bool:
    """An `xn--` label must decode to a non-empty label with a non-ASCII char (UTS 46)."""
    try:
        decoded = label[4:].encode("ascii").decode("punycode")
    except (UnicodeError, ValueError):
        return False
    return bool(decoded) and not decoded.isascii()


def _is_ascii_host(host: str) -> bool:
    labels = host.split(".")
    if labels[-1] == "" and len(labels) > 1:
        labels.pop()  # one trailing dot is a fully qualified name
    if any(_HOST_LABEL.fullmatch(label) is None for label in labels):
        return False
    if _NUMERIC_LABEL.fullmatch(labels[-1]):
        return _is_ipv4(labels)  # a browser parses any host ending in a number as IPv4
    return all(
        not label.lower().startswith("xn--") or _is_punycode_label(label) for label in labels
    )


def _is_host(host: str) -> bool:
    if not host:
        return False
    if host.isascii():
        return _is_ascii_host(host)
    try:
        ascii_host = host.encode("idna").decode("ascii")  # IDNA: what the browser would request
    except (UnicodeError, ValueError):
        return False
    return bool(ascii_host) and _is_ascii_host(ascii_host)


def _is_ipv6_literal(literal: str) -> bool:
    if "%" in literal:  # zone ids are not allowed in URLs
        return False
    try:
        ipaddress.IPv6Address(literal)
    except ValueError:
        return False
    return True


def _is_port(port: str) -> bool:
    """Empty (`https://x:/`) or a decimal number up to 65535."""
    return _PORT.fullmatch(port) is not None and (not port or int(port) <= _MAX_PORT)


def _is_authority(authority: str) -> bool:
    """`host[:port]` with no userinfo: any `@` at all is refused."""
    if "@" in authority:
        return False
    if authority.startswith("["):
        literal, bracket, after = authority[1:].partition("]")
        if not bracket or not _is_ipv6_literal(literal):
            return False
        return not after or (after.startswith(":") and _is_port(after[1:]))
    host, colon, port = authority.partition(":")
    return _is_host(host) and (not colon or _is_port(port))


def is_portable_url(value: object) -> bool:
    """True for a root-relative path (`/x`, never `//`) or an http(s) URL without credentials.

    Rejected: over 2,048 chars, any C0 control, DEL or backslash, leading or
    trailing spaces, other schemes in any case, `https:host` without `//`,
    empty or malformed hosts, userinfo, ports past 65535. Never raises.
    """
    try:
        return _is_portable_url(value)
    except Exception:  # a validator of untrusted input never raises
        return False


def _is_portable_url(value: object) -> bool:
    if not isinstance(value, str) or not value:
        return False
    if js_length(value) > PORTABLE_URL_MAX_CHARS or URL_FORBIDDEN_CHARS.search(value):
        return False
    if value[0] == " " or value[-1] == " ":  # a browser strips these: not the URL as written
        return False
    if value[0] == "/":
        return value[1:2] != "/"
    scheme = _HTTP_SCHEME.match(value)
    if scheme is None:
        return False
    rest = value[scheme.end() :]
    end = _AUTHORITY_END.search(rest)
    return _is_authority(rest if end is None else rest[: end.start()])


def _portable_url(value: str) -> str:
    if not is_portable_url(value):
        raise ValueError("not a portable URL")
    return value


PortableUrl = Annotated[str, AfterValidator(_portable_url)]
"""A link target a renderer may make live: root-relative or http(s) without credentials."""


class Source(StrictWireModel):
    """One cited source; `url` absent means it is shown but cannot be opened."""

    id: SafeId
    title: Annotated[str, js_chars(1, SOURCE_TITLE_MAX_CHARS)]
    url: PortableUrl | None = None
    snippet: Annotated[str, js_chars(1, SOURCE_SNIPPET_MAX_CHARS)] | None = None

    @field_validator("url", "snippet", mode="before")
    @classmethod
    def _absent_not_null(cls, value: object) -> object:
        # Optional means absent on the wire; an explicit null is not a url or snippet.
        if value is None:
            raise ValueError("null is not allowed")
        return value


class SourceListProps(StrictWireModel):
    """Props of the standard `source-list` component (strict: unknown fields are invalid)."""

    label: Annotated[str, js_chars(1, SOURCE_LIST_LABEL_MAX_CHARS)]
    sources: list[Source] = Field(min_length=1, max_length=SOURCE_LIST_MAX_SOURCES)

    @model_validator(mode="after")
    def _unique_ids(self) -> "SourceListProps":
        ids = [source.id for source in self.sources]
        if len(set(ids)) != len(ids):
            raise ValueError("source ids must be unique")
        return self


def source_list_props_or_none(value: Any) -> SourceListProps | None:
    """Validated props, or None; never raises."""
    if isinstance(value, SourceListProps):
        return value
    if not isinstance(value, dict):
        return None
    try:
        return SourceListProps.model_validate(value)
    except (ValidationError, ValueError, TypeError, RecursionError):
        return None
    except Exception:  # hostile objects may raise anything; inert
        return None


def source_list_fallback(props: SourceListProps | dict[str, Any]) -> str:
    """The semantic fallback text: `<label>: <title>, <title>.`

    Raises ValueError on invalid props (callers pass props the manifest validated).
    """
    parsed = source_list_props_or_none(props)
    if parsed is None:
        raise ValueError("invalid source-list props")
    return f"{parsed.label}: {', '.join(source.title for source in parsed.sources)}."


def is_valid_source_open(props: SourceListProps | dict[str, Any], value: object) -> bool:
    """The `open` event rule: `value` is the id of a source that has a url. Never raises."""
    parsed = source_list_props_or_none(props)
    if parsed is None or type(value) is not str:
        return False
    return any(source.id == value and source.url is not None for source in parsed.sources)
