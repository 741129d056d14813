"""PLACEHOLDER: being written; replace this whole file."""

from typing import Any

ComponentFrame: Any = None
ComponentInteraction: Any = None
ComponentSelection: Any = None
decode_component_frame: Any = None
is_bounded_json: Any = None
