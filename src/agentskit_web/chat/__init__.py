"""Chat application logic on top of the wire contracts (Ask adapter, memory, components).

I/O only through ports passed in (transport, storage); the names below are the
stable public API of spec/API.md.
"""

from .ask_adapter import create_ask_adapter as create_ask_adapter
from .ask_projection import project_ask_event as project_ask_event
from .ask_projection import project_ask_messages as project_ask_messages
