"""Deterministic local answers (PROTOCOL.md 8) as assistant content the widget can show.

`answer_locally` decides (answer, choices, or escalation); this module turns
an `answer` into ordered content (the markdown as text records, the
citations as a `source-list`) and `choices` into the envelope's message plus
a `choice-list` whose choices ask the suggested question. An escalation is
not content: the controller forwards it with the Ask request.
"""

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from ..protocol.component import COMPONENT_PROTOCOL
from ..protocol.content import AssistantContentEncoder
from ..protocol.diagnostics import ProtocolError
from ..protocol.limits import COMPONENT_FALLBACK_SUMMARY_MAX_CHARS
from ..protocol.source_list import SOURCE_LIST_COMPONENT_KEY
from ..protocol.text_metrics import js_slice

LOCAL_SOURCES_INSTANCE: Final = "local-sources"
LOCAL_CHOICES_INSTANCE: Final = "local-choices"
SOURCES_LABEL: Final = "Sources"


@dataclass(frozen=True)
class LocalOutcome:
    """What the knowledge artifact says about one question.

    `content` is set for an answer or choices (ordered content, complete);
    `choices` maps choice ids to the question each one asks; `escalation` is
    the envelope to send with the Ask request otherwise.
    """

    content: str | None = None
    choices: Mapping[str, str] = field(default_factory=dict)
    escalation: dict[str, Any] | None = None


def _frame(key: str, instance: str, props: dict[str, Any], summary: str) -> dict[str, Any]:
    return {
        "protocol": COMPONENT_PROTOCOL,
        "version": 1,
        "type": "render",
        "componentKey": key,
        "instanceId": instance,
        "props": props,
        "fallback": {
            "kind": key,
            "summary": js_slice(summary, COMPONENT_FALLBACK_SUMMARY_MAX_CHARS),
        },
    }


def _sources_frame(citations: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not citations:
        return None
    sources = [
        {"id": item["id"], "title": item["title"], "url": item["href"]} for item in citations
    ]
    titles = ", ".join(item["title"] for item in citations)
    props = {"label": SOURCES_LABEL, "sources": sources}
    return _frame(SOURCE_LIST_COMPONENT_KEY, LOCAL_SOURCES_INSTANCE, props, f"Sources: {titles}.")


def _answer_content(answer: Mapping[str, Any]) -> str:
    encoder = AssistantContentEncoder()
    content = encoder.encode_text(answer["markdown"])
    frame = _sources_frame(list(answer.get("citations", [])))
    if frame is not None:
        # A citation the source list refuses must not hide the answer.
        with contextlib.suppress(ProtocolError):
            content += encoder.encode({"kind": "component", "frame": frame})
    return content


def _choices_content(envelope: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    suggestions = list(envelope["suggestions"])
    choices = [{"id": item["id"], "label": item["label"]} for item in suggestions]
    labels = ", ".join(item["label"] for item in suggestions)
    frame = _frame(
        "choice-list",
        LOCAL_CHOICES_INSTANCE,
        {"prompt": envelope["message"], "choices": choices},
        f"{envelope['message']} {labels}.",
    )
    encoder = AssistantContentEncoder()
    content = encoder.encode({"kind": "component", "frame": frame})
    return content, {item["id"]: item["value"] for item in suggestions}


def local_outcome(artifact: Any, question: str, now: datetime | None = None) -> LocalOutcome:
    """Ask the artifact (`now` decides staleness); never raises (failure = `corrupt` escalation)."""
    from ..protocol.knowledge import answer_locally  # imported when a page has a FAQ

    try:
        envelope = answer_locally(artifact, question, now=now).to_wire()
        outcome = envelope.get("outcome")
        if outcome == "answer":
            return LocalOutcome(content=_answer_content(envelope["answer"]))
        if outcome == "choices":
            content, choices = _choices_content(envelope)
            return LocalOutcome(content=content, choices=choices)
        return LocalOutcome(escalation=envelope)
    except Exception:  # a bad artifact must not stop the question from reaching the service
        return LocalOutcome(escalation=_corrupt(question))


def _corrupt(question: str) -> dict[str, Any] | None:
    from ..protocol.ask_request import build_escalation

    try:
        wire: dict[str, Any] = build_escalation(question, "corrupt").to_wire()
    except Exception:  # e.g. a question the envelope cannot carry: send without one
        return None
    return wire
