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
    from .ask_adapter import create_ask_adapter as create_ask_adapter
    from .ask_projection import project_ask_event as project_ask_event
    from .ask_projection import project_ask_messages as project_ask_messages
    from .component_catalog import STANDARD_COMPONENTS as STANDARD_COMPONENTS
    from .component_catalog import STANDARD_MANIFEST as STANDARD_MANIFEST
    from .component_catalog import ComponentAccessibility as ComponentAccessibility
    from .component_catalog import ComponentDefinition as ComponentDefinition
    from .component_catalog import ComponentEventSpec as ComponentEventSpec
    from .component_catalog import ComponentManifest as ComponentManifest
    from .component_catalog import ComponentResolution as ComponentResolution
    from .component_catalog import define_component_manifest as define_component_manifest
    from .component_catalog import resolve_component_frame as resolve_component_frame
    from .component_catalog import validate_component_event as validate_component_event
    from .conversation import Conversation as Conversation
    from .definition import ChatDefinition as ChatDefinition
    from .definition import define_chat as define_chat
    from .legacy_migration import create_ask_session_memory as create_ask_session_memory
    from .markdown_tree import markdown_to_tree as markdown_to_tree
    from .presentation import component_fallback_text as component_fallback_text
    from .presentation import present_chat_message as present_chat_message
    from .presentation import semantic_fallback as semantic_fallback
    from .storage import MemoryStorage as MemoryStorage
    from .storage import Storage as Storage
    from .storage import StorageError as StorageError
    from .storage import StorageQuotaExceeded as StorageQuotaExceeded
    from .storage import StorageSecurityError as StorageSecurityError
    from .web_storage_memory import ChatMemoryError as ChatMemoryError
    from .web_storage_memory import WebStorageMemory as WebStorageMemory
    from .web_storage_memory import WebStorageMigration as WebStorageMigration
    from .web_storage_memory import create_web_storage_memory as create_web_storage_memory

_EXPORTS: dict[str, str] = {
    "ChatDefinition": "definition",
    "ChatMemoryError": "web_storage_memory",
    "component_fallback_text": "presentation",
    "ComponentAccessibility": "component_catalog",
    "ComponentDefinition": "component_catalog",
    "ComponentEventSpec": "component_catalog",
    "ComponentManifest": "component_catalog",
    "ComponentResolution": "component_catalog",
    "Conversation": "conversation",
    "create_ask_adapter": "ask_adapter",
    "create_ask_session_memory": "legacy_migration",
    "create_web_storage_memory": "web_storage_memory",
    "define_chat": "definition",
    "define_component_manifest": "component_catalog",
    "markdown_to_tree": "markdown_tree",
    "MemoryStorage": "storage",
    "present_chat_message": "presentation",
    "project_ask_event": "ask_projection",
    "project_ask_messages": "ask_projection",
    "resolve_component_frame": "component_catalog",
    "semantic_fallback": "presentation",
    "STANDARD_COMPONENTS": "component_catalog",
    "STANDARD_MANIFEST": "component_catalog",
    "Storage": "storage",
    "StorageError": "storage",
    "StorageQuotaExceeded": "storage",
    "StorageSecurityError": "storage",
    "validate_component_event": "component_catalog",
    "WebStorageMemory": "web_storage_memory",
    "WebStorageMigration": "web_storage_memory",
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
