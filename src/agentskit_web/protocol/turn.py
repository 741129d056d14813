"""PLACEHOLDER: being written; replace this whole file."""

from typing import Any

TurnSnapshotCursor: Any = None
create_snapshot_event: Any = None
decode_turn_event: Any = None
encode_turn_event: Any = None
