"""The FAQ compiler behind `agentskit-web build`: valid artifact, verified hash, clear failures."""

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentskit_web.build import files as build_files
from agentskit_web.build import pages as build_pages
from agentskit_web.build.knowledge import FaqError, compile_faq, generated_at
from agentskit_web.build.pages import SITE_FILES
from agentskit_web.protocol.knowledge import (
    DETERMINISTIC_HASH_MISMATCH,
    answer_locally,
    compute_knowledge_hash,
    parse_knowledge_artifact,
)

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
WHEN = "2026-01-02T03:04:05.000Z"
PAGES = {"/docs/a.html": frozenset({"a", "install"}), "/docs/b.html": frozenset({"b"})}


def entry(entry_id: str = "install", **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": entry_id,
        "kind": "document",
        "label": "How do I install it?",
        "match": {"type": "exact", "values": [f"How do I install {entry_id}?"]},
        "answer": {
            "markdown": "Run `make demo`.",
            "citations": [{"id": "c1", "title": "A › Install", "href": "/docs/a.html#install"}],
        },
    }
    base.update(changes)
    return base


def faq(tmp_path: Path, document: Any, name: str = "faq.json") -> Path:
    path = tmp_path / name
    text = document if isinstance(document, str) else json.dumps(document)
    path.write_text(text, encoding="utf-8")
    return path


def valid(**changes: Any) -> dict[str, Any]:
    return {"siteId": "site", "artifactId": "site-faq", "entries": [entry()], **changes}


def failure(tmp_path: Path, document: Any, **options: Any) -> str:
    with pytest.raises(FaqError) as raised:
        compile_faq(faq(tmp_path, document), when=WHEN, **options)
    return str(raised.value)


# -- valid input -------------------------------------------------------------------------------


def test_the_demo_faq_compiles_to_a_verified_artifact_that_answers_locally() -> None:
    compiled = compile_faq(DOCS / "faq.json", site_id="agentskit-web-docs")
    decoded = parse_knowledge_artifact(compiled.data)
    assert decoded.ok
    artifact = decoded.artifact
    assert artifact.content_hash == compiled.content_hash == compute_knowledge_hash(artifact)
    assert compiled.entries == len(artifact.entries) >= 8
    assert compiled.questions == sum(len(e.match.values) for e in artifact.entries)
    wire = json.loads(compiled.data)
    assert wire["protocol"] == "agentskit.chat.knowledge" and wire["version"] == 1
    assert answer_locally(artifact, "  does it use a   CDN? ").to_wire()["outcome"] == "answer"
    assert answer_locally(artifact, "Does it use any CDN?").to_wire()["outcome"] == "escalation"


def test_the_hash_covers_the_content_and_a_tampered_artifact_is_refused(tmp_path: Path) -> None:
    compiled = compile_faq(faq(tmp_path, valid()), when=WHEN)
    wire = json.loads(compiled.data)
    assert wire["contentHash"] == compiled.content_hash
    assert compiled.content_hash.startswith("sha256:") and len(compiled.content_hash) == 71
    wire["entries"][0]["answer"]["markdown"] = "Run `rm -rf /`."
    refused = parse_knowledge_artifact(json.dumps(wire))
    assert not refused.ok and refused.diagnostic.code == DETERMINISTIC_HASH_MISMATCH
    other = compile_faq(faq(tmp_path, valid(artifactId="site-faq-2")), when=WHEN)
    assert other.content_hash != compiled.content_hash


def test_the_same_faq_compiles_to_the_same_bytes(tmp_path: Path) -> None:
    source = faq(tmp_path, valid())
    os.utime(source, (1_700_000_000, 1_700_000_000))
    first, second = compile_faq(source), compile_faq(source)
    assert first.data == second.data
    assert json.loads(first.data)["generatedAt"] == "2023-11-14T22:13:20.000Z"


def test_source_date_epoch_sets_generated_at(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "86400")
    assert generated_at(faq(tmp_path, valid())) == "1970-01-02T00:00:00.000Z"


def test_expires_at_is_kept_and_must_follow_generation(tmp_path: Path) -> None:
    compiled = compile_faq(faq(tmp_path, valid(expiresAt="2030-01-01T00:00:00Z")), when=WHEN)
    assert json.loads(compiled.data)["expiresAt"] == "2030-01-01T00:00:00Z"
    message = failure(tmp_path, valid(expiresAt="2020-01-01T00:00:00Z"))
    assert "expiration must be after generation" in message


def test_citations_must_land_on_a_published_page_and_heading(tmp_path: Path) -> None:
    assert compile_faq(faq(tmp_path, valid()), when=WHEN, pages=PAGES).entries == 1
    outside = entry(
        answer={
            "markdown": "x",
            "citations": [{"id": "c", "title": "t", "href": "https://example.com/x#y"}],
        }
    )
    assert compile_faq(faq(tmp_path, valid(entries=[outside])), when=WHEN, pages=PAGES)
    missing_page = entry(
        answer={
            "markdown": "x",
            "citations": [{"id": "c", "title": "t", "href": "/docs/gone.html"}],
        }
    )
    message = failure(tmp_path, valid(entries=[missing_page]), pages=PAGES)
    assert "entry install: /docs/gone.html is not a page of this site" in message
    missing_anchor = entry(
        answer={
            "markdown": "x",
            "citations": [{"id": "c", "title": "t", "href": "/docs/b.html#install"}],
        }
    )
    message = failure(tmp_path, valid(entries=[missing_anchor]), pages=PAGES)
    assert "/docs/b.html#install names no heading of that page" in message


