"""The answer eval on the real corpora: question files, scoring edges, the corpus build's parts.

Fast and corpus-free: the MkDocs build of a real corpus is the bench's job
(`python -m agentskit_web.bench answers`), never `make test`'s. What is tested
here is what the bench's figures rest on: well-formed question files with a
stable, balanced split; scoring at its edges; the generated MkDocs config; and
reading a built site's sections (on a small site written here).
"""

import math
import re
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from agentskit_web.answering.chunk import Passage
from agentskit_web.bench.answers import (
    EVAL_FILES,
    SPLITS,
    EvalError,
    EvalQuestion,
    EvalSet,
    MkDocsCorpus,
    Outcome,
    ProjectDocs,
    SphinxCorpus,
    check_published,
    first_quote_section,
    format_eval,
    load_eval_set,
    main,
    opens_pointing_back,
    percentile,
    score,
    split_scores,
    vars_of,
    visible_chars,
)
from agentskit_web.bench.answers import EvalResult as Result
from agentskit_web.bench.corpora import (
    CorpusError,
    build_corpus,
    config_text,
    corpus_hash,
    generated_config,
    index_built_site,
    published_sections,
)

REAL_CORPORA = ("pydantic", "starlette", "click")
ANSWERABLE_MIN = 60
UNANSWERABLE_MIN = 15
DIRECTORY_SECTION = re.compile(r"^/(?:[a-z0-9_.-]+/)*(?:#[\w-]+)?$")
"""A section as MkDocs publishes it with directory URLs: `/a/b/` or `/a/b/#id`."""


def _question(needs: str, expected: list[str], split: str = "tuning") -> EvalQuestion:
    return EvalQuestion.model_validate(
        {
            "id": "q",
            "split": split,
            "kind": "task",
            "question": "q?",
            "needs": needs,
            "expected": expected,
        }
    )


# ------------------------------------------------------------------ the question files


@pytest.mark.parametrize("name", list(EVAL_FILES))
def test_every_question_file_validates_with_unique_ids_and_both_halves(name: str) -> None:
    questions = load_eval_set(EVAL_FILES[name]).questions
    assert len({q.id for q in questions}) == len(questions)
    assert all((q.needs == "none") == (not q.expected) for q in questions)
    assert all(len(set(q.expected)) == len(q.expected) for q in questions)
    held_out = sum(q.split == "heldout" for q in questions)
    assert len(questions) / 4 <= held_out <= len(questions) / 2 + 1


@pytest.mark.parametrize("name", REAL_CORPORA)
def test_a_real_corpus_file_has_what_the_issue_asks_for(name: str) -> None:
    eval_set = load_eval_set(EVAL_FILES[name])
    assert isinstance(eval_set.corpus, MkDocsCorpus | SphinxCorpus)
    assert eval_set.corpus.name == name
    answerable = [q for q in eval_set.questions if q.needs != "none"]
    assert len(answerable) >= ANSWERABLE_MIN
    assert len(eval_set.questions) - len(answerable) >= UNANSWERABLE_MIN
    assert "must NOT be read" in eval_set.description  # the held-out rule travels with the file
    for question in answerable:
        assert question.expected and all(DIRECTORY_SECTION.match(s) for s in question.expected)


@pytest.mark.parametrize("name", REAL_CORPORA)
def test_the_split_alternates_within_each_kind_so_the_halves_are_balanced(name: str) -> None:
    """The split was fixed by position before anything was measured: the n-th question of
    a kind is tuning when n is odd. Moving a question between halves (or reordering the
    file) breaks this test, so the held-out half stays what it was."""
    questions = load_eval_set(EVAL_FILES[name]).questions
    seen: dict[str, int] = {}
    for question in questions:
        seen[question.kind] = seen.get(question.kind, 0) + 1
        assert question.split == ("tuning" if seen[question.kind] % 2 else "heldout"), question.id
    for kind in seen:
        halves = [sum(q.kind == kind and q.split == s for q in questions) for s in SPLITS]
        assert abs(halves[0] - halves[1]) <= 1


