"""Question words to query groups: compounds, typo repair, synonyms; and the index using them."""

import math
from pathlib import Path

import pytest

import agentskit_web.answering.decline as decline
import agentskit_web.answering.ranking as ranking
from agentskit_web.answering.chunk import Passage
from agentskit_web.answering.decline import coverage_terms, hyphenated_compounds
from agentskit_web.answering.distinct import NEAR_DUPLICATE_JACCARD, distinct_passages
from agentskit_web.answering.inverted_index import Phrase
from agentskit_web.answering.query_terms import (
    ROOT_MIN_CHARS,
    TYPO_CHANGE_MIN_CHARS,
    TYPO_LONG_WORD_CHARS,
    TYPO_MIN_CHARS,
    QueryOptions,
    Vocabulary,
    derived_root,
    edit_distance,
    is_subsequence,
    normalise_synonyms,
    term_groups,
    trigrams,
)
from agentskit_web.answering.question_split import PART_STRENGTH, merged, split_question
from agentskit_web.answering.ranking import SearchIndex
from agentskit_web.answering.text_terms import STOPWORDS
from agentskit_web.server.retrieval import index_folder

STOP = frozenset({"how", "do", "i", "the", "a", "of", "my", "to", "is"})
DOCS = {
    "embedding.md": (
        "# Embedding the widget\n\nAdd the snippet to your template.\n\n"
        "## Pages in sub-folders\n\nA page in a sub-folder needs its own config path.\n\n"
        "## Static site generators\n\nMkDocs and Sphinx templates take the snippet.\n"
    ),
    "generators.md": (
        "# Answer generators\n\nThe extractive generator quotes the docs; the openai "
        "generator calls a model endpoint.\n\n## Rate limiting\n\nEach client has a token "
        "bucket; a database keeps nothing.\n"
    ),
    "security.md": (
        "# Security\n\n## Content-Security-Policy\n\nPyodide needs wasm-unsafe-eval in "
        "script-src.\n"
    ),
}


