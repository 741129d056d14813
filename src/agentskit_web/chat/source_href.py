"""Safe link targets for `cite` sources (PROTOCOL.md 5): a path or URL -> a PortableUrl or None.

A citation link is the classic XSS vector of an Ask widget, so the rule is
"build it, then prove it": a relative path is resolved against a placeholder
origin with `urllib.parse` and must stay on that origin; an absolute URL must
be http(s) with a host and no credentials. Every component is percent-encoded
(existing `%XX` escapes are kept, as a browser's URL parser keeps them), and
the result must pass `is_portable_url`, the same check the `source-list`
manifest applies later, so a frame the projection builds is never rejected
downstream. Anything doubtful drops the source; nothing here raises.

Deliberate differences from the reference (which uses the WHATWG parser):
controls, DEL and backslashes drop the source instead of being stripped or
read as `/`; `https:host` (no `//`) is refused instead of read as
`https://host/`; a result starting with `//` (from `/..//host`) is refused.
"""

import re
from typing import Final
from urllib.parse import SplitResult, quote, urljoin, urlsplit

from ..protocol.limits import PORTABLE_URL_MAX_CHARS
from ..protocol.source_list import URL_FORBIDDEN_CHARS, URL_SCHEME, is_portable_url
from ..protocol.text_metrics import js_length

_PLACEHOLDER_SCHEME: Final = "https"
_PLACEHOLDER_HOST: Final = "agentskit.invalid"
_PLACEHOLDER_ORIGIN: Final = f"{_PLACEHOLDER_SCHEME}://{_PLACEHOLDER_HOST}/"

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}

# RFC 3986 pchar minus '%' (handled separately so valid escapes survive).
_PATH_SAFE: Final = "-._~!$&'()*+,;=:@/"
_QUERY_SAFE: Final = _PATH_SAFE + "?"
_UNSAFE_PATH: Final = re.compile(r"%(?![0-9A-Fa-f]{2})|[^A-Za-z0-9%" + re.escape(_PATH_SAFE) + "]")
_UNSAFE_QUERY: Final = re.compile(
    r"%(?![0-9A-Fa-f]{2})|[^A-Za-z0-9%" + re.escape(_QUERY_SAFE) + "]"
)


def _escape(match: "re.Match[str]") -> str:
    return quote(match.group(), safe="")


def _encode(component: str, unsafe: "re.Pattern[str]") -> str:
    """Percent-encode what is not allowed raw; raises UnicodeEncodeError on lone surrogates."""
    return unsafe.sub(_escape, component)


def _suffix(parts: SplitResult, fragment: str | None) -> str:
    """`?query#fragment` as a browser would serialise it (empty parts omitted)."""
    query = _encode(parts.query, _UNSAFE_QUERY)
    chosen = parts.fragment if fragment is None else fragment
    encoded_fragment = _encode(chosen, _UNSAFE_QUERY)
    return (f"?{query}" if query else "") + (f"#{encoded_fragment}" if encoded_fragment else "")


def _relative_href(path: str, fragment: str | None) -> str | None:
    rooted = path if path.startswith("/") else f"/{path}"
    parts = urlsplit(urljoin(_PLACEHOLDER_ORIGIN, rooted))
    if parts.scheme != _PLACEHOLDER_SCHEME or parts.netloc != _PLACEHOLDER_HOST:
        return None
    return _encode(parts.path or "/", _UNSAFE_PATH) + _suffix(parts, fragment)


def _authority(parts: SplitResult) -> str | None:
    """`host[:port]` with a default port dropped; None for credentials or no host."""
    if "@" in parts.netloc:
        return None
    host = parts.hostname
    if not host:
        return None
    port = parts.port  # raises ValueError on a malformed port
    if not host.isascii():
        host = host.encode("idna").decode("ascii")
    shown = f"[{host}]" if ":" in host else host
    if port is None or port == _DEFAULT_PORTS.get(parts.scheme.lower()):
        return shown
    return f"{shown}:{port}"


def _absolute_href(path: str, fragment: str | None) -> str | None:
    parts = urlsplit(path)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not path[len(scheme) + 1 :].startswith("//"):
        return None
    authority = _authority(parts)
    if authority is None:
        return None
    return (
        f"{scheme}://{authority}"
        + _encode(parts.path or "/", _UNSAFE_PATH)
        + _suffix(parts, fragment)
    )


def safe_source_href(path: str, anchor: str | None = None) -> str | None:
    """A PortableUrl for a cited `path` (+ optional `anchor`), or None when it is not safe.

    `anchor` replaces any fragment in `path` (one leading `#` is ignored; an
    empty anchor removes the fragment) and is percent-encoded, controls and
    backslashes included. Never raises.
    """
    try:
        fragment = None if anchor is None else anchor.removeprefix("#")
        if URL_FORBIDDEN_CHARS.search(path):
            return None
        absolute = URL_SCHEME.match(path) is not None or path.startswith("//")
        href = _absolute_href(path, fragment) if absolute else _relative_href(path, fragment)
    except (ValueError, UnicodeError, TypeError, AttributeError):
        return None
    if href is None or js_length(href) > PORTABLE_URL_MAX_CHARS or not is_portable_url(href):
        return None
    return href
