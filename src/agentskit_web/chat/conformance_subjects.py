"""Register the chat layer's conformance subjects with the shared fixture runner.

protocol/ cannot import chat/, so the runner learns these subjects when this
module is imported: by tests/conftest.py on CPython and by the page's
conformance run in Pyodide.
"""

from ..protocol.conformance import register_subject
from .ask.projection import conformance_subject as project_ask_event_subject
from .components.conformance import resolve_subject
from .memory.legacy import run_load_case
from .view.conformance import render_case

register_subject("project_ask_event", project_ask_event_subject)
register_subject("resolve_component_frame", resolve_subject)
register_subject("ask_session_memory_load", run_load_case)
register_subject("render_message", render_case)
