"""A near miss: a question declined by coverage alone, but close, is shown its closest sections.

The engine gives them (`SearchIndex.find`, `StaticSearch.find`) marked as not
grounded, while `search` still gives nothing; the backend and the page both say
CLOSEST_MESSAGE and cite those sections, and neither quotes them nor hands them
to a generator. A named thing the docs never use, a word in passing, or a
coverage under CLOSEST_MIN_COVERAGE is still declined outright.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence

import pytest

from _ask_helpers import ScriptedGenerator, ScriptedRetriever, ask_body, post, site, text_of
from agentskit_web.answering import decline
from agentskit_web.answering.chunk import Found
from agentskit_web.answering.decline import CLOSEST_MESSAGE, NOT_FOUND_COVERAGE
from agentskit_web.answering.ranking import SearchIndex
from agentskit_web.answering.site_index import SiteIndex
from agentskit_web.answering.static_index import StaticIndexFiles, StaticSearch, split_index
from agentskit_web.chat.message import message_parts
from agentskit_web.server.ask_app import create_ask_app
from agentskit_web.server.metrics import MemoryMetrics
from agentskit_web.server.persistence import SessionKey, SessionStore
from agentskit_web.server.retrieval import IndexRetriever
from test_static_answers import SITE_CHUNKS, Files, answer_of, conversation, real_adapter

CHUNKS = SITE_CHUNKS
"""The lantern site of the static answers tests: charging, cleaning, pairing."""
NEAR_MISS = "Can the lantern charge from a solar panel?"
"""Shares "lantern" and "charge" with the charging section, not what it asks about."""
ANSWERED = "How do I charge the lantern in my car?"
UNRELATED = "What is the airspeed velocity of an unladen swallow?"
LIMIT = 3


def index() -> SearchIndex:
    return SearchIndex.from_chunks(CHUNKS)


def static_files() -> StaticIndexFiles:
    site_index = SiteIndex.of(CHUNKS, site_name="Lumen", base_path="/", generator="mkdocs", pages=3)
    return split_index(site_index)


def coverage_of(question: str, monkeypatch: pytest.MonkeyPatch) -> float:
    """The coverage the decline test computes for the question (read as it runs)."""
    seen: list[float] = []
    original = decline.coverage

    def recorded(weights: Sequence[tuple[float, set[int]]], rows: set[int]) -> float:
        seen.append(original(weights, rows))
        return seen[-1]

    monkeypatch.setattr(decline, "coverage", recorded)
    index().find(question, LIMIT)
    monkeypatch.setattr(decline, "coverage", original)
    assert len(seen) == 1, "one decline test per question of one part"
    return seen[0]


# ---- the engine


def test_a_near_miss_gives_its_closest_sections_not_grounded() -> None:
    found = index().find(NEAR_MISS, LIMIT)
    assert not found.grounded
    assert [p.anchor for p in found.passages] == ["charge-the-battery"]
    assert found.answered == []
    assert index().search(NEAR_MISS, LIMIT) == [], "search answers nothing for a near miss"


def test_an_answered_question_is_grounded_and_search_gives_the_same_passages() -> None:
    found = index().find(ANSWERED, LIMIT)
    assert found.grounded and found.passages
    assert found.answered == index().search(ANSWERED, LIMIT) == list(found.passages)


def test_a_question_about_nothing_here_is_still_declined_outright() -> None:
    assert index().find(UNRELATED, LIMIT) == Found()


def test_the_near_miss_floor_at_the_limit_and_one_past(monkeypatch: pytest.MonkeyPatch) -> None:
    share = coverage_of(NEAR_MISS, monkeypatch)
    assert decline.CLOSEST_MIN_COVERAGE <= share < NOT_FOUND_COVERAGE
    monkeypatch.setattr(decline, "CLOSEST_MIN_COVERAGE", share)
    assert not index().find(NEAR_MISS, LIMIT).grounded
    assert index().find(NEAR_MISS, LIMIT).passages, "at the floor: a near miss"
    monkeypatch.setattr(decline, "CLOSEST_MIN_COVERAGE", math.nextafter(share, 1.0))
    assert index().find(NEAR_MISS, LIMIT) == Found(), "just under the floor: declined"


def test_the_answer_bound_at_the_limit_and_one_past(monkeypatch: pytest.MonkeyPatch) -> None:
    share = coverage_of(NEAR_MISS, monkeypatch)
    monkeypatch.setattr(decline, "NOT_FOUND_COVERAGE", share)
    assert index().find(NEAR_MISS, LIMIT).grounded, "at the answer bound: answered"
    monkeypatch.setattr(decline, "NOT_FOUND_COVERAGE", math.nextafter(share, 1.0))
    assert not index().find(NEAR_MISS, LIMIT).grounded


@pytest.mark.parametrize(
    ("question", "rule"),
    [
        ("Can the lantern charge from a Tesla wall box?", "a name the docs never use"),
        ("Hold on, what does a clean sweep cost?", "one word, in passing"),
    ],
)
def test_the_other_declines_stay_outright_whatever_the_floor(
    question: str, rule: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(decline, "CLOSEST_MIN_COVERAGE", 0.0)
    assert index().find(question, LIMIT) == Found(), rule


def test_the_static_index_gives_the_same_near_miss_and_fetches_its_text() -> None:
    files = static_files()
    search = StaticSearch(files.manifest)
    rounds = 0
    while names := search.parts_for(NEAR_MISS, LIMIT):
        rounds += 1
        for name in names:
            assert search.add_part(name, files.parts[name]) is None
    assert rounds >= 2, "the closest sections' text is a round of its own"
    assert search.find(NEAR_MISS, LIMIT) == index().find(NEAR_MISS, LIMIT)
    assert search.search(NEAR_MISS, LIMIT) == []


# ---- the backend


def near_miss_retriever() -> ScriptedRetriever:
    passages = tuple(index().find(NEAR_MISS, LIMIT).passages)

    class Closest(ScriptedRetriever):
        async def retrieve(self, question: str, limit: int) -> Found:  # type: ignore[override]
            self.calls.append(question)
            return Found(passages[:limit], grounded=False)

    return Closest()


def test_the_backend_says_a_near_miss_and_cites_the_closest_sections() -> None:
    generator = ScriptedGenerator(model_name="some-model")
    app = create_ask_app(site(), None, retriever=near_miss_retriever(), generator=generator)
    reply = post(app, ask_body(NEAR_MISS))
    assert reply.status == 200
    events = reply.events
    assert text_of(events) == CLOSEST_MESSAGE
    assert [e["type"] for e in events][-2:] == ["tool", "done"]
    sources = events[-2]["args"]["sources"]
    assert [(s["path"], s.get("anchor")) for s in sources] == [
        ("/guide/setup/charging/", "charge-the-battery")
    ]
    assert generator.requests == [], "no generator is handed passages that do not answer"
    assert "model" not in events[-1], "the text is ours, not a model's"


def test_a_near_miss_is_a_rejected_retrieval_in_the_metrics() -> None:
    """The stream goes on, but the site's owner counts it with the declines."""
    metrics = MemoryMetrics()
    app = create_ask_app(site(), None, retriever=IndexRetriever(index()), metrics=metrics)
    outcomes = {}
    for question in (ANSWERED, NEAR_MISS):
        assert post(app, ask_body(question)).status == 200
        retrieval = [m for m in metrics.records if m.name == "retrieval.total_ms"]
        outcomes[question] = retrieval[-1].outcome
    assert outcomes == {ANSWERED: "ok", NEAR_MISS: "rejected"}


