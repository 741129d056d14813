"""Mounting the widget imports only what a page needs before its first question.

Each check runs in a fresh interpreter, so modules other tests imported do not count.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Imported with the widget module (what its mount pays); loaded on first use instead.
DEFERRED = (
    "agentskit_web.chat.components.standard",  # until a component arrives
    "agentskit_web.protocol.ask_request",  # until an escalation is sent
    "agentskit_web.chat.ask.body",  # until the first answer streams
    "agentskit_web.chat.ask.projection",  # until the first question
    "markdown_it",  # until the first answer is rendered
    "agentskit_web.chat.static_answers",  # until a page with a static index mounts
    "agentskit_web.answering.static_index",  # until a static answer is asked for
)


def loaded_after(code: str) -> set[str]:
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    return set(json.loads(result.stdout.splitlines()[-1]))


def test_importing_the_widget_defers_the_catalog_models_the_body_reader_and_markdown() -> None:
    loaded = loaded_after("import agentskit_web.browser.widget")
    assert "agentskit_web.chat.components.catalog" in loaded  # the cheap part is there
    assert not [name for name in DEFERRED if name in loaded]


@pytest.mark.parametrize(
    ("code", "module"),
    [
        (
            "from agentskit_web.chat.components.catalog import STANDARD_COMPONENTS\n"
            "assert len(STANDARD_COMPONENTS) == 12",
            "agentskit_web.chat.components.standard",
        ),
        (
            "from agentskit_web.chat.components.catalog import STANDARD_MANIFEST\n"
            "assert 'source-list' in STANDARD_MANIFEST",
            "agentskit_web.chat.components.standard",
        ),
        (
            "from agentskit_web.chat.ask.adapter import build_ask_request\n"
            "build_ask_request([{'role': 'user', 'content': 'hi'}])",
            "agentskit_web.chat.ask.projection",
        ),
    ],
)
def test_first_use_loads_what_was_deferred(code: str, module: str) -> None:
    assert module in loaded_after(code)


def test_the_ask_adapters_idle_steps_load_the_first_answers_modules_and_models() -> None:
    """What the widget runs one per idle callback after ready for an Ask endpoint: the
    body reader and the standard components, deferred at mount, and the event models."""
    loaded = loaded_after(
        "from agentskit_web.chat.ask.adapter import create_ask_adapter\n"
        "from agentskit_web.protocol.ask_events import AskDoneEvent, AskTextEvent\n"
        "steps = create_ask_adapter(endpoint='/api/ask').warm_up_steps()\n"
        "assert len(steps) >= 8 and not AskTextEvent.__pydantic_complete__\n"
        "for step in steps:\n"
        "    step()\n"
        "assert AskTextEvent.__pydantic_complete__ and AskDoneEvent.__pydantic_complete__\n"
    )
    assert "agentskit_web.chat.ask.body" in loaded
    assert "agentskit_web.chat.components.standard" in loaded
