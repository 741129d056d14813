"""Chat application logic on top of the wire contracts (Ask adapter, memory, components).

I/O only through ports passed in (transport, storage); the names below are the
stable public API of spec/API.md.

Exports resolve lazily (PEP 562), so a page pays only for what it uses.
Conformance subjects of this layer register on import of
`agentskit_web.chat.conformance_subjects`.
"""

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .ask.adapter import create_ask_adapter as create_ask_adapter
    from .ask.projection import project_ask_event as project_ask_event
    from .ask.projection import project_ask_messages as project_ask_messages
    from .components.catalog import STANDARD_COMPONENTS as STANDARD_COMPONENTS
    from .components.catalog import STANDARD_MANIFEST as STANDARD_MANIFEST
    from .components.catalog import ComponentAccessibility as ComponentAccessibility
    from .components.catalog import ComponentDefinition as ComponentDefinition
    from .components.catalog import ComponentEventSpec as ComponentEventSpec
    from .components.catalog import ComponentManifest as ComponentManifest
    from .components.catalog import ComponentResolution as ComponentResolution
    from .components.catalog import define_component_manifest as define_component_manifest
    from .components.catalog import resolve_component_frame as resolve_component_frame
    from .components.catalog import validate_component_event as validate_component_event
    from .conversation import Conversation as Conversation
    from .definition import ChatDefinition as ChatDefinition
    from .definition import define_chat as define_chat
    from .function_adapter import create_function_adapter as create_function_adapter
    from .memory.legacy import create_ask_session_memory as create_ask_session_memory
    from .memory.storage import MemoryStorage as MemoryStorage
    from .memory.storage import Storage as Storage
    from .memory.storage import StorageError as StorageError
    from .memory.storage import StorageQuotaExceeded as StorageQuotaExceeded
    from .memory.storage import StorageSecurityError as StorageSecurityError
    from .memory.web_storage import ChatMemoryError as ChatMemoryError
    from .memory.web_storage import WebStorageMemory as WebStorageMemory
    from .memory.web_storage import WebStorageMigration as WebStorageMigration
    from .memory.web_storage import create_web_storage_memory as create_web_storage_memory
    from .turn.adapter import create_turn_adapter as create_turn_adapter
    from .view.markdown_tree import markdown_to_tree as markdown_to_tree
    from .view.presentation import component_fallback_text as component_fallback_text
    from .view.presentation import present_chat_message as present_chat_message
    from .view.presentation import semantic_fallback as semantic_fallback

_EXPORTS: dict[str, str] = {
    "ChatDefinition": "definition",
    "ChatMemoryError": "memory.web_storage",
    "component_fallback_text": "view.presentation",
    "ComponentAccessibility": "components.catalog",
    "ComponentDefinition": "components.catalog",
    "ComponentEventSpec": "components.catalog",
    "ComponentManifest": "components.catalog",
    "ComponentResolution": "components.catalog",
    "Conversation": "conversation",
    "create_ask_adapter": "ask.adapter",
    "create_ask_session_memory": "memory.legacy",
    "create_function_adapter": "function_adapter",
    "create_turn_adapter": "turn.adapter",
    "create_web_storage_memory": "memory.web_storage",
    "define_chat": "definition",
    "define_component_manifest": "components.catalog",
    "markdown_to_tree": "view.markdown_tree",
    "MemoryStorage": "memory.storage",
    "present_chat_message": "view.presentation",
    "project_ask_event": "ask.projection",
    "project_ask_messages": "ask.projection",
    "resolve_component_frame": "components.catalog",
    "semantic_fallback": "view.presentation",
    "STANDARD_COMPONENTS": "components.catalog",
    "STANDARD_MANIFEST": "components.catalog",
    "Storage": "memory.storage",
    "StorageError": "memory.storage",
    "StorageQuotaExceeded": "memory.storage",
    "StorageSecurityError": "memory.storage",
    "validate_component_event": "components.catalog",
    "WebStorageMemory": "memory.web_storage",
    "WebStorageMigration": "memory.web_storage",
}

__all__ = [
    "STANDARD_COMPONENTS",
    "STANDARD_MANIFEST",
    "ChatDefinition",
    "ChatMemoryError",
    "ComponentAccessibility",
    "ComponentDefinition",
    "ComponentEventSpec",
    "ComponentManifest",
    "ComponentResolution",
    "Conversation",
    "MemoryStorage",
    "Storage",
    "StorageError",
    "StorageQuotaExceeded",
    "StorageSecurityError",
    "WebStorageMemory",
    "WebStorageMigration",
    "component_fallback_text",
    "create_ask_adapter",
    "create_ask_session_memory",
    "create_turn_adapter",
    "create_web_storage_memory",
    "define_chat",
    "define_component_manifest",
    "markdown_to_tree",
    "present_chat_message",
    "project_ask_event",
    "project_ask_messages",
    "resolve_component_frame",
    "semantic_fallback",
    "validate_component_event",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
