"""`define_chat`: one validated, immutable chat definition."""

import dataclasses
from typing import Any

import pytest
from pydantic import BaseModel

from agentskit_web.chat import (
    STANDARD_COMPONENTS,
    STANDARD_MANIFEST,
    ChatDefinition,
    ComponentDefinition,
    define_chat,
    define_component_manifest,
)
from agentskit_web.protocol.diagnostics import ProtocolError
from agentskit_web.protocol.limits import JS_MAX_SAFE_INTEGER, SAFE_ID_MAX_CHARS

ADAPTER = object()


class Memory:
    async def load(self) -> list[dict[str, Any]]:
        return []

    async def save(self, messages: list[dict[str, Any]]) -> None:
        return None

    async def clear(self) -> None:
        return None


class NoteProps(BaseModel):
    text: str


NOTE = ComponentDefinition(key="note", props_schema=NoteProps)


def test_minimal_definition_uses_the_standard_catalog() -> None:
    chat = define_chat(id="docs-ask", adapter=ADAPTER, memory=Memory())
    assert isinstance(chat, ChatDefinition)
    assert chat.id == "docs-ask"
    assert chat.adapter is ADAPTER
    assert chat.revision == 1
    assert chat.components is STANDARD_MANIFEST


def test_definition_is_frozen() -> None:
    chat = define_chat(id="docs-ask", adapter=ADAPTER, memory=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        chat.revision = 2  # type: ignore[misc]


def test_memory_is_optional() -> None:
    assert define_chat(id="a", adapter=ADAPTER).memory is None


def test_components_accept_a_manifest_or_definitions() -> None:
    manifest = define_component_manifest([NOTE])
    assert define_chat(id="a", adapter=ADAPTER, components=manifest).components is manifest
    built = define_chat(id="a", adapter=ADAPTER, components=[NOTE]).components
    assert built["note"] is NOTE
    assert set(STANDARD_COMPONENTS) <= set(built)


@pytest.mark.parametrize(
    "components",
    [
        [ComponentDefinition(key="source-list", props_schema=NoteProps)],
        [NOTE, NOTE],
        [ComponentDefinition(key="Bad", props_schema=NoteProps)],
        "note",
    ],
)
def test_invalid_components_are_refused(components: Any) -> None:
    with pytest.raises(ProtocolError) as raised:
        define_chat(id="a", adapter=ADAPTER, components=components)
    assert raised.value.code == "AK_CONFIG_INVALID"


def test_id_at_the_length_limit() -> None:
    assert define_chat(id="a" * SAFE_ID_MAX_CHARS, adapter=ADAPTER).id == "a" * SAFE_ID_MAX_CHARS


@pytest.mark.parametrize(
    "chat_id",
    ["", "a" * (SAFE_ID_MAX_CHARS + 1), "-a", "docs ask", "docs/ask", "docs\n", None, 1],
)
def test_invalid_id_is_refused(chat_id: Any) -> None:
    with pytest.raises(ProtocolError) as raised:
        define_chat(id=chat_id, adapter=ADAPTER)
    assert (raised.value.code, raised.value.message) == (
        "AK_CONFIG_INVALID",
        "Chat definition id is invalid.",
    )


@pytest.mark.parametrize("revision", [1, 2, JS_MAX_SAFE_INTEGER])
def test_valid_revisions(revision: int) -> None:
    assert define_chat(id="a", adapter=ADAPTER, revision=revision).revision == revision


@pytest.mark.parametrize("revision", [0, -1, JS_MAX_SAFE_INTEGER + 1, True, 1.0, "1", None])
def test_invalid_revision_is_refused(revision: Any) -> None:
    with pytest.raises(ProtocolError) as raised:
        define_chat(id="a", adapter=ADAPTER, revision=revision)
    assert raised.value.message == "Chat definition revision is invalid."


def test_adapter_is_required() -> None:
    with pytest.raises(ProtocolError) as raised:
        define_chat(id="a", adapter=None)
    assert raised.value.message == "Chat definition adapter is missing."


class HalfMemory:
    async def load(self) -> list[dict[str, Any]]:
        return []


@pytest.mark.parametrize("memory", [HalfMemory(), "memory", 1])
def test_memory_must_offer_load_save_clear(memory: Any) -> None:
    with pytest.raises(ProtocolError) as raised:
        define_chat(id="a", adapter=ADAPTER, memory=memory)
    assert raised.value.message == "Chat definition memory is invalid."


def test_arguments_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        define_chat("a", ADAPTER)  # type: ignore[call-arg]
