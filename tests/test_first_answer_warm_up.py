"""The idle steps leave nothing for the first answer to build, and each builds one model.

Each check runs in a fresh interpreter, so models other tests built do not count.
pydantic builds a model (`complete_model_class`) on its first validation when the model
defers its build (protocol/wire_model.py); the spy records each build.
"""

from __future__ import annotations

import json
import subprocess
import sys

from agentskit_web.chat.warm_up import (
    ANSWER_ENVELOPE_MODELS,
    COMPONENT_MODELS,
    MEMORY_RECORD_MODELS,
    SOURCE_LIST_MODELS,
)

SPY = """
import json
import pydantic._internal._model_construction as construction
built = []
_complete = construction.complete_model_class
def _spy(cls, *args, **kwargs):
    built.append(cls.__qualname__)
    return _complete(cls, *args, **kwargs)
construction.complete_model_class = _spy
"""

FIRST_ANSWER = """
from agentskit_web.chat.memory.web_storage import encode_memory_record
from agentskit_web.protocol.component import component_frame_or_none
from agentskit_web.protocol.source_list import source_list_props_or_none
from agentskit_web.protocol.ask_request import build_escalation
props = {"label": "Sources", "sources": [{"id": "s1", "title": "Install", "url": "/install/"}]}
frame = {"protocol": "agentskit.chat.component", "version": 1, "type": "render",
         "componentKey": "source-list", "instanceId": "c1", "props": props,
         "fallback": {"kind": "sources", "summary": "Install"}}
assert component_frame_or_none(frame) is not None
assert source_list_props_or_none(props) is not None
build_escalation("how do I install it?", "miss").to_wire()
message = {"id": "a1", "role": "assistant", "content": "Run pip.", "status": "complete",
           "createdAt": "2026-12-06T12:00:00.000Z",
           "parts": [{"type": "text", "text": "Run pip."}],
           "toolCalls": [{"id": "t1", "name": "cite", "args": {}, "status": "complete"}]}
encode_memory_record([message], 1_000_000)
"""


def run(code: str) -> list[list[str]]:
    result = subprocess.run(
        [sys.executable, "-c", SPY + code], capture_output=True, text=True, check=True
    )
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_after_the_idle_steps_the_first_answer_builds_no_model() -> None:
    (built,) = run(
        "from agentskit_web.chat.warm_up import first_answer_steps\n"
        "for step in first_answer_steps(local_answers=True):\n"
        "    step()\n"
        "built.clear()\n" + FIRST_ANSWER + "print(json.dumps(built))\n"
    )
    assert built == []


def test_without_the_steps_the_first_answer_builds_the_models() -> None:
    """The check above could fail: the same answer cold builds each model it needs."""
    (built,) = run(FIRST_ANSWER + "print(json.dumps(built))\n")
    assert sorted(built) == [
        "AnswerEscalation",
        "ComponentFrame",
        "MemoryRecord",
        "SourceListProps",
    ]


MODEL_SCHEMAS = """
from pydantic._internal._generate_schema import GenerateSchema
_model_schema = GenerateSchema._model_schema
def _schema_spy(self, cls):
    built.append(cls.__qualname__)
    return _model_schema(self, cls)
GenerateSchema._model_schema = _schema_spy
"""


def test_no_step_generates_the_schema_of_a_model_listed_after_it() -> None:
    """Leaves first: a model built before the models of its fields generates their schemas
    too, in one longer step (the step of each model listed later would then be a no-op)."""
    per_step = run(
        MODEL_SCHEMAS + "from agentskit_web.chat.warm_up import first_answer_steps\n"
        "for step in first_answer_steps(local_answers=True):\n"
        "    built.clear()\n"
        "    step()\n"
        "    print(json.dumps(built))\n"
    )
    listed = [
        model
        for models in (
            ANSWER_ENVELOPE_MODELS,
            COMPONENT_MODELS,
            SOURCE_LIST_MODELS,
            MEMORY_RECORD_MODELS,
        )
        for model in (None, *models)  # None: the step importing the module
    ]
    assert len(per_step) == len(listed)
    for index, generated in enumerate(per_step):
        assert listed[index] is None or listed[index] in generated
        assert not set(generated) & set(listed[index + 1 :]), (listed[index], generated)


def test_a_page_without_a_faq_leaves_the_answer_envelope_unimported() -> None:
    (loaded,) = run(
        "import sys\n"
        "from agentskit_web.chat.warm_up import first_answer_steps\n"
        "for step in first_answer_steps(local_answers=False):\n"
        "    step()\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    assert "agentskit_web.protocol.ask_request" not in loaded
    assert "agentskit_web.protocol.memory_record" in loaded
