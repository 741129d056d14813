"""Compile a FAQ file into the knowledge artifact the widget answers from (PROTOCOL.md 8).

Input (JSON; docs/faq.json in the demo): `{"siteId", "artifactId",
"expiresAt"?, "entries": [...]}` with entries already in the
`agentskit.chat.knowledge` v1 entry shape (id, kind, label, match {type
"exact", values}, answer {markdown, citations [{id, title, href}]}).
The compiler adds `protocol`, `version`, `generatedAt` and the sha256
`contentHash`, then proves the result with `parse_knowledge_artifact`, the
same decoder the page runs, so a file the build writes is one the widget
accepts.

`generatedAt` is the FAQ file's modification time (or `SOURCE_DATE_EPOCH`
when set): an unchanged FAQ compiles to the same bytes, so an incremental
build does not rewrite it, and the page never sees a "new" artifact for
nothing.

A bad FAQ raises `FaqError` naming the file and the failing fields (paths
such as `entries[2].match.values`, never the author's text). When the
caller passes the site's pages and their heading ids, a citation that points
at one of those pages must name an existing page and heading, the rule the
backend's cited sources follow too.
"""

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote, urlsplit

from pydantic import ValidationError

from ..protocol.dates import format_memory_datetime
from ..protocol.diagnostics import ProtocolError
from ..protocol.knowledge import (
    KNOWLEDGE_PROTOCOL,
    KNOWLEDGE_PROTOCOL_VERSION,
    KnowledgeArtifact,
    compute_knowledge_hash,
    parse_knowledge_artifact,
)
from ..protocol.wire_json import JSON_INVALID, parse_json

SOURCE_FIELDS: Final = ("siteId", "artifactId", "expiresAt", "entries")
_PLACEHOLDER_HASH: Final = "sha256:" + "0" * 64
_MAX_REPORTED: Final = 8


class FaqError(ValueError):
    """The FAQ cannot become a valid artifact; the message says where."""


@dataclass(frozen=True)
class CompiledKnowledge:
    """The artifact's bytes and what a build log wants to say about it."""

    data: bytes
    content_hash: str
    entries: int
    questions: int