def test_a_malformed_corpus_block_or_question_is_refused() -> None:
    base = {"description": "d", "questions": []}
    ours = EvalSet.model_validate({**base, "corpus": {"docs": "docs"}})
    assert isinstance(ours.corpus, ProjectDocs)
    built = EvalSet.model_validate({**base, "corpus": {"builder": "mkdocs", "name": "starlette"}})
    assert isinstance(built.corpus, MkDocsCorpus) and built.corpus.config is None
    sphinx = EvalSet.model_validate({**base, "corpus": {"builder": "sphinx", "name": "click"}})
    assert isinstance(sphinx.corpus, SphinxCorpus) and sphinx.corpus.conf == "docs"
    for corpus in (
        {"builder": "sphinx", "name": "x", "config": "mkdocs.yml"},
        {"builder": "sphinx", "name": "x", "conf": "../up"},
        {"builder": "mkdocs", "name": "../escape"},
        {"builder": "mkdocs"},
        {"docs": "docs", "name": "x"},
    ):
        with pytest.raises(ValidationError):
            EvalSet.model_validate({**base, "corpus": corpus})
    with pytest.raises(ValidationError):
        _question("sometimes", ["/a/"])
    with pytest.raises(ValidationError):
        _question("any", ["/a/"], split="later")


def test_an_expected_section_the_site_does_not_publish_stops_the_eval() -> None:
    eval_set = EvalSet(
        description="d",
        corpus=MkDocsCorpus(builder="mkdocs", name="x"),
        questions=[_question("any", ["/a/#b", "/a/"]), _question("none", [])],
    )
    check_published(eval_set, {"/a/", "/a/#b", "/c/"}, "site")
    with pytest.raises(EvalError, match="/a/#b"):
        check_published(eval_set, {"/a/", "/a/#c"}, "site")


# ------------------------------------------------------------------ scoring edges


def test_percentiles_use_every_sample_and_say_nan_for_none() -> None:
    assert math.isnan(percentile([], 0.5))
    assert percentile([7.0], 0.9) == 7.0
    assert percentile([4.0, 1.0, 3.0, 2.0], 0.5) == 2.5
    assert percentile([float(n) for n in range(1, 11)], 0.9) == pytest.approx(9.1)
    assert percentile([1.0, 100.0], 1.0) == 100.0


def test_first_quote_on_target_counts_only_an_expected_first_quote() -> None:
    question = _question("any", ["/a/#x"])
    assert Outcome(question, ["/a/#x"], 0.0, "/a/#x").quote_on_target
    assert not Outcome(question, ["/a/#x"], 0.0, "/b/").quote_on_target
    assert not Outcome(question, [], 0.0, None).quote_on_target
    scores = score(
        [
            Outcome(question, ["/a/#x"], 0.001, "/a/#x"),
            Outcome(question, ["/b/", "/a/#x"], 0.003, "/b/"),
            Outcome(_question("none", []), [], 0.002, None),
        ]
    )
    assert scores.first_quote == 0.5 and scores.recall[1] == 0.5 and scores.recall[3] == 1.0
    assert scores.declined == 1.0 and scores.wrongly_declined == 0.0
    assert scores.p50_ms == pytest.approx(2.0) and scores.p90_ms == pytest.approx(2.8)


def test_an_empty_split_prints_a_dash_and_writes_null() -> None:
    only_tuning = [Outcome(_question("any", ["/a/"]), ["/a/"], 0.0, "/a/")]
    by_split = split_scores(only_tuning)
    assert by_split["tuning"].recall[1] == 1.0 and math.isnan(by_split["heldout"].recall[1])
    assert vars_of(by_split["heldout"])["recallAt1"] is None
    assert math.isnan(by_split["all"].declined)  # no unanswerable question at all
    table = format_eval(Result({"shipped": by_split}, {"shipped": only_tuning}, 1))
    assert " - " in table and not re.search(r"\bnan\b", table)


def test_the_first_quote_is_the_first_passage_the_answer_quotes() -> None:
    empty = Passage("/empty/", None, "Empty", "Empty", "")
    starred = Passage("/b/", "c", "Page *with* stars", "Section", "Mount routes under a prefix.")
    other = Passage("/d/", None, "D", "D", "Something else entirely.")
    asked = "How do I mount routes under a prefix?"
    assert first_quote_section(asked, [starred, other]) == "/b/#c"
    assert first_quote_section(asked, [empty, other, starred]) == "/d/"
    assert first_quote_section(asked, [empty]) is None
    assert first_quote_section(asked, []) is None


