"""What the first answer over the Ask stream runs, as steps the page spreads over idle time.

The first answer imports the body reader (deferred at mount: tests/test_deferred_imports.py)
and makes pydantic build each Ask event model on its first validation: in one piece that
was a main-thread task of about 250 ms at 4x CPU, paid while the reader waited for the
first words. The widget runs these steps one per idle callback after ready
(browser/widget.py `run_when_idle`), leaves first, so each is a task of its own.
"""

from typing import Final

from ..warm_up import Step, built, imported

ASK_EVENTS: Final = "agentskit_web.protocol.ask_events"
"""The Ask events' models, built one per step."""

ANSWER_PATH_MODULES: Final = (
    "encodings.utf_8_sig",  # the body's decoder
    ASK_EVENTS,
    "agentskit_web.protocol.content",
    "agentskit_web.protocol.ask_stream",
    "agentskit_web.chat.ask.projection",
    "agentskit_web.chat.ask.body",
)
"""The body reader and what it imports that the mount did not, leaves first."""

EVENT_MODELS: Final = ("AskTextEvent", "AskToolEvent", "AskDoneEvent")
"""The events every answer has (text, its sources tool call, done)."""

COMPONENTS_MODULE: Final = "agentskit_web.chat.components.standard"
"""The standard components (the source list every answer shows), deferred until one comes."""


def answer_path_steps() -> list[Step]:
    """The imports, then each event model built, then the standard components."""
    return [
        *(imported(name) for name in ANSWER_PATH_MODULES),
        *(built(ASK_EVENTS, model) for model in EVENT_MODELS),
        imported(COMPONENTS_MODULE),
    ]
