"""The `answers` bench section: the eval set is well formed and every figure is computed."""

from pathlib import Path

import pytest

from agentskit_web.answering.chunk import Passage
from agentskit_web.bench.answers import (
    RANK_DEPTH,
    EvalQuestion,
    Outcome,
    format_eval,
    load_eval_set,
    ranked_sections,
    run_eval,
)
from agentskit_web.server.retrieval import index_folder

ROOT = Path(__file__).resolve().parents[1]


def _question(needs: str, expected: list[str]) -> EvalQuestion:
    return EvalQuestion(
        id="q", split="tuning", kind="direct", question="q?", needs=needs, expected=expected
    )


def test_the_eval_set_has_what_the_issue_asks_for() -> None:
    eval_set = load_eval_set()
    questions = eval_set.questions
    assert len(questions) >= 80
    assert len({q.id for q in questions}) == len(questions)
    kinds = {q.kind for q in questions}
    assert {"direct", "paraphrase", "synonym", "typo", "two-section", "unanswerable"} <= kinds
    assert sum(q.needs == "none" for q in questions) >= 15
    assert all((q.needs == "none") == (not q.expected) for q in questions)
    assert all(len(q.expected) >= 2 for q in questions if q.needs == "all")
    assert {q.split for q in questions} == {"tuning", "heldout"}


def test_every_expected_section_exists_in_the_corpus() -> None:
    eval_set = load_eval_set()
    index = index_folder(ROOT / eval_set.corpus.docs, exclude=eval_set.corpus.exclude)
    known = set(ranked_sections(index.all_passages()))
    missing = {s for q in eval_set.questions for s in q.expected} - known
    assert not missing


def test_recall_counts_any_and_all_questions_differently() -> None:
    sections = ["/a#x", "/b", "/c#y"]
    any_question = Outcome(_question("any", ["/c#y", "/z"]), sections, 0.0)
    assert any_question.recall_at(1) == 0.0 and any_question.recall_at(3) == 1.0
    assert any_question.reciprocal_rank() == pytest.approx(1 / 3)
    all_question = Outcome(_question("all", ["/a#x", "/c#y"]), sections, 0.0)
    assert all_question.recall_at(1) == 1.0  # out of at most k sections
    assert all_question.recall_at(2) == 0.5
    assert all_question.recall_at(3) == 1.0
    declined = Outcome(_question("any", ["/a#x"]), [], 0.0)
    assert declined.declined and declined.recall_at(3) == 0.0 and declined.reciprocal_rank() == 0


def test_a_long_section_counts_once_in_the_ranking() -> None:
    passages = [
        Passage("/p", "s", "P", "S", "one"),
        Passage("/p", "s", "P", "S", "two"),
        Passage("/p", None, "P", "P", "top"),
    ]
    assert ranked_sections(passages) == ["/p#s", "/p"]


def test_the_run_scores_both_rankers_on_both_splits() -> None:
    result = run_eval()
    assert set(result.scores) == {"shipped", "plain BM25"}
    for by_split in result.scores.values():
        assert set(by_split) == {"tuning", "heldout", "all"}
        total = by_split["all"]
        assert total.answerable + total.unanswerable == len(load_eval_set().questions)
        for scores in by_split.values():
            assert 0.0 <= scores.recall[1] <= scores.recall[3] <= 1.0
            assert 0.0 <= scores.mrr <= 1.0 and 0.0 <= scores.declined <= 1.0
    for outcomes in result.outcomes.values():
        assert all(len(o.sections) <= RANK_DEPTH for o in outcomes)
    table = format_eval(result)
    assert "R@3" in table and "heldout" in table and "plain BM25" in table
    # The shipped rules earn their place: on every split they rank at least as well as
    # plain BM25 over the same index, and they decline where plain BM25 never does.
    for split, shipped in result.scores["shipped"].items():
        plain = result.scores["plain BM25"][split]
        assert shipped.recall[1] >= plain.recall[1], split
        assert shipped.recall[3] >= plain.recall[3] and shipped.mrr >= plain.mrr, split
        assert shipped.declined > plain.declined, split


def test_make_bench_reaches_the_answers_section(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from agentskit_web.bench.__main__ import main

    target = tmp_path / "answers.json"
    assert main(["answers", "--corpus", "ours", "--json", str(target)]) == 0
    printed = capsys.readouterr().out
    assert "plain BM25" in printed and "shipped" in printed
    written = json.loads(target.read_text(encoding="utf-8"))
    assert set(written) == {"ours"}
    assert set(written["ours"]["shipped"]) == {"tuning", "heldout", "all"}
    assert written["ours"]["shipped"]["all"]["answerable"] >= 80
