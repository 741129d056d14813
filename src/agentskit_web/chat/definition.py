"""The chat definition: one immutable value naming a chat and its parts.

A page, the `<agentskit-ask>` element's attributes and tests all describe a
chat the same way: an id, an adapter, an optional memory, the component
manifest and a revision. Validation happens here, once, so a widget never
starts from a half-valid definition.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from ..protocol.diagnostics import ProtocolError
from ..protocol.identifiers import is_safe_id
from ..protocol.limits import JS_MAX_SAFE_INTEGER
from .components.catalog import (
    STANDARD_MANIFEST,
    ComponentDefinition,
    ComponentManifest,
    define_component_manifest,
)

CONFIG_INVALID: Final = "AK_CONFIG_INVALID"
_MEMORY_METHODS: Final = ("load", "save", "clear")


@dataclass(frozen=True, slots=True)
class ChatDefinition:
    """A validated chat: `id` (SafeId), `adapter`, `memory`, `components`, `revision` (>= 1)."""

    id: str
    adapter: Any
    memory: Any
    components: ComponentManifest
    revision: int


def _invalid(message: str) -> ProtocolError:
    return ProtocolError(CONFIG_INVALID, message)


def _manifest(
    components: ComponentManifest | Iterable[ComponentDefinition] | None,
) -> ComponentManifest:
    if components is None:
        return STANDARD_MANIFEST
    if isinstance(components, ComponentManifest):
        return components
    return define_component_manifest(components)


def _is_revision(value: object) -> bool:
    """A positive JavaScript safe integer (booleans are not numbers)."""
    return type(value) is int and 0 < value <= JS_MAX_SAFE_INTEGER


def _is_memory(value: object) -> bool:
    return all(callable(getattr(value, name, None)) for name in _MEMORY_METHODS)


def define_chat(
    *,
    id: str,  # the API name (shadows the builtin on purpose)
    adapter: Any,
    memory: Any = None,
    components: ComponentManifest | Iterable[ComponentDefinition] | None = None,
    revision: int = 1,
) -> ChatDefinition:
    """Validate and freeze a chat definition.

    `components` is a manifest from `define_component_manifest`, an iterable
    of application definitions (the standard catalog is always included) or
    None for the standard catalog alone. `memory`, when given, must offer
    `load`, `save` and `clear`. Raises ProtocolError(AK_CONFIG_INVALID) on an
    invalid id, a missing adapter, an invalid memory, revision or manifest.
    """
    if not is_safe_id(id):
        raise _invalid("Chat definition id is invalid.")
    if not _is_revision(revision):
        raise _invalid("Chat definition revision is invalid.")
    if adapter is None:
        raise _invalid("Chat definition adapter is missing.")
    if memory is not None and not _is_memory(memory):
        raise _invalid("Chat definition memory is invalid.")
    return ChatDefinition(
        id=id,
        adapter=adapter,
        memory=memory,
        components=_manifest(components),
        revision=revision,
    )