def generated_at(source: Path) -> str:
    """`SOURCE_DATE_EPOCH` (reproducible builds) or the file's mtime, as an ISO instant."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    seconds = float(epoch) if epoch.isdigit() else source.stat().st_mtime
    return format_memory_datetime(datetime.fromtimestamp(int(seconds), UTC))


def _read(source: Path) -> dict[str, Any]:
    try:
        raw = source.read_bytes()
    except OSError as error:
        raise FaqError(f"{source} cannot be read: {error.strerror}") from error
    document = parse_json(raw)
    if document is JSON_INVALID:
        try:
            json.loads(raw)
        except ValueError as error:
            where = getattr(error, "lineno", None)
            column = getattr(error, "colno", None)
            at = f" (line {where}, column {column})" if where else ""
            raise FaqError(f"{source} is not valid JSON{at}") from None
        raise FaqError(f"{source} is not strict JSON: a duplicate key, NaN or too deep")
    if not isinstance(document, dict):
        raise FaqError(f"{source} must hold a JSON object with siteId, artifactId and entries")
    unknown = sorted(set(document) - set(SOURCE_FIELDS))
    if unknown:
        raise FaqError(f"{source}: unknown top-level field(s) {', '.join(unknown)}")
    if not isinstance(document.get("entries"), list):
        raise FaqError(f"{source}: `entries` must be a list of knowledge entries")
    return document


def _location(loc: tuple[Any, ...], entries: list[Any]) -> str:
    """`entries[2] (id "cdn").match.values` from a pydantic error location."""
    text = ""
    for index, part in enumerate(loc):
        if isinstance(part, int):
            text += f"[{part}]"
            if index == 1 and loc[0] == "entries" and part < len(entries):
                entry = entries[part]
                if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                    text += f" (id {json.dumps(entry['id'][:64])})"
        else:
            text += ("." if text else "") + str(part)
    return text or "(top)"


def _field_problems(error: ValidationError, entries: list[Any]) -> str:
    problems: list[str] = []
    for issue in error.errors(include_input=False, include_url=False):
        line = f"{_location(tuple(issue['loc']), entries)}: {issue['msg']}"
        if line not in problems:
            problems.append(line)
    more = len(problems) - _MAX_REPORTED
    shown = problems[:_MAX_REPORTED] + ([f"... and {more} more"] if more > 0 else [])
    return "\n  ".join(shown)


def _candidate(document: Mapping[str, Any], when: str) -> dict[str, Any]:
    candidate: dict[str, Any] = {
        "protocol": KNOWLEDGE_PROTOCOL,
        "version": KNOWLEDGE_PROTOCOL_VERSION,
        "artifactId": document.get("artifactId"),
        "siteId": document.get("siteId"),
        "contentHash": _PLACEHOLDER_HASH,
        "generatedAt": when,
        "entries": document.get("entries"),
    }
    if "expiresAt" in document:
        candidate["expiresAt"] = document["expiresAt"]
    return candidate


def check_citations(
    artifact: KnowledgeArtifact, pages: Mapping[str, frozenset[str]], source: Path
) -> None:
    """Citations to this site's pages must name a published page and one of its heading ids."""
    broken: list[str] = []
    for entry in artifact.entries:
        for citation in entry.answer.citations:
            parts = urlsplit(citation.href)
            if parts.scheme or parts.netloc or not parts.path.startswith("/docs/"):
                continue  # another site, or a path this build does not publish: not checked
            anchors = pages.get(parts.path)
            anchor = unquote(parts.fragment)
            if anchors is None:
                broken.append(f"entry {entry.id}: {citation.href} is not a page of this site")
            elif anchor and anchor not in anchors:
                broken.append(f"entry {entry.id}: {citation.href} names no heading of that page")
    if broken:
        raise FaqError(f"{source}: citations that would not land:\n  " + "\n  ".join(broken))


def compile_faq(
    source: Path,
    *,
    site_id: str | None = None,
    pages: Mapping[str, frozenset[str]] | None = None,
    when: str | None = None,
) -> CompiledKnowledge:
    """The verified artifact for `source`; raises FaqError with a clear message.

    `site_id` (the backend site config's) must equal the FAQ's `siteId` when
    given; `pages` maps published paths (`/docs/x.html`) to their heading ids;
    `when` overrides `generatedAt` (tests).
    """
    document = _read(source)
    if site_id is not None and document.get("siteId") != site_id:
        raise FaqError(f"{source}: siteId must be the site config's siteId ({site_id!r})")
    candidate = _candidate(document, when or generated_at(source))
    try:
        KnowledgeArtifact.model_validate(candidate)
    except ValidationError as error:
        problems = _field_problems(error, document["entries"])
        raise FaqError(f"{source} is not a valid knowledge FAQ:\n  {problems}") from None
    try:
        candidate["contentHash"] = compute_knowledge_hash(candidate)
    except ProtocolError as error:  # bounds checked by the decoder (entries, size...)
        raise FaqError(f"{source}: {error.code}: {error.message}") from None
    artifact = KnowledgeArtifact.model_validate(candidate)
    text = json.dumps(artifact.to_wire(), ensure_ascii=False, separators=(",", ":")) + "\n"
    decoded = parse_knowledge_artifact(text)
    if not decoded.ok:
        diagnostic = decoded.diagnostic
        detail = f"{diagnostic.code}: {diagnostic.message}" if diagnostic else "rejected"
        raise FaqError(f"{source}: the compiled artifact is refused ({detail})")
    verified: KnowledgeArtifact = decoded.artifact
    if pages is not None:
        check_citations(verified, pages, source)
    questions = sum(len(entry.match.values) for entry in verified.entries)
    return CompiledKnowledge(
        text.encode("utf-8"), verified.content_hash, len(verified.entries), questions
    )