# ------------------------------------------------------------------ building a corpus


def _corpus(tmp_path: Path, config: str | None) -> Path:
    corpus = tmp_path / "corpora" / "lib"
    (corpus / "docs").mkdir(parents=True)
    (corpus / "docs" / "index.md").write_text("# Lib\n\nHello.\n")
    if config is not None:
        (corpus / "mkdocs.yml").write_text(config)
    return corpus


OWNER_CONFIG = """\
site_name: Lib
theme:
  name: material
  custom_dir: docs/overrides
extra:
  analytics: {provider: google, property: G-1}
  social: []
watch: [lib]
markdown_extensions:
  - pymdownx.emoji:
      emoji_index: !!python/name:material.extensions.emoji.twemoji
plugins:
  - search
  - mkdocstrings:
      handlers: {python: {}}
"""


def test_the_owner_config_loses_what_needs_the_network_or_the_source(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, OWNER_CONFIG)
    settings = generated_config(corpus, "mkdocs.yml")
    assert settings["plugins"] == ["search"]
    assert "watch" not in settings and settings["extra"] == {"social": []}
    assert "custom_dir" not in settings["theme"]  # its folder is missing here
    assert settings["docs_dir"] == str((corpus / "docs").resolve())
    text = config_text(settings)
    assert "!!python/name:material.extensions.emoji.twemoji" in text
    assert "analytics" not in text and "mkdocstrings" not in text
    (corpus / "docs" / "overrides").mkdir()
    kept = generated_config(corpus, "mkdocs.yml")["theme"]["custom_dir"]
    assert kept == str((corpus / "docs" / "overrides").resolve())
    assert (corpus / "mkdocs.yml").read_text() == OWNER_CONFIG  # the corpus is never written


def test_a_corpus_without_a_config_gets_a_minimal_material_one(tmp_path: Path) -> None:
    settings = generated_config(_corpus(tmp_path, None), None)
    assert settings["theme"] == {"name": "material"} and settings["use_directory_urls"] is True
    assert "attr_list" in settings["markdown_extensions"]
    assert yaml.safe_load(config_text(settings))["site_name"] == "Lib"


def test_the_cache_key_follows_every_corpus_file_and_the_config(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, None)
    first = corpus_hash(corpus, "config: 1")
    assert corpus_hash(corpus, "config: 1") == first
    assert corpus_hash(corpus, "config: 2") != first
    (corpus / "docs" / "index.md").write_text("# Lib\n\nHello again.\n")
    assert corpus_hash(corpus, "config: 1") != first
    (corpus / "docs" / "extra.md").write_text("")
    assert len({first, corpus_hash(corpus, "config: 1")}) == 2


def test_a_missing_corpus_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="no docs folder"):
        build_corpus(tmp_path, "absent", None, cache=tmp_path / "cache")


PAGE = """<html><head><title>T</title></head><body>
<header><a href="#">Lib</a> Initializing search</header>
<nav class="md-nav"><a href="/guide/#setup">Setup</a></nav>
<article class="md-content__inner md-typeset">
<h1 id="guide">Guide</h1><p>Top text of the guide.</p>
<h2 id="setup">Setup</h2><p>Install it first.</p>
<h3>Raw heading</h3><p>Text under a heading without an id.</p>
<h2 id="usage">Usage</h2><p>Call it.</p><pre><code>run()</code></pre>
</article>
<footer>Made with Material for MkDocs</footer></body></html>
"""


def _site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    (site / "guide").mkdir(parents=True)
    (site / "guide" / "index.html").write_text(PAGE)
    home = '<article><h1 id="home">Home</h1><p>Welcome.</p></article>'
    (site / "index.html").write_text(f"<html><body>{home}</body></html>")
    missing = "<article><h1>404</h1><p>Not found.</p></article>"
    (site / "404.html").write_text(f"<html><body>{missing}</body></html>")
    (site / "theme").mkdir()
    (site / "theme" / "main.html").write_text("<p>a template the docs folder copied</p>")
    return site


