"""What a first answer runs besides its adapter, as steps the page spreads over idle time.

Measured in the page at 4x CPU (docs/design/boot-long-tasks.md, "The first question"): after
the adapter's own warm-up, the first question's longest task was still 150-220 ms, and
much of it was first-use work, not the answer: pydantic building the memory record's models
on the first save, the source list's on the first sources, the FAQ's answer envelope
models on the first local answer, and the markdown parser's rules on the first text. The
widget runs these steps one per idle callback after ready (browser/widget.py
`run_when_idle`), each model in its own step and leaves first, so that no step also
generates the schemas of the models listed after it.

A step that is already done (a returning reader's restore built the record's models) costs
a dictionary look-up.
"""

import importlib
from collections.abc import Callable, Sequence
from typing import Final

Step = Callable[[], object]

MEMORY_RECORD_MODULE: Final = "agentskit_web.protocol.memory_record"
MEMORY_RECORD_MODELS: Final = (
    "TextPart",
    "ImagePart",
    "AudioPart",
    "VideoPart",
    "FilePart",
    "MemoryToolCall",
    "MemoryMessage",
    "MemoryRecord",
)
"""What every save validates (`encode_memory_record`), leaves first."""

COMPONENT_MODULE: Final = "agentskit_web.protocol.component"
COMPONENT_MODELS: Final = ("ComponentFallback", "ComponentFrame")
SOURCE_LIST_MODULE: Final = "agentskit_web.protocol.source_list"
SOURCE_LIST_MODELS: Final = ("Source", "SourceListProps")
"""The component frame and the source list every answer with sources shows."""

ANSWER_ENVELOPE_MODULE: Final = "agentskit_web.protocol.ask_request"
ANSWER_ENVELOPE_MODELS: Final = (
    "AnswerConfidence",
    "AnswerCitation",
    "AnswerBody",
    "LocalProvenance",
    "BackendProvenance",
    "AnswerSuggestion",
    "AnswerResult",
    "AnswerChoices",
    "AnswerEscalation",
)
"""What a FAQ's local answer (or its escalation) is validated as, leaves first."""

SAMPLE_ANSWER: Final = (
    "To **warm** the parser, a [link](/warm-up/) and `code`:\n\n"
    "- one item\n- another item\n\n"
    "```python\nprint('warm')\n```\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n"
)
"""Made-up Markdown with each construct an answer shows, parsed once so the parser's rules
run (and compile what they compile lazily) before a reader's answer needs them."""


def imported(name: str) -> Step:
    """A step that imports module `name`."""
    return lambda: importlib.import_module(name)


def built(module: str, model: str) -> Step:
    """A step that builds pydantic model `model` of `module` (a no-op once it is built)."""
    return lambda: getattr(importlib.import_module(module), model).model_rebuild()


def model_steps(module: str, models: Sequence[str]) -> list[Step]:
    """The module imported, then each model built in its own step, in the order given."""
    return [imported(module), *(built(module, model) for model in models)]


def first_answer_steps(local_answers: bool) -> list[Step]:
    """The FAQ answer envelope's models when the page has a knowledge artifact
    (`local_answers`), then the source list's and the memory record's, which the first
    answer's sources and its save (or a restore) validate."""
    faq = model_steps(ANSWER_ENVELOPE_MODULE, ANSWER_ENVELOPE_MODELS) if local_answers else []
    return [
        *faq,
        *model_steps(COMPONENT_MODULE, COMPONENT_MODELS),
        *model_steps(SOURCE_LIST_MODULE, SOURCE_LIST_MODELS),
        *model_steps(MEMORY_RECORD_MODULE, MEMORY_RECORD_MODELS),
    ]


def first_render() -> None:
    """Render SAMPLE_ANSWER as an answer is rendered (render plan and Markdown tree)."""
    from .view.render_plan import render_whole

    render_whole([{"kind": "text", "text": SAMPLE_ANSWER}])
