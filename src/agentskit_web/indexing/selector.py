"""A small CSS selector subset for naming a page's main content and the parts to drop.

Supported: a tag (`article`), `#id`, `.class`, `[attr]`, `[attr=value]`,
`[attr^=prefix]`, `[attr*=part]` (values quoted or not), compounds of those
(`div.body[role=main]`), the descendant combinator (`main .md-content`, a space) and lists (`a, b`).
That covers every theme rule in themes.py and what a docs owner passes to
`--selector`; anything else (`>`, `:not()`, `~`) is refused with a
`SelectorError` that says which part is unsupported, instead of silently
matching nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from .html_tree import Element

SELECTOR_MAX_CHARS: Final = 500
"""Longest selector accepted (a command-line option, not a stylesheet)."""

_SIMPLE = re.compile(
    r"""
    (?P<tag>[a-zA-Z][a-zA-Z0-9-]*|\*)
  | \#(?P<id>[\w-]+)
  | \.(?P<cls>[\w-]+)
  | \[\s*(?P<attr>[\w:-]+)\s*
      (?:(?P<op>[*^]?=)\s*(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<bare>[\w.-]+))\s*)?\]
    """,
    re.VERBOSE,
)


class SelectorError(ValueError):
    """A selector outside the supported subset; the message names the offending part."""


@dataclass(frozen=True, slots=True)
class _Compound:
    tag: str | None
    ids: tuple[str, ...]
    classes: tuple[str, ...]
    attrs: tuple[tuple[str, str, str | None], ...]
    """(name, operator, value): operator `=`, `^=`, `*=`, or `` with no value (presence)."""

    def matches(self, element: Element) -> bool:
        if self.tag is not None and element.tag != self.tag:
            return False
        if any(element.attrs.get("id") != value for value in self.ids):
            return False
        if self.classes and not set(self.classes) <= element.classes:
            return False
        for name, operator, value in self.attrs:
            actual = element.attrs.get(name)
            if actual is None:
                return False
            if value is None:
                continue
            if operator == "=" and actual != value:
                return False
            if operator == "^=" and not actual.startswith(value):
                return False
            if operator == "*=" and value not in actual:
                return False
        return True


def _compound(text: str, whole: str) -> _Compound:
    tag: str | None = None
    ids: list[str] = []
    classes: list[str] = []
    attrs: list[tuple[str, str, str | None]] = []
    position = 0
    while position < len(text):
        match = _SIMPLE.match(text, position)
        if match is None or (match.group("tag") and position != 0):
            raise SelectorError(f"unsupported selector part {text[position:]!r} in {whole!r}")
        if match.group("tag"):
            tag = None if match.group("tag") == "*" else match.group("tag").lower()
        elif match.group("id"):
            ids.append(match.group("id"))
        elif match.group("cls"):
            classes.append(match.group("cls"))
        else:
            value = match.group("dq")
            if value is None:
                value = match.group("sq")
            if value is None:
                value = match.group("bare")
            attrs.append((match.group("attr").lower(), match.group("op") or "", value))
        position = match.end()
    return _Compound(tag, tuple(ids), tuple(classes), tuple(attrs))


@dataclass(frozen=True, slots=True)
class Selector:
    """A parsed selector list; `select(root)` gives matching elements in document order."""

    source: str
    alternatives: tuple[tuple[_Compound, ...], ...]
    _tags: frozenset[str] = frozenset()
    _classes: frozenset[str] = frozenset()
    _ids: frozenset[str] = frozenset()
    _attrs: frozenset[str] = frozenset()
    _any: bool = False

    def __post_init__(self) -> None:
        # A quick filter: an element can only match when it has the tag, a class, the id or
        # an attribute that some alternative's last compound requires (most elements have none).
        tags, classes, ids, attrs = set(), set(), set(), set()
        catch_all = False
        for chain in self.alternatives:
            last = chain[-1]
            if last.ids:
                ids.add(last.ids[0])
            elif last.classes:
                classes.add(last.classes[0])
            elif last.attrs:
                attrs.add(last.attrs[0][0])
            elif last.tag is not None:
                tags.add(last.tag)
            else:
                catch_all = True
        object.__setattr__(self, "_tags", frozenset(tags))
        object.__setattr__(self, "_classes", frozenset(classes))
        object.__setattr__(self, "_ids", frozenset(ids))
        object.__setattr__(self, "_attrs", frozenset(attrs))
        object.__setattr__(self, "_any", catch_all)

    def matches(self, element: Element) -> bool:
        if not (
            self._any
            or element.tag in self._tags
            or not self._classes.isdisjoint(element.classes)
            or element.attrs.get("id") in self._ids
            or not self._attrs.isdisjoint(element.attrs)
        ):
            return False
        return any(_matches_chain(chain, element) for chain in self.alternatives)

    def select(self, root: Element) -> list[Element]:
        return [element for element in root.iter() if self.matches(element)]

    def first(self, root: Element) -> Element | None:
        return self.first_in(root.iter())

    def first_in(self, elements: Iterable[Element]) -> Element | None:
        """The first match among elements already listed in document order."""
        for element in elements:
            if self.matches(element):
                return element
        return None


def _matches_chain(chain: tuple[_Compound, ...], element: Element) -> bool:
    if not chain[-1].matches(element):
        return False
    remaining = list(chain[:-1])
    for ancestor in element.ancestors():
        if not remaining:
            break
        if remaining[-1].matches(ancestor):
            remaining.pop()
    return not remaining


def parse_selector(text: str) -> Selector:
    """Parse the supported subset; raises `SelectorError` for anything else."""
    if len(text) > SELECTOR_MAX_CHARS:
        raise SelectorError(f"selector longer than {SELECTOR_MAX_CHARS} characters")
    alternatives: list[tuple[_Compound, ...]] = []
    for part in text.split(","):
        # Spaces inside [attr = "v a l"] must not split the compound: protect brackets first.
        pieces = re.findall(r"(?:\[[^\]]*\]|[^\s\[])+", part)
        if not pieces:
            raise SelectorError(f"empty selector in {text!r}")
        alternatives.append(tuple(_compound(piece, text) for piece in pieces))
    return Selector(text, tuple(alternatives))