def write(folder: Path, docs: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in docs.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def opened(folder: Path, docs: dict[str, str]) -> SearchIndex:
    """An index of `docs` written to `folder`."""
    return index_folder(write(folder, docs))


def index_of(tmp_path: Path, **options: object) -> SearchIndex:
    return index_folder(write(tmp_path / "docs", DOCS), **options)  # type: ignore[arg-type]


def groups(vocabulary: Vocabulary, question: str, **kw: object) -> dict[str, list[tuple[str, ...]]]:
    found = term_groups(question, vocabulary, kw.pop("synonyms", {}), STOP, 32, **kw)  # type: ignore[arg-type]
    return {g.word: [a.words for a in g.alternatives] for g in found}


# ------------------------------------------------------------------ pure logic


def test_trigrams_are_padded() -> None:
    assert trigrams("cat") == {"^ca", "cat", "at$"}


@pytest.mark.parametrize(
    ("left", "right", "distance"),
    [("limt", "limit", 1), ("metrcis", "metrics", 1), ("widgit", "widget", 1), ("abc", "abc", 0)],
)
def test_edit_distance_counts_a_swap_as_one(left: str, right: str, distance: int) -> None:
    assert edit_distance(left, right, 2) == distance


def test_edit_distance_stops_past_its_bound() -> None:
    assert edit_distance("kubernetes", "template", 2) == 3
    assert edit_distance("a", "abcd", 2) == 3


def test_is_subsequence_is_a_dropped_letter() -> None:
    assert is_subsequence("tets", "tests") and not is_subsequence("gets", "tests")
    assert not is_subsequence("tests", "tests")


def test_repair_prefers_a_dropped_letter_and_keeps_the_first_letter() -> None:
    vocabulary = Vocabulary(["list list list limit tests gets alone template"])
    assert vocabulary.repair("limt") == "limit"  # not the more common "list"
    assert vocabulary.repair("tets") == "tests"
    assert vocabulary.repair("lone") is None  # "alone" changes the first letter
    assert vocabulary.repair("templete") == "template"


def test_repair_bounds_by_length() -> None:
    vocabulary = Vocabulary(["disk dist persistence configuration abcdefgh"])
    short = "x" * (TYPO_MIN_CHARS - 1)
    assert vocabulary.repair(short) is None
    # A changed letter is repaired only from TYPO_CHANGE_MIN_CHARS letters on.
    assert vocabulary.repair("disq") is None
    assert len("abcdefgx") >= TYPO_CHANGE_MIN_CHARS
    assert vocabulary.repair("abcdefgx") == "abcdefgh"
    # Two edits only from TYPO_LONG_WORD_CHARS letters on.
    assert len("persistanse") >= TYPO_LONG_WORD_CHARS
    assert vocabulary.repair("persistanse") == "persistence"
    assert len("abcdefyx") < TYPO_LONG_WORD_CHARS
    assert vocabulary.repair("abcdefyx") is None


def test_compounds_split_and_join() -> None:
    vocabulary = Vocabulary(["pages in sub folders and a database"])
    found = groups(vocabulary, "widget in a subfolder")
    assert ("sub", "folder") in found["subfolder"]
    joined = groups(vocabulary, "data base")
    assert ("database",) in joined["data base"]
    assert (
        groups(vocabulary, "data base", options=QueryOptions(compounds=False)).get("data base")
        is None
    )


def test_synonyms_fill_in_words_the_docs_do_not_use() -> None:
    vocabulary = Vocabulary(["the model endpoint"])
    synonyms = normalise_synonyms([["LLM", "language model", "model"]])
    found = groups(vocabulary, "my own llm", synonyms=synonyms)
    # "language model" holds the one-word "model": searching both would count a
    # passage with the phrase twice, so only the word is searched.
    assert found["llm"] == [("llm",), ("model",)]
    kept = normalise_synonyms([["LLM", "language model", "gpt"]])
    assert ("language", "model") in groups(vocabulary, "my own llm", synonyms=kept)["llm"]
    # A docs word is searched as it is: a rare synonym must not outweigh it.
    assert groups(vocabulary, "the model", synonyms=synonyms)["model"] == [("model",)]


def test_normalise_synonyms_lowercases_and_splits_phrases() -> None:
    table = normalise_synonyms([["CSP", "Content-Security-Policy"], ["csp", "policy"]])
    assert table["csp"] == (("content", "security", "policy"), ("policy",))
    assert table["content security policy"] == (("csp",),)


def test_near_duplicates_and_repeated_sections_are_dropped() -> None:
    text = " ".join(f"w{i}" for i in range(100))
    same = Passage("/a", "x", "A", "X", text)
    second_chunk = Passage("/a", "x", "A", "X", "other words entirely")
    near = Passage("/b", None, "B", "B", text + " extra")
    different = Passage("/c", None, "C", "C", "nothing shared")
    kept = distinct_passages([same, second_chunk, near, different], 8)
    assert kept == [same, different]
    assert len(distinct_passages([same, different], 1)) == 1


def test_near_duplicate_threshold_at_and_below_the_limit() -> None:
    base = [f"w{i}" for i in range(10)]
    at_limit = Passage("/b", None, "B", "B", " ".join(base[:8]))  # 8 of 10 shared: 0.8
    below = Passage("/c", None, "C", "C", " ".join(base[:7]))  # 7 of 10: 0.7
    first = Passage("/a", None, "A", "A", " ".join(base))
    assert NEAR_DUPLICATE_JACCARD == 0.8
    assert distinct_passages([first, at_limit], 8) == [first]
    assert distinct_passages([first, below], 8) == [first, below]


# ------------------------------------------------------------------ the index


def test_a_subfolder_question_finds_the_sub_folder_section(tmp_path: Path) -> None:
    found = index_of(tmp_path).search("How do I serve the widget from a subfolder?", 3)
    assert found and found[0].anchor == "pages-in-sub-folders"


def test_a_typo_still_finds_the_section(tmp_path: Path) -> None:
    index = index_of(tmp_path)
    found = index.search("sphinx templete", 3)
    assert found and found[0].anchor == "static-site-generators"
    plain = index_folder(tmp_path / "docs", options=QueryOptions(typos=False), exclude=("none",))
    assert [p.anchor for p in plain.search("templete", 3)] == []


def test_site_synonyms_reach_the_generator_section(tmp_path: Path) -> None:
    index = index_of(tmp_path, synonyms=[["llm", "model"]])
    found = index.search("my llm?", 3)
    assert found and found[0].path == "/docs/generators.html"
    assert index_of(tmp_path / "no-synonyms").search("my llm?", 3) == []


def test_a_question_about_something_else_is_declined(tmp_path: Path) -> None:
    index = index_of(tmp_path)
    assert index.search("How do I deploy the widget on Kubernetes with Helm?", 3) == []
    assert index.search("How do I add the widget to a Sphinx template?", 3)


def test_the_site_config_synonyms_reach_the_backend(tmp_path: Path) -> None:
    from _ask_helpers import ask_body, post, site
    from agentskit_web.server.ask_app import create_ask_app, load_site_config

    docs = write(tmp_path / "docs", DOCS)
    config = site(search={"synonyms": [["llm", "model"]]})
    assert load_site_config(config).synonyms == (("llm", "model"),)
    with_synonyms = post(create_ask_app(config, docs), ask_body("my llm?"))
    assert with_synonyms.status == 200
    assert with_synonyms.events[-1]["type"] == "done"
    without = post(create_ask_app(site(), docs), ask_body("my llm?"))
    assert without.status == 422


def test_within_one_edit_agrees_with_the_edit_distance() -> None:
    import itertools
    import random

    from agentskit_web.answering.query_terms import within_one_edit

    generator = random.Random(16)
    words = ["", "a", "ab", "ba", "abc", "acb", "limt", "limit", "metrcis", "metrics"]
    words += [
        "".join(generator.choice("abc") for _ in range(generator.randint(0, 5))) for _ in range(150)
    ]
    for left, right in itertools.product(words, repeat=2):
        assert within_one_edit(left, right) == (edit_distance(left, right, 1) <= 1), (left, right)


def test_matching_rows_are_remembered_up_to_the_bound(tmp_path: Path) -> None:
    from agentskit_web.answering.ranking import MATCH_CACHE_MAX

    index = index_of(tmp_path)
    index.forget()
    for number in range(MATCH_CACHE_MAX):
        index.hits(Phrase((f"w{number}",)))
    assert len(index._hits) == MATCH_CACHE_MAX
    index.hits(Phrase(("snippet",)))  # one past the bound: the oldest goes
    assert len(index._hits) == MATCH_CACHE_MAX
    assert Phrase(("w0",)) not in index._hits and Phrase(("snippet",)) in index._hits


def test_a_grown_index_forgets_remembered_matches(tmp_path: Path) -> None:
    from agentskit_web.answering.chunk import Chunk

    index = index_of(tmp_path)
    assert index.search("zeppelin", 3) == []
    index.add([Chunk("/docs/new.html", "air", "New", "Airships", "A zeppelin floats.")])
    assert [p.anchor for p in index.search("zeppelin", 3)] == ["air"]


def test_sentence_terms_are_remembered_up_to_the_bound() -> None:
    from agentskit_web.answering.extractive import SENTENCE_CACHE_MAX, sentence_terms

    sentence_terms.cache_clear()
    for number in range(SENTENCE_CACHE_MAX + 1):
        sentence_terms(f"Sentence {number}.")
    info = sentence_terms.cache_info()
    assert info.maxsize == SENTENCE_CACHE_MAX and info.currsize == SENTENCE_CACHE_MAX


def test_a_section_named_by_the_question_comes_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    filler = "".join(
        f"## Topic {n}\n\nUnrelated text number {n} about colours.\n\n" for n in range(8)
    )
    docs = {
        "guide.md": (
            "# Guide\n\n## Metrics\n\nThe backend writes one line per measure.\n\n"
            "## Privacy\n\nThe backend writes metrics; metrics the backend writes are safe.\n\n"
            + filler
        )
    }
    folder = write(tmp_path / "docs", docs)
    question = "Which metrics does the backend write?"
    assert [p.anchor for p in index_folder(folder).search(question, 2)] == [
        "metrics",
        "privacy",
    ]
    monkeypatch.setattr(ranking, "HEADING_MATCH_WEIGHT", 1.0)  # without the weight
    without = index_folder(folder).search(question, 2)
    assert without and without[0].anchor == "privacy"


def test_an_unknown_derived_word_is_searched_by_its_root() -> None:
    vocabulary = Vocabulary(["build the site with a large folder"])
    assert groups(vocabulary, "which builders")["builders"] == [("builders",), ("build",)]
    assert groups(vocabulary, "the largest")["largest"] == [("largest",), ("larg",)]
    assert groups(vocabulary, "which builders", options=QueryOptions(roots=False))["builders"] == [
        ("builders",)
    ]
    # A docs word keeps its own form; an unknown root finds nothing.
    assert groups(vocabulary, "build it")["build"] == [("build",)]
    assert groups(vocabulary, "advertisements")["advertisements"] == [("advertisements",)]


def test_a_root_is_at_least_root_min_chars_long() -> None:
    known = {"x" * ROOT_MIN_CHARS, "x" * (ROOT_MIN_CHARS - 1)}.__contains__
    assert derived_root("x" * ROOT_MIN_CHARS + "ers", known) == "x" * ROOT_MIN_CHARS
    assert derived_root("x" * (ROOT_MIN_CHARS - 1) + "ers", known) is None


def test_question_shaping_words_are_not_searched() -> None:
    assert {"happens", "possible", "much", "big", "myself", "about", "up"} <= STOPWORDS


def test_a_hyphenated_compound_is_one_coverage_unit(tmp_path: Path) -> None:
    index = index_of(tmp_path)
    question = "Does the fine-tune bucket hold a sub-folder and a Content-Securty-Policy?"
    terms = dict(coverage_terms(question, index.groups(question)))
    assert "fine" not in terms and "tune" not in terms and "bucket" in terms
    assert terms["fine-tune"] == (Phrase.of("fine tune"), Phrase.of("finetune"))
    assert Phrase.of("sub folder") in terms["sub-folder"]
    # A typo inside the compound is searched repaired.
    assert Phrase.of("content security policy") in terms["content-securty-policy"]


def test_a_compound_the_docs_never_use_is_declined_though_its_parts_appear(
    tmp_path: Path,
) -> None:
    docs = {
        "guide.md": (
            "# Guide\n\n## Tuning\n\nTuning the search weights changes the ranking.\n\n"
            "## Models\n\nThe model answers from the passages.\n\n"
            "## Install\n\nInstall the package with pip.\n\n"
            "## Serve\n\nServe the folder over HTTP.\n"
        )
    }
    index = opened(tmp_path / "c", docs)
    assert index.search("How do I tune the model?", 3)
    assert index.search("How do I fine-tune the model?", 3) == []


SCATTERED_DOCS = {
    "setup.md": "# Setup\n\n## Install\n\nInstall the package with pip.\n",
    "looks.md": "# Looks\n\n## Themes\n\nThe dark theme follows the page.\n",
    "network.md": "# Network\n\n## Proxies\n\nA proxy in front forwards the address.\n",
    "guide.md": "# Guide\n\n"
    + "".join(f"## Topic {n}\n\nUnrelated text number {n} about colours.\n\n" for n in range(6)),
}
"""Each word of SCATTERED_ONE_PART in a section of its own page: no page holds two of
them, so the page-coverage rule (decline.PAGE_COVERAGE) has nothing to add."""
SCATTERED_ONE_PART = "pip theme proxy"
SCATTERED_THREE_PARTS = "How do I use pip, and which theme, and what about a proxy?"


def test_a_one_part_question_must_be_covered_by_its_best_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = opened(tmp_path / "s", SCATTERED_DOCS)
    # Each word is in its own section: the best one holds a third of the question.
    assert ranking.COVERAGE_PASSAGES_PER_PART == 1
    assert index.search(SCATTERED_ONE_PART, 3) == []
    # A question of three parts may combine three sections, one per part.
    found = index.search(SCATTERED_THREE_PARTS, 3)
    assert {p.anchor for p in found} == {"install", "themes", "proxies"}
    # Past the bound (three passages per part), the scattered words pass.
    monkeypatch.setattr(ranking, "COVERAGE_PASSAGES_PER_PART", 3)
    assert index.search(SCATTERED_ONE_PART, 3)


def _coverage_of(index: SearchIndex, question: str, depth: int) -> float:
    """The share `SearchIndex.search` compares with NOT_FOUND_COVERAGE, computed the same way."""
    groups = index.groups(question)
    phrases = ranking.query_phrases(groups)
    assert phrases
    top = ranking.best_rows(index._scores(phrases, ranking.FIELD_WEIGHTS), depth)
    weights = decline.term_weights(coverage_terms(question, groups), top, index.hits, index.size)
    return decline.coverage(weights, set(top))


def test_the_not_found_threshold_keeps_a_question_at_it_and_declines_one_under_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = opened(tmp_path / "s", SCATTERED_DOCS)
    question = "pip proxy"
    share = _coverage_of(index, question, ranking.COVERAGE_PASSAGES_PER_PART)
    assert 0.0 < share < 1.0
    monkeypatch.setattr(decline, "NOT_FOUND_COVERAGE", share)
    assert index.search(question, 3)
    monkeypatch.setattr(decline, "NOT_FOUND_COVERAGE", share + 1e-9)
    assert index.search(question, 3) == []


PASSING_DOCS = {
    "guide.md": (
        "# Guide\n\n## Install\n\nInstall the package with pip. A page view costs one "
        "script.\n\n## Themes\n\nThe dark theme follows the page.\n\n"
        + "".join(f"## Topic {n}\n\nUnrelated text number {n} about colours.\n\n" for n in range(6))
    )
}


def test_a_word_used_in_passing_is_no_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = opened(tmp_path / "p", PASSING_DOCS)
    # Two words (the bound): the best section holds one, in its text only. The rare
    # word alone outweighs the common one, so the coverage threshold lets it pass.
    question = "How much do colours cost?"
    assert len(coverage_terms(question, index.groups(question))) == decline.PASSING_MIN_TERMS
    assert index.search(question, 3) == []
    monkeypatch.setattr(decline, "NOT_FOUND_COVERAGE", 0.0)
    assert index.search(question, 3) == []
    # One word (under the bound): finding it is all the question asked for.
    assert [p.anchor for p in index.search("cost?", 3)] == ["install"]
    # The one word held in a heading is what the section is about.
    assert [p.anchor for p in index.search("colours of the themes", 3)][:1] == ["themes"]
    # With the bound raised past two words, the passing mention is answered again.
    monkeypatch.setattr(decline, "PASSING_MIN_TERMS", decline.PASSING_MIN_TERMS + 1)
    assert [p.anchor for p in index.search(question, 3)][:1] == ["install"]


def test_a_question_of_two_parts_is_split_where_the_second_part_starts() -> None:
    assert split_question("How do I build the site and then embed the widget?") == [
        "How do I build the site",
        "embed the widget?",
    ]
    assert split_question("Which CSP does it need, and why does the box stay?") == [
        "Which CSP does it need",
        "why does the box stay?",
    ]
    assert split_question("What is X and how do I set it? Where is Y?") == [
        "What is X",
        "how do I set it",
        "Where is Y?",
    ]
    # "and" inside one part, and a single question, stay whole.
    for whole in ("How do I add MkDocs and Sphinx sites?", "What does the error mean?"):
        assert split_question(whole) == [whole]


def test_a_strong_part_lifts_its_best_answer_and_a_weak_part_does_not() -> None:
    def ranked(*pairs: tuple[str, float]) -> list[Passage]:
        return [Passage("/p", name, "P", name, name, score=score) for name, score in pairs]

    whole = ranked(("a", 10.0), ("b", 9.0), ("c", 8.0), ("d", 2.0))
    strong_part = ranked(("d", 9.0), ("a", 1.0))  # its best scores 0.9 of the whole's best
    weak_part = ranked(("e", 1.0))  # 0.1 of the whole's best
    found = merged([whole, strong_part, weak_part])
    assert [p.anchor for p in found] == ["a", "d", "b", "c", "e"]
    assert found[0].score == 10.0  # scores stay on the whole question's scale
    assert found[1].score == pytest.approx(10.0 * (9.0 / 10.0) ** PART_STRENGTH)


def test_hyphenated_compounds_are_found_as_written() -> None:
    question = "Is the Fine-Tune step -- or a sub--folder, -x or y- -- in agentskit-web-ask?"
    assert hyphenated_compounds(question) == ["fine-tune", "sub-folder", "agentskit-web-ask"]


def test_splitting_a_huge_question_stays_linear() -> None:
    import time

    # Patterns that backtrack took seconds on these (quadratic in the length).
    for question in ("x" * 16_384, "a" + " " * 16_384 + "b", "a-" * 8_192):
        started = time.perf_counter()
        hyphenated_compounds(question)
        split_question(question)
        assert time.perf_counter() - started < 0.5


def test_the_shipped_coverage_threshold_keeps_a_share_at_it_and_declines_one_under_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At the shipped NOT_FOUND_COVERAGE (not a test value) a question is answered; the next
    float below it is a near miss; at the shipped CLOSEST_MIN_COVERAGE still a near miss,
    and the next float below it declined. One coverage term: the in-passing test is exempt."""
    terms = [("proxy", (Phrase.of("proxy"),))]

    def hits_of(phrase: Phrase) -> dict[int, list[int]]:
        return {0: [0, 1, 0, 0]}  # in the heading of row 0

    def verdict_at(share: float) -> str:
        monkeypatch.setattr(decline, "coverage", lambda weights, rows: share)
        return decline.verdict(terms, [0], hits_of, 10)

    answered, closest = decline.NOT_FOUND_COVERAGE, decline.CLOSEST_MIN_COVERAGE
    assert verdict_at(answered) == "answered"
    assert verdict_at(math.nextafter(answered, 0.0)) == "closest"
    assert verdict_at(closest) == "closest"
    assert verdict_at(math.nextafter(closest, 0.0)) == "declined"


def test_the_coverage_threshold_lies_in_the_gap_calibrated_on_three_corpora() -> None:
    """docs/design/answer-eval.md: every value in (0.388, 0.3916] scores best on the tuning
    halves of all three evals; a value outside it was measured worse on one of them."""
    assert 0.388 < decline.NOT_FOUND_COVERAGE <= 0.3916


def test_the_near_miss_floor_lies_in_the_gap_calibrated_on_three_corpora() -> None:
    """decline.CLOSEST_MIN_COVERAGE: above the highest coverage (0.1666) of a question declined
    by coverage below the lowest one (0.1884) whose closest three sections hold a right one,
    on the tuning halves of all three evals."""
    assert 0.1666 < decline.CLOSEST_MIN_COVERAGE <= 0.1884


def test_a_vocabulary_fed_in_parts_counts_and_repairs_as_one_built_at_once() -> None:
    """The static index adds its word parts one by one (disjoint ranges: one dict
    update each); overlapping or repeated words take the counting path; and the
    trigram index a repair reads is built on the first repair, over every word."""
    texts = ["list limit tests", "gets alone template", "list template listing"]
    whole = Vocabulary(texts)
    parts = Vocabulary()
    parts.add_counts([("alone", 1), ("gets", 1)])  # disjoint: the fast path
    assert parts.repair("alon") == "alone"  # the trigram index is built now
    parts.add_counts([("limit", 1), ("list", 1), ("list", 1)])  # a word twice
    parts.add_counts([("listing", 1), ("template", 1), ("template", 1), ("tests", 1)])
    assert parts.counts == whole.counts
    assert parts.sorted_words() == whole.sorted_words()
    for typo in ("lst", "limt", "templat", "alon", "listng"):
        assert parts.repair(typo) == whole.repair(typo), typo


NAMED_DOCS = {
    "deploy.md": (
        "# Deploy\n\n## Deploy the backend\n\nDeploy the backend behind a proxy.\n\n"
        "## Database\n\nConnect the store to SQLAlchemy.\n\n"
        + "".join(f"## Topic {n}\n\nUnrelated text number {n} about colours.\n\n" for n in range(6))
    )
}


def test_named_words_are_capitalised_inside_a_sentence_or_in_capitals() -> None:
    assert decline.named_words("How do I deploy it with Helm?") == {"helm"}
    assert decline.named_words("Helm charts? Or Kubernetes") == {"kubernetes"}
    assert decline.named_words("SLA terms. Is there an SLA?") == {"sla"}
    assert decline.named_words('I said "Docker" and (Podman)') == {"docker", "podman"}
    # Under NAME_MIN_LETTERS letters, or lower-case: no name.
    assert decline.named_words("Can I use X or camelCase in a helm chart?") == frozenset()
    assert decline.NAME_MIN_LETTERS == 2
    assert decline.named_words("Is Qt ok?") == {"qt"}


def test_a_question_naming_something_the_docs_never_use_is_declined(tmp_path: Path) -> None:
    index = opened(tmp_path / "n", NAMED_DOCS)
    named = "How do I deploy the backend with Helm?"
    # Coverage alone keeps it (two of its three words are in the best section) ...
    assert _coverage_of(index, named, ranking.COVERAGE_PASSAGES_PER_PART) >= (
        decline.NOT_FOUND_COVERAGE
    )
    # ... but it names a tool the docs never mention.
    assert index.search(named, 3) == []
    # The same words, not written as a name, are a reader's own words: answered.
    assert [p.anchor for p in index.search("How do I deploy the backend with helm?", 3)][:1] == [
        "deploy-the-backend"
    ]
    # A capital that starts a sentence says nothing.
    assert index.search("Helm? How do I deploy the backend with it?", 3)


def test_a_name_found_at_the_start_of_a_docs_word_is_known(tmp_path: Path) -> None:
    index = opened(tmp_path / "p", NAMED_DOCS)
    question = "Connect the store to SQL"
    groups = index.groups(question)
    terms = coverage_terms(question, groups)
    names = decline.named_words(question)
    assert "sql" in names
    for phrase in decline.name_phrases(terms, names):
        index.hits(phrase)
    assert not decline.unknown_name(terms, names, index.hits)  # "SQLAlchemy" starts with it
    question = "Connect the store to SQLite"
    terms = coverage_terms(question, index.groups(question))
    assert decline.unknown_name(terms, decline.named_words(question), index.hits)


def test_the_candidate_rows_never_drop_under_the_minimum(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One or two passages are picked from as many rows as four are (CANDIDATES_MIN_ROWS);
    past that, CANDIDATES_PER_RESULT rows per passage."""
    index = index_of(tmp_path)
    counts: list[int] = []
    real = ranking.best_rows

    def counted(scores: dict[int, float], count: int) -> list[int]:
        counts.append(count)
        return real(scores, count)

    monkeypatch.setattr(ranking, "best_rows", counted)
    minimum = ranking.CANDIDATES_MIN_ROWS
    at = minimum // ranking.CANDIDATES_PER_RESULT
    for limit in (1, at, at + 1):
        counts.clear()
        index.search("add the widget to a Sphinx template", limit)
        assert counts == [max(minimum, limit * ranking.CANDIDATES_PER_RESULT)]
    assert counts == [minimum + ranking.CANDIDATES_PER_RESULT]
