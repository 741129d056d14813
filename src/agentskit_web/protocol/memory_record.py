"""PLACEHOLDER: being written; replace this whole file."""

from typing import Any

validate_memory_record: Any = None
