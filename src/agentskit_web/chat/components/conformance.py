"""Conformance subject `resolve_component_frame` for the shared fixture runner.

protocol/ must not import chat/, so chat/ registers its subject when it is
imported (the package `__init__` imports this module). The outcome dict is
what fixtures/component_resolve.json compares:

- ok: `{"ok": true, "value": <frame wire>, "props": <props wire>, "text": <definition fallback>}`
- failure: `{"ok": false, "code", "message", "retryable", "text"?}` where `text`
  is the semantic fallback, present when the frame itself decoded (unknown key,
  invalid props) so the fixture proves what a renderer shows instead.
"""

from typing import Any

from ..view.presentation import semantic_fallback
from .catalog import resolve_component_frame


def resolve_subject(data: Any) -> dict[str, Any]:
    """Run `resolve_component_frame` on one fixture input (standard manifest)."""
    resolved = resolve_component_frame(data)
    if resolved.ok:
        return {
            "ok": True,
            "value": resolved.frame.to_wire(),
            "props": resolved.props_wire(),
            "text": resolved.fallback_text(),
        }
    assert resolved.diagnostic is not None
    outcome: dict[str, Any] = {"ok": False, **resolved.diagnostic.to_wire()}
    if resolved.frame is not None:
        outcome["text"] = semantic_fallback(resolved.frame)
    return outcome