def test_the_published_sections_are_directory_urls_and_heading_ids(tmp_path: Path) -> None:
    published = published_sections(_site(tmp_path))
    assert set(published) == {"/", "/guide/", "/guide/#setup", "/guide/#usage"}


def test_the_index_cites_published_sections_only_and_reads_the_article(tmp_path: Path) -> None:
    chunks = index_built_site(_site(tmp_path))
    cited = {(c.path, c.anchor) for c in chunks}
    assert cited == {("/", None), ("/guide/", None), ("/guide/", "setup"), ("/guide/", "usage")}
    setup = " ".join(c.text for c in chunks if c.anchor == "setup")
    assert "Install it first." in setup and "without an id" in setup  # folded into #setup
    text = " ".join(c.text + c.code for c in chunks)
    assert "Initializing search" not in text and "Made with Material" not in text
    assert "Not found." not in text and "a template" not in text
    assert any(c.code == "run()" for c in chunks if c.anchor == "usage")


def test_without_the_corpora_the_section_says_so_and_measures_our_docs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    target = tmp_path / "answers.json"
    missing = tmp_path / "no-corpora"
    assert main(["--corpora", str(missing), "--json", str(target)]) == 0
    printed = capsys.readouterr().out
    for name in REAL_CORPORA:
        line = f"answers: no corpora folder at {missing}: {name} not measured (--corpora PATH)"
        assert line in printed.splitlines()
    assert "answers: ours" in printed and "p90 ms" in printed and "quote1" in printed
    written = json.loads(target.read_text(encoding="utf-8"))
    assert set(written) == {"ours"}
    assert set(written["ours"]) == {"shipped", "plain BM25"}
    assert written["ours"]["shipped"]["all"]["firstQuoteOnTarget"] is not None


def test_a_corpus_that_cannot_be_built_fails_the_section_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "corpora").mkdir()  # a corpora folder without the corpus in it
    assert main(["--corpora", str(tmp_path / "corpora"), "--corpus", "starlette"]) == 1
    error = capsys.readouterr().err
    assert "answers: starlette not measured: Corpus 'starlette' has no docs folder" in error


def test_the_page_figures_count_a_right_page_and_a_plain_decline_only() -> None:
    """page@3 takes any section of an expected page among the first three sources; a near
    miss is not a plain decline; the answer length is what a reader sees before the
    collapsed rest."""
    question = _question("any", ["/a/#x"])
    assert Outcome(question, ["/b/", "/c/", "/a/#other"], 0.0).page_at(3)
    assert not Outcome(question, ["/b/", "/c/", "/d/", "/a/#x"], 0.0).page_at(3)
    assert not Outcome(question, ["/ab/"], 0.0).page_at(3)
    unanswerable = _question("none", [])
    outright = Outcome(unanswerable, [], 0.0)
    near_miss = Outcome(unanswerable, [], 0.0, closest=("/a/",))
    assert outright.declined_outright and not near_miss.declined_outright
    assert near_miss.declined  # still declined in the section-level column
    scores = score([outright, near_miss, Outcome(question, ["/a/"], 0.0, answer_chars=300)])
    assert scores.declined == 1.0 and scores.declined_outright == 0.5
    assert scores.page_at3 == 1.0 and scores.answer_p50 == 300.0


def test_visible_chars_counts_the_text_before_more_from_the_docs() -> None:
    answer = "Use `x` [1].\n\n> ```\n> code\n> ```\n\n<details>More from the docs: long"
    assert visible_chars(answer) == len("Use x . code")
    assert visible_chars("**Bold** answer [2]") == len("Bold answer")


def test_back_counts_answers_whose_first_quote_opens_on_a_back_reference() -> None:
    assert opens_pointing_back("> This sets up the venv. [1]\n\nMore")
    assert opens_pointing_back("> *It* reports not ready. [1]")
    assert not opens_pointing_back("> Run make test. This sets up the venv. [1]")
    assert not opens_pointing_back("> There are two ways. [1]")
    question = _question("any", ["/a/#x"])
    back = Outcome(question, ["/a/"], 0.0, answer_chars=100, points_back=True)
    plain = Outcome(question, ["/a/"], 0.0, answer_chars=100)
    declined = Outcome(question, [], 0.0, points_back=False)  # no answer: not counted
    assert score([back, plain, declined]).points_back == 0.5