# -- bad input fails with a clear message ------------------------------------------------------


def test_not_json_names_the_line(tmp_path: Path) -> None:
    message = failure(tmp_path, '{\n  "siteId": "site",\n  oops\n}')
    assert "is not valid JSON (line 3, column 3)" in message


def test_duplicate_keys_are_refused(tmp_path: Path) -> None:
    message = failure(tmp_path, '{"siteId": "a", "siteId": "b", "artifactId": "x", "entries": []}')
    assert "not strict JSON" in message


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ([], "must hold a JSON object"),
        ({"siteId": "s", "artifactId": "a"}, "`entries` must be a list"),
        ({"siteId": "s", "artifactId": "a", "entries": [], "entires": []}, "unknown top-level"),
        ({"siteId": "s p a c e", "artifactId": "a", "entries": []}, "siteId:"),
    ],
)
def test_shape_errors(tmp_path: Path, document: Any, expected: str) -> None:
    assert expected in failure(tmp_path, document)


@pytest.mark.parametrize(
    ("entries", "where"),
    [
        ([entry(kind="tutorial")], 'entries[0] (id "install").kind'),
        ([entry(), entry()], "entry ids must be unique"),
        (
            [entry(match={"type": "exact", "values": ["Install?", "  install? "]})],
            'entries[0] (id "install").match: Value error, match values must be unique',
        ),
        ([entry(match={"type": "fuzzy", "values": ["x"]})], "match.type"),
        ([entry(match={"type": "exact", "values": []})], "match.values"),
        ([entry(answer={"markdown": " ", "citations": []})], "answer.markdown"),
        (
            [entry(answer={"markdown": "x" * 16_385, "citations": []})],
            'entries[0] (id "install").answer.markdown',
        ),
        (
            [
                entry(
                    answer={
                        "markdown": "x",
                        "citations": [
                            {"id": f"c{i}", "title": "t", "href": "/a"} for i in range(9)
                        ],
                    }
                )
            ],
            "answer.citations",
        ),
        (
            [
                entry(
                    answer={
                        "markdown": "x",
                        "citations": [{"id": "c", "title": "t", "href": "javascript:alert(1)"}],
                    }
                )
            ],
            "answer.citations[0].href",
        ),
    ],
)
def test_entry_errors_name_the_field_never_the_value(
    tmp_path: Path, entries: list[dict[str, Any]], where: str
) -> None:
    message = failure(tmp_path, valid(entries=entries))
    assert "is not a valid knowledge FAQ" in message
    assert where in message
    assert "alert(1)" not in message and "xxxxxxxx" not in message


def test_the_faq_must_belong_to_the_site(tmp_path: Path) -> None:
    message = failure(tmp_path, valid(), site_id="other-site")
    assert "siteId must be the site config's siteId ('other-site')" in message


def test_the_size_bound_is_the_decoders(tmp_path: Path) -> None:
    many = [entry(f"e{i}", answer={"markdown": "y" * 600, "citations": []}) for i in range(1_000)]
    message = failure(tmp_path, valid(entries=many))
    assert "DETERMINISTIC_LIMIT_EXCEEDED" in message


# -- in the build ------------------------------------------------------------------------------


def project_copy(tmp_path: Path) -> build_files.Paths:
    """The build inputs of the docs site (template, shell files, docs) in a scratch root."""
    root = tmp_path / "root"
    (root / "web").mkdir(parents=True)
    shutil.copy(ROOT / "index.html", root / "index.html")
    for name in SITE_FILES:
        shutil.copy(ROOT / "web" / name, root / "web" / name)
    shutil.copytree(DOCS, root / "docs")
    return build_files.Paths(root=root, dist=tmp_path / "dist", cache=tmp_path / "cache")


def test_the_build_writes_the_artifact_and_the_pages_load_it(tmp_path: Path) -> None:
    paths = project_copy(tmp_path)
    files = build_pages.render_pages(paths)
    assert parse_knowledge_artifact(files["knowledge.json"]).ok
    assert 'knowledge="./knowledge.json"' in files["index.html"].decode()
    assert 'knowledge="../knowledge.json"' in files["docs/offline.html"].decode()


def test_a_bad_faq_fails_the_build_naming_the_file_and_field(tmp_path: Path) -> None:
    paths = project_copy(tmp_path)
    document = json.loads((paths.docs / "faq.json").read_text(encoding="utf-8"))
    document["entries"][1]["answer"]["citations"][0]["href"] = "/docs/offline.html#no-such-part"
    (paths.docs / "faq.json").write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(build_files.BuildError, match=r"faq\.json: citations that would not land"):
        build_pages.render_pages(paths)


def test_without_a_faq_there_is_no_artifact_and_no_attribute(tmp_path: Path) -> None:
    paths = project_copy(tmp_path)
    (paths.docs / "faq.json").unlink()
    files = build_pages.render_pages(paths)
    assert "knowledge.json" not in files
    assert "knowledge=" not in files["index.html"].decode()
