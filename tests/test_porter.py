"""The pure-Python tokens are FTS5's: the search was tuned over its porter tokenizer."""

import re
import sqlite3
from pathlib import Path

import pytest

from agentskit_web.answering.porter import STEM_MAX_BYTES, STEM_MIN_BYTES, porter_stem
from agentskit_web.answering.text_terms import tokens

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT.parent / "shared" / "corpora"


def fts5_tokens(texts: list[str]) -> list[list[str]]:
    """SQLite's tokens of each text (the tokenizer the FTS5 search used)."""
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'porter unicode61 remove_diacritics 2')"
    )
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    db.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(texts, start=1))
    found: list[list[str]] = [[] for _ in texts]
    for rowid, term in db.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
        found[rowid - 1].append(term)
    return found


def test_every_docs_word_stems_as_fts5_does() -> None:
    words: set[str] = set()
    folders = [ROOT / "docs", *(sorted(CORPORA.glob("*/docs")) if CORPORA.is_dir() else [])]
    for folder in folders:
        for file in folder.rglob("*.md"):
            words.update(re.findall(r"\w+", file.read_text(encoding="utf-8").lower()))
    ordered = sorted(words)
    assert len(ordered) > 2_000
    expected = fts5_tokens(ordered)
    wrong = [(w, e, tokens(w)) for w, e in zip(ordered, expected, strict=True) if tokens(w) != e]
    assert wrong == []


@pytest.mark.parametrize(
    "text",
    [
        "Ramírez arrêter Grönholm",
        "base_path snake_case",
        "incredibly webassembly",
        "the agreed feed eed",
        "sses ies caresses ponies",
        "x" * STEM_MAX_BYTES + "ing " + "x" * (STEM_MAX_BYTES - 3) + "ing",
        "ing ed sing",
    ],
)
def test_edge_cases_stem_as_fts5_does(text: str) -> None:
    assert tokens(text) == fts5_tokens([text])[0]


def test_the_stem_length_bounds() -> None:
    assert porter_stem("s" * (STEM_MIN_BYTES - 1) + "s") == "sss"[:STEM_MIN_BYTES]
    assert porter_stem("as") == "as"  # under the bound: kept
    at_bound = "a" * (STEM_MAX_BYTES - 4) + "ings"
    assert porter_stem(at_bound) != at_bound  # at the bound: stemmed
    assert porter_stem("a" + at_bound) == "a" + at_bound  # one past: kept