def test_the_backend_over_an_index_answers_a_near_miss_and_keeps_it() -> None:
    store = SessionStore()
    app = create_ask_app(
        site(persistence__mode="required"),
        None,
        retriever=IndexRetriever(index()),
        generator=ScriptedGenerator(),
        session_store=store,
    )
    reply = post(app, ask_body(NEAR_MISS, sessionId="s-1"))
    assert text_of(reply.events) == CLOSEST_MESSAGE
    record = store.load_sync(SessionKey("test-site", "anonymous", "s-1"))
    assert [(m.role, m.content) for m in record.messages] == [
        ("user", NEAR_MISS),
        ("assistant", CLOSEST_MESSAGE),
    ]
    declined = post(app, ask_body(UNRELATED, sessionId="s-1"))
    assert declined.status == 422, "an outright decline is still a 422"


# ---- the page, against the backend's events


def test_the_page_says_and_cites_a_near_miss_as_the_backend_does() -> None:
    files = static_files()
    folder = "http://site.test/agentskit/index/"
    served = {folder + name: (200, data) for name, data in files.all_files().items()}
    chat = conversation(real_adapter(Files(served), folder + files.manifest_name))
    asyncio.run(chat.send(NEAR_MISS))
    answer = answer_of(chat)
    assert answer.status == "complete" and answer.in_page == "static"
    parts = message_parts(answer)
    shown = [source["url"] for source in parts[-1]["frame"]["props"]["sources"]]

    backend = post(
        create_ask_app(site(), None, retriever=IndexRetriever(index())), ask_body(NEAR_MISS)
    )
    cited = backend.events[-2]["args"]["sources"]
    assert parts[0]["text"] == text_of(backend.events) == CLOSEST_MESSAGE
    assert shown == [f"{s['path']}#{s['anchor']}" for s in cited]


OFF_TOPIC = "Is a damp frosted basement bad for my dog and cat?"
"""Shares "damp" and "frosted" with the cleaning section's text, neither with its titles."""


def test_closest_sections_whose_titles_hold_none_of_the_words_are_declined_outright(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 32: an off-topic question that shares only words a section's text uses in
    passing gets the plain decline, not "these sections come closest"; the same question
    without the title test would be a near miss, and one sharing a heading's word still is."""
    assert index().find(OFF_TOPIC, LIMIT) == Found()
    assert not index().find(NEAR_MISS, LIMIT).grounded
    assert index().find(NEAR_MISS, LIMIT).passages, "'charge' is in the closest heading"
    monkeypatch.setattr(decline, "titled", lambda *_: True)
    assert index().find(OFF_TOPIC, LIMIT).passages, "without the rule: a near miss"
