"""Two tabs, one conversation: when should another tab's stored value replace this page's?

A tab learns about the other tab's saves through the browser's `storage`
event (fired only in *other* tabs of the same origin) or by re-reading the
canonical key when it regains focus. Replacing the in-page conversation must
never cause a write that makes the other tab replace *its* conversation back,
and so on forever. The rule that prevents it is a comparison of serialized
values: each page remembers the exact string it last wrote or adopted
(`last_known`), an incoming value equal to it is an echo and is ignored, and
adopting a value never triggers a save (a later save of the same messages
produces the same string, which the browser does not even report).

The decision is a pure function so the rules are tested on the host; the
page's event handlers only read storage and apply the decision.
"""

from dataclasses import dataclass, field
from typing import Literal

from ...protocol.limits import MEMORY_DEFAULT_MAX_RECORD_BYTES
from .web_storage import Message, stored_messages_or_none

SyncAction = Literal["ignore", "defer", "replace"]


@dataclass(frozen=True)
class SyncDecision:
    """What the page should do with an incoming stored value.

    - `ignore`: nothing changes (unrelated key, an echo of this page's own
      value, or an invalid value that the next load will clean up);
    - `defer`: a turn is streaming in this page; look again when it ends
      (re-read the canonical key then, e.g. with `source="focus"`);
    - `replace`: show `messages` instead of the in-page conversation (an
      empty list when the other tab cleared it) and remember `last_known`.

    `last_known` is the value to remember after applying the decision.
    """

    action: SyncAction
    last_known: str | None
    messages: list[Message] = field(default_factory=list)


def decide_storage_sync(
    *,
    key: str,
    event_key: str | None,
    incoming: str | None,
    last_known: str | None,
    busy: bool = False,
    max_record_bytes: int = MEMORY_DEFAULT_MAX_RECORD_BYTES,
) -> SyncDecision:
    """Decide whether `incoming` (the canonical key's new value) replaces this page's conversation.

    `event_key` is the `storage` event's key (None when the whole storage
    area was cleared); for a focus re-read pass the canonical `key`.
    `incoming` is the event's `newValue` or the re-read value (None when the
    key is gone). `last_known` is the string this page last wrote or adopted.
    Pass `busy=True` while a turn streams or while the page holds changes it
    has not managed to save yet, so they are not silently replaced.
    """
    if event_key is not None and event_key != key:
        return SyncDecision("ignore", last_known)
    if incoming == last_known:
        return SyncDecision("ignore", last_known)
    if busy:
        return SyncDecision("defer", last_known)
    if incoming is None:
        return SyncDecision("replace", None, [])
    messages = stored_messages_or_none(incoming, max_record_bytes)
    if messages is None:
        return SyncDecision("ignore", last_known)
    return SyncDecision("replace", incoming, messages)
