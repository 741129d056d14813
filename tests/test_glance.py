"""The conversation's glance (chat/memory/glance.py): bounded plain text for the loader."""

from __future__ import annotations

import json

from agentskit_web.answering.chunk import Passage
from agentskit_web.answering.extractive import compose_extractive_answer
from agentskit_web.chat.memory.glance import (
    ELLIPSIS,
    GLANCE_ANSWER_MAX_CHARS,
    GLANCE_MAX_CHARS,
    GLANCE_QUESTION_MAX_CHARS,
    GLANCE_TURNS,
    conversation_glance,
    glance_key,
)
from agentskit_web.chat.message import ChatMessage
from agentskit_web.protocol.text_metrics import js_length


def question(text: str, index: int = 0) -> ChatMessage:
    return ChatMessage(f"u-{index}", "user", text, "complete", "2026-01-01T00:00:00.000Z")


def answer(text: str, index: int = 0, notice: str | None = None) -> ChatMessage:
    return ChatMessage(
        f"a-{index}", "assistant", text, "complete", "2026-01-01T00:00:00.000Z", notice=notice
    )


def turns(text: str | None) -> list[dict[str, str]]:
    assert text is not None
    value = json.loads(text)
    assert value["v"] == 1
    return list(value["turns"])


def test_an_empty_conversation_has_no_glance() -> None:
    assert conversation_glance([]) is None
    assert conversation_glance([question("   ")]) is None
    assert glance_key("agentskit:ask:ask") == "agentskit:ask:ask:glance"


def test_questions_and_answers_become_one_line_of_plain_text() -> None:
    markdown = "## Setup\n\nRun **`pip install x`**, see [the guide](/guide/#a).\n```py\nx()\n```"
    glance = conversation_glance([question("How do I\n\tinstall it?"), answer(markdown)])
    assert turns(glance) == [
        {"q": "How do I install it?", "a": "Setup Run pip install x, see the guide. x()"}
    ]


def test_quotes_lists_and_emphasis_lose_their_marks_but_snake_case_stays() -> None:
    markdown = "> Plug it in. [1]\n\n- *Lantern* › _Charge_\n2. the default_mode setting"
    [turn] = turns(conversation_glance([question("Q"), answer(markdown)]))
    assert turn["a"] == "Plug it in. Lantern › Charge the default_mode setting"


def test_an_answer_shows_its_opening_without_citation_markers() -> None:
    markdown = (
        "> Plug it in [1]. It glows [2][3].\n\n**More from the docs**\n- *Storage* [4]: Keep it."
        "\n\nSee [1](/a/) and items[1]."
    )
    [turn] = turns(conversation_glance([question("what is x[1]?"), answer(markdown)]))
    assert turn == {"q": "what is x[1]?", "a": "Plug it in. It glows."}
    [turn] = turns(conversation_glance([question("Q"), answer("See [1](/a/) and items[1].")]))
    assert turn["a"] == "See 1 and items."


def test_a_one_source_answer_shows_its_quote_without_the_quotes_note() -> None:
    """The note names the sources listed below the answer; the glance lists none."""
    text = "Plug the lantern in to charge it."
    passage = Passage("/lantern/", "charge", "Lantern", "Charge", text)
    markdown = compose_extractive_answer("how do I charge the lantern", [passage])
    assert "direct quotes" in markdown
    [turn] = turns(conversation_glance([question("Q"), answer(markdown)]))
    assert turn["a"] == text


def test_a_notice_answer_and_an_unanswered_question_are_kept_as_they_are() -> None:
    glance = conversation_glance(
        [question("Q1", 1), answer("", 1, notice="Not found in the docs."), question("Q2", 2)]
    )
    assert turns(glance) == [{"q": "Q1", "a": "Not found in the docs."}, {"q": "Q2", "a": ""}]


def test_only_the_latest_turns_are_kept() -> None:
    messages = []
    for index in range(GLANCE_TURNS + 2):
        messages += [question(f"Q{index}", index), answer(f"A{index}", index)]
    kept = turns(conversation_glance(messages))
    assert [turn["q"] for turn in kept] == [f"Q{i}" for i in range(2, GLANCE_TURNS + 2)]


def test_texts_at_their_limit_are_whole_and_past_it_are_cut_with_an_ellipsis() -> None:
    at_limit = [question("q" * GLANCE_QUESTION_MAX_CHARS), answer("a" * GLANCE_ANSWER_MAX_CHARS)]
    [turn] = turns(conversation_glance(at_limit))
    assert turn == {"q": "q" * GLANCE_QUESTION_MAX_CHARS, "a": "a" * GLANCE_ANSWER_MAX_CHARS}
    past = [question("q" * (GLANCE_QUESTION_MAX_CHARS + 1)), answer("😀" * GLANCE_ANSWER_MAX_CHARS)]
    [turn] = turns(conversation_glance(past))
    assert js_length(turn["q"]) == GLANCE_QUESTION_MAX_CHARS and turn["q"].endswith(ELLIPSIS)
    assert js_length(turn["a"]) <= GLANCE_ANSWER_MAX_CHARS and turn["a"].endswith(ELLIPSIS)
    assert "\ud83d" not in turn["a"], "never half a surrogate pair"


def test_the_worst_escaping_stays_within_what_the_loader_accepts() -> None:
    messages = []
    for index in range(GLANCE_TURNS):
        messages += [question('"\\' * 400, index), answer('"\\' * 800, index)]
    text = conversation_glance(messages)
    assert text is not None and js_length(text) <= GLANCE_MAX_CHARS
    assert all(turn["q"].startswith('"\\') for turn in turns(text))


def test_the_loader_checks_the_same_bounds() -> None:
    """web/agentskit-ask.js validates what this module writes: its constants must agree."""
    import re
    from pathlib import Path

    from agentskit_web.chat.memory import glance

    loader = (Path(__file__).resolve().parents[1] / "web" / "agentskit-ask.js").read_text()
    found = {
        name: value.replace("_", "")
        for name, value in re.findall(r"^const (GLANCE_\w+) = ([\w\":]+);", loader, re.MULTILINE)
    }
    expected = {
        name: json.dumps(getattr(glance, name))
        for name in (
            "GLANCE_SUFFIX",
            "GLANCE_VERSION",
            "GLANCE_MAX_CHARS",
            "GLANCE_TURNS",
            "GLANCE_QUESTION_MAX_CHARS",
            "GLANCE_ANSWER_MAX_CHARS",
        )
    }
    assert found == expected
