"""The user docs are the demo corpus: their links, anchors and FAQ must be consistent."""

import json
import re
from pathlib import Path, PurePosixPath

import pytest

from agentskit_web.docs_text import HeadingSlugger, page_path_for
from agentskit_web.indexing.docs_folder import parse_markdown
from agentskit_web.protocol import normalize_knowledge_key
from agentskit_web.protocol.identifiers import is_safe_id
from agentskit_web.protocol.limits import (
    KNOWLEDGE_ANSWER_MAX_CHARS,
    KNOWLEDGE_MAX_CITATIONS,
    KNOWLEDGE_MAX_MATCH_VALUES,
)

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = [
    "getting-started.md",
    "embedding.md",
    "configuration.md",
    "protocol.md",
    "security.md",
    "troubleshooting.md",
    "offline.md",
    "testing.md",
    "deployment.md",
]


def anchors_by_path() -> dict[str, set[str]]:
    """Published path -> every heading anchor of that page (h1 included, as a site renders it)."""
    result: dict[str, set[str]] = {}
    for file in DOCS.rglob("*.md"):
        page = parse_markdown(file.read_text(encoding="utf-8"), file.stem)
        slugger = HeadingSlugger()
        anchors = {slugger.slug(s.heading) for s in page.sections if s.heading}
        result[page_path_for(PurePosixPath(file.relative_to(DOCS).as_posix()))] = anchors
    return result


@pytest.mark.parametrize("name", PAGES)
def test_every_user_page_exists_with_a_title_and_sections(name: str) -> None:
    text = (DOCS / name).read_text(encoding="utf-8")
    page = parse_markdown(text, name)
    assert page.title and page.title != name
    assert sum(1 for s in page.sections if s.level == 2) >= 3
    assert "TODO" not in text and "PLACEHOLDER" not in text


@pytest.mark.parametrize("name", PAGES)
def test_links_between_pages_resolve_to_real_headings(name: str) -> None:
    anchors = anchors_by_path()
    text = (DOCS / name).read_text(encoding="utf-8")
    for target, anchor in re.findall(r"\]\(([a-z-]+\.md)(?:#([^)]+))?\)", text):
        path = page_path_for(PurePosixPath(target))
        assert path in anchors, f"{name}: link to missing page {target}"
        if anchor:
            assert anchor in anchors[path], f"{name}: {target}#{anchor} has no such heading"


def test_faq_entries_fit_the_knowledge_contract_and_cite_real_anchors() -> None:
    faq = json.loads((DOCS / "faq.json").read_text(encoding="utf-8"))
    site = json.loads((DOCS / "site.json").read_text(encoding="utf-8"))
    assert faq["siteId"] == site["siteId"] and is_safe_id(faq["artifactId"])
    anchors = anchors_by_path()
    ids = [entry["id"] for entry in faq["entries"]]
    assert len(ids) == len(set(ids)) and all(is_safe_id(i) for i in ids)
    all_keys: list[str] = []
    for entry in faq["entries"]:
        values = entry["match"]["values"]
        assert entry["match"]["type"] == "exact"
        assert 1 <= len(values) <= KNOWLEDGE_MAX_MATCH_VALUES
        keys = [normalize_knowledge_key(v) for v in values]
        assert len(keys) == len(set(keys))
        all_keys.extend(keys)
        answer = entry["answer"]
        assert 1 <= len(answer["markdown"]) <= KNOWLEDGE_ANSWER_MAX_CHARS
        assert len(answer["citations"]) <= KNOWLEDGE_MAX_CITATIONS
        for citation in answer["citations"]:
            path, _, anchor = citation["href"].partition("#")
            assert path in anchors, citation["href"]
            assert anchor in anchors[path], citation["href"]
    assert len(all_keys) == len(set(all_keys)), "two entries answer the same question"
