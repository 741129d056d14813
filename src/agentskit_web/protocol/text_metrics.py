"""String measures as the wire contracts define them.

The contracts were written for JavaScript: a "char" is a UTF-16 code unit and
`trim()` strips JavaScript's whitespace set, which differs from Python's
(`str.strip()` also strips U+001C..U+001F and U+0085, and keeps U+FEFF).
Using Python's notions would make limits and line handling drift from the
TypeScript implementations by exactly the characters attackers like.
"""

import re

# ECMAScript WhiteSpace + LineTerminator code points.
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
# A high surrogate directly followed by a low one: JavaScript iterates the two as one code point.
_SPLIT_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def js_length(text: str) -> int:
    """Length of `text` in UTF-16 code units, as JavaScript's `.length` reports it.

    Encoding to UTF-16 runs in C (a regex count of astral characters was the decoder's
    biggest cost in the page); `surrogatepass` counts a lone surrogate as one unit, as
    JavaScript does.
    """
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) >> 1


def js_length_within(text: str, limit: int) -> bool:
    """`js_length(text) <= limit`, without measuring when the answer is already known.

    A code point is at most two UTF-16 units, so a string of `limit // 2` code points or
    fewer always fits: most deltas on the hot path are answered by one `len`.
    """
    return len(text) * 2 <= limit or js_length(text) <= limit


def code_point_length(text: str) -> int:
    """Length of `text` in code points, as JavaScript's `[...text].length` reports it.

    A Python str already holds one item per code point; the only difference
    is a surrogate pair kept as two items (possible after `surrogatepass`
    decoding), which JavaScript's string iterator counts once. A lone
    surrogate counts one in both.
    """
    if text.isascii():
        return len(text)
    try:
        text.encode("utf-8")  # in C; fails only when a surrogate is present
    except UnicodeEncodeError:
        return len(text) - len(_SPLIT_PAIR.findall(text))
    return len(text)


def js_trim(text: str) -> str:
    """`String.prototype.trim` semantics (not `str.strip`)."""
    return text.strip(_JS_WHITESPACE)


def js_is_blank(text: str) -> bool:
    """True when `text` is empty after JavaScript trimming."""
    return not js_trim(text)


def utf8_length(text: str) -> int:
    """UTF-8 byte length; lone surrogates count as the 3 bytes of U+FFFD, as TextEncoder does."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def js_slice(text: str, max_units: int) -> str:
    """Cut `text` to at most `max_units` UTF-16 code units without splitting a pair."""
    if js_length_within(text, max_units):
        return text
    units = 0
    for index, char in enumerate(text):
        width = 2 if ord(char) > 0xFFFF else 1
        if units + width > max_units:
            return text[:index]
        units += width
    return text


def split_text(text: str, limit: int) -> list[str]:
    """Cut `text` into pieces of at most `limit` UTF-16 units, never inside a surrogate pair.

    Linear in the length of `text`. A piece is never empty: with `limit` 1 an astral
    character still goes out whole (two units), as no valid cut exists inside it.
    """
    if text.isascii():
        return [text[start : start + limit] for start in range(0, len(text), limit)]
    pieces: list[str] = []
    start = 0
    while start < len(text):
        piece = text[start : start + limit]
        if not js_length_within(piece, limit):
            piece = js_slice(piece, limit) or piece[:1]
        pieces.append(piece)
        start += len(piece)
    return pieces
