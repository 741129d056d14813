"""The public names of spec/API.md exist, resolve, and keep their shapes.

Outside conformance suites import exactly these names; the package exports
resolve lazily, so this also proves every lazy entry points at a real object.
"""

import importlib
import subprocess
import sys

import pytest

PROTOCOL_NAMES = [
    "decode_turn_event",
    "encode_turn_event",
    "create_snapshot_event",
    "TurnSnapshotCursor",
    "ASSISTANT_CONTENT_PREFIX",
    "AssistantContentEncoder",
    "decode_assistant_content",
    "decode_component_frame",
    "decode_session_snapshot",
    "decode_ask_events",
    "AskEventDecoder",
    "parse_ask_request",
    "parse_site_config",
    "normalize_knowledge_key",
    "validate_memory_record",
    "ProtocolError",
]
CHAT_NAMES = [
    "project_ask_event",
    "project_ask_messages",
    "create_ask_adapter",
    "create_web_storage_memory",
    "create_ask_session_memory",
    "MemoryStorage",
    "define_component_manifest",
    "resolve_component_frame",
    "STANDARD_COMPONENTS",
    "present_chat_message",
    "define_chat",
]


@pytest.mark.parametrize(
    ("package", "name"),
    [("agentskit_web.protocol", n) for n in PROTOCOL_NAMES]
    + [("agentskit_web.chat", n) for n in CHAT_NAMES],
)
def test_api_name_is_exported(package: str, name: str) -> None:
    module = importlib.import_module(package)
    assert name in module.__all__
    assert getattr(module, name) is not None


@pytest.mark.parametrize("package", ["agentskit_web.protocol", "agentskit_web.chat"])
def test_every_export_resolves(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, name


def test_star_import_and_lazy_package_import() -> None:
    """`from ... import *` works, and importing the package alone loads no contract module."""
    code = (
        "import sys\n"
        "import agentskit_web.protocol\n"
        "loaded = [m for m in sys.modules if m.startswith('agentskit_web.protocol.')]\n"
        "assert loaded == [], loaded\n"
        "from agentskit_web.protocol import *\n"
        "assert decode_turn_event('{').diagnostic.code == 'PROTOCOL_INVALID_PAYLOAD'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
