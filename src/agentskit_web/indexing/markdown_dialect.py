"""The MkDocs / Material Markdown dialect, read as the text a reader sees.

`docs_folder.parse_markdown` parses CommonMark (docs_text.DOCS_MARKDOWN), so a
docs folder written for MkDocs Material would be misread: an admonition's
indented body is an indented code block, `{ #id }` is part of the heading,
`--8<-- "file.py"` and `{% include %}` are quoted as prose, YAML front matter
is a heading. `to_commonmark` rewrites those constructs first, line by line,
never inside fenced code (except include lines, which a build replaces even
there). A heading's `{ #id .class }` is read by docs_text.take_attr_list, which
the demo build shares, so the id is the anchor on both sides:

- front matter (a `---` block on the first line) is dropped;
- admonitions (`!!! note "Title"`, collapsible `???` / `???+`) and content
  tabs (`=== "Tab"`) become their title as a paragraph followed by their
  body, dedented, and read again (they nest);
- include and macro lines are dropped: snippets (`--8<-- "file"`), `{* file *}`,
  mkdocstrings (`::: module.Name` and its indented options), Jinja
  (`{% ... %}` and `{{ ... }}`, outside code), block attribute lists
  (`{ .annotate }` on a line of its own);

and `strip_html` applies to the parsed prose: it drops HTML tags
(`<abbr title=..>CORS</abbr>` -> `CORS`; only known element names, so
`List<int>` stays).

`MkDocsSlugger` is Python-Markdown's `toc` rule, which MkDocs uses: ASCII-fold,
drop what is not a word character, space or `-`, spaces to `-`, a repeated
id gets `_1`, `_2`, ...
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

FRONT_MATTER_MAX_LINES: Final = 200
"""A `---` block longer than this at the top is not front matter (a thematic break instead)."""
INDENT: Final = 4
"""Body indentation of admonitions and tabs (Python-Markdown's)."""

_CONTAINER = re.compile(
    r"""^(?P<indent>[ ]*)(?P<marker>!!!|\?\?\?\+?|===\+?)[ \t]*
        (?P<kind>[\w-]+(?:[ \t]+[\w-]+)*)?[ \t]*(?:"(?P<title>[^"]*)")?[ \t]*$""",
    re.VERBOSE,
)
_FENCE = re.compile(r"^(?P<indent>[ ]*)(?P<fence>`{3,}|~{3,})")
_SNIPPET_LINE = re.compile(r"^[ \t]*(?:;?-{2,}8<-{2,}.*|\{\*.*\*\})[ \t]*$")
"""A build-time include (pymdownx.snippets, `{* file *}` macros): replaced by the build, even
inside a code block, so never text or code of its own."""
_DIRECTIVE_LINE = re.compile(r"^[ \t]*(?::::[ \t]+[\w.:-]+.*|\{:?[ \t]*[#.][^{}]*\})[ \t]*$")
"""mkdocstrings' `::: module.Name` and a block attribute list (`{ .annotate }`)."""
_JINJA = re.compile(r"\{%.*?%\}|\{\{.*?\}\}|\{#.*?#\}", re.DOTALL)
_ELEMENT_NAMES: Final = """a abbr address article aside audio b bdi bdo blockquote br button
    caption center cite
    code col colgroup data dd del details dfn div dl dt em figcaption figure font footer h1 h2
    h3 h4 h5 h6 header hr i iframe img input ins kbd label legend li mark meta nav object ol
    p picture pre q s samp section small source span strong sub summary sup table tbody td
    tfoot th thead time tr u ul var video wbr"""
HTML_ELEMENTS: Final = frozenset(_ELEMENT_NAMES.split())
"""Element names dropped from prose (anything else in angle brackets is text: `<name>`)."""
_TAG = re.compile(r"<!--.*?-->|</?(?P<name>[A-Za-z][\w-]*)(?:\s[^<>]*)?/?>", re.DOTALL)


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _front_matter_end(lines: list[str]) -> int:
    """How many lines the front matter takes (0 when there is none)."""
    if not lines or lines[0].strip() != "---":
        return 0
    for number, line in enumerate(lines[1 : FRONT_MATTER_MAX_LINES + 1], start=1):
        if line.strip() in ("---", "..."):
            return number + 1
    return 0


def _dedent(lines: list[str], by: int) -> list[str]:
    return [line[min(by, _indent_of(line)) :] for line in lines]


def _rewrite(lines: list[str]) -> list[str]:
    out: list[str] = []
    fence: str | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if fence is not None:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
            if not _SNIPPET_LINE.match(line):
                out.append(line)
            continue
        opened = _FENCE.match(line)
        if opened:
            fence = opened.group("fence")
            out.append(line)
            continue
        container = _CONTAINER.match(line)
        if container:
            indent = len(container.group("indent"))
            body: list[str] = []
            while index < len(lines) and (
                not lines[index].strip() or _indent_of(lines[index]) >= indent + INDENT
            ):
                body.append(lines[index])
                index += 1
            title = container.group("title")
            if title is None and not container.group("marker").startswith("="):
                title = (container.group("kind") or "").split(" ")[0].capitalize()
            if title:
                out.extend([" " * indent + title, ""])
            out.extend(_rewrite(_dedent(body, INDENT)))
            out.append("")
            continue
        if _SNIPPET_LINE.match(line) or _DIRECTIVE_LINE.match(line):
            if line.strip().startswith(":::"):
                # mkdocstrings' options block: the indented lines that follow the directive.
                while index < len(lines) and (
                    not lines[index].strip() or _indent_of(lines[index]) > _indent_of(line)
                ):
                    index += 1
            continue
        out.append(line)
    return out


def _drop_jinja_outside_fences(text: str) -> str:
    pieces = re.split(r"(^[ ]*(?:`{3,}|~{3,})[^\n]*\n.*?^[ ]*(?:`{3,}|~{3,})[ \t]*$)", text,
                      flags=re.DOTALL | re.MULTILINE)  # fmt: skip
    return "".join(
        piece if number % 2 else _JINJA.sub("", piece) for number, piece in enumerate(pieces)
    )


def to_commonmark(text: str) -> str:
    """The page with the dialect's constructs turned into CommonMark a reader would see."""
    lines = text.replace("\r\n", "\n").split("\n")
    lines = lines[_front_matter_end(lines) :]
    return _drop_jinja_outside_fences("\n".join(_rewrite(lines)))


def strip_html(text: str) -> str:
    """Prose with HTML elements' tags (and comments) dropped, their text kept."""

    def replace(match: re.Match[str]) -> str:
        name = match.group("name")
        if name is None or name.lower() in HTML_ELEMENTS:
            return ""
        return match.group(0)

    return _TAG.sub(replace, text)


def mkdocs_slugify(text: str) -> str:
    """Python-Markdown's toc slug (MkDocs' default): ASCII words and `-`, spaces to `-`."""
    value = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    value = re.sub(r"[^\w\s-]", "", value).strip().lower()
    return re.sub(r"[-\s]+", "-", value)


class MkDocsSlugger:
    """Unique heading ids the way MkDocs writes them: a repeat gets `_1`, `_2`, ..."""

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def reserve(self, slug: str) -> None:
        self._seen.add(slug)

    def slug(self, text: str) -> str:
        candidate = mkdocs_slugify(text)
        while candidate in self._seen or not candidate:
            numbered = re.match(r"^(.*)_([0-9]+)$", candidate)
            if numbered:
                candidate = f"{numbered.group(1)}_{int(numbered.group(2)) + 1}"
            else:
                candidate = f"{candidate}_1"
        self._seen.add(candidate)
        return candidate
