"""Storage port: MemoryStorage quota, read-only and read failures; ResilientStorage; browser."""

from typing import Any

import pytest

from agentskit_web.browser.web_storage import (
    PROBE_KEY,
    BrowserStorage,
    open_web_storage,
    storage_error_from,
)
from agentskit_web.chat.memory.storage import (
    FALLBACK_MESSAGE,
    MemoryStorage,
    ResilientStorage,
    Storage,
    StorageError,
    StorageQuotaExceeded,
    StorageSecurityError,
    storage_entry_bytes,
)

# -- MemoryStorage basics ---------------------------------------------------------


def test_memory_storage_satisfies_the_port() -> None:
    assert isinstance(MemoryStorage(), Storage)


def test_get_set_remove_round_trip() -> None:
    storage = MemoryStorage()
    assert storage.get_item("a") is None
    storage.set_item("a", "1")
    assert storage.get_item("a") == "1"
    storage.set_item("a", "2")
    assert storage.get_item("a") == "2"
    storage.remove_item("a")
    assert storage.get_item("a") is None
    storage.remove_item("never-there")
    assert len(storage) == 0


def test_initial_entries_and_inspection() -> None:
    storage = MemoryStorage(initial={"x": "1", "y": "22"})
    assert sorted(storage) == ["x", "y"]
    assert "x" in storage and "z" not in storage
    assert storage.snapshot() == {"x": "1", "y": "22"}
    assert storage.used_bytes == storage_entry_bytes("x", "1") + storage_entry_bytes("y", "22")


def test_entry_bytes_count_utf16_units_of_key_and_value() -> None:
    assert storage_entry_bytes("", "") == 0
    assert storage_entry_bytes("ab", "c") == 6
    assert storage_entry_bytes("k", "é") == 4  # one BMP unit each
    assert storage_entry_bytes("k", "😀") == 6  # a surrogate pair is two units


def test_negative_quota_is_refused() -> None:
    with pytest.raises(ValueError):
        MemoryStorage(quota_bytes=-1)
    with pytest.raises(ValueError):
        MemoryStorage(quota_bytes=True)


# -- quota ---------------------------------------------------------------------------


def test_quota_exactly_at_the_limit_is_accepted() -> None:
    storage = MemoryStorage(quota_bytes=storage_entry_bytes("k", "v" * 10))
    storage.set_item("k", "v" * 10)
    assert storage.used_bytes == storage.quota_bytes


def test_quota_one_unit_past_the_limit_raises_and_keeps_nothing() -> None:
    storage = MemoryStorage(quota_bytes=storage_entry_bytes("k", "v" * 10))
    with pytest.raises(StorageQuotaExceeded) as raised:
        storage.set_item("k", "v" * 11)
    assert raised.value.name == "QuotaExceededError"
    assert storage.get_item("k") is None
    assert storage.used_bytes == 0


def test_quota_failure_keeps_the_previous_value() -> None:
    storage = MemoryStorage(quota_bytes=storage_entry_bytes("k", "old!"))
    storage.set_item("k", "old!")
    with pytest.raises(StorageQuotaExceeded):
        storage.set_item("k", "newer")
    assert storage.get_item("k") == "old!"


def test_replacing_a_value_reuses_its_space() -> None:
    storage = MemoryStorage(quota_bytes=storage_entry_bytes("k", "abcd"))
    storage.set_item("k", "abcd")
    storage.set_item("k", "wxyz")
    storage.set_item("k", "ab")
    assert storage.used_bytes == storage_entry_bytes("k", "ab")


def test_astral_characters_cost_two_units() -> None:
    storage = MemoryStorage(quota_bytes=storage_entry_bytes("k", "aa"))
    storage.set_item("k", "😀")  # two units: fits exactly
    with pytest.raises(StorageQuotaExceeded):
        storage.set_item("k", "😀a")


def test_removing_frees_quota() -> None:
    storage = MemoryStorage(quota_bytes=storage_entry_bytes("a", "1") * 2)
    storage.set_item("a", "1")
    storage.set_item("b", "2")
    with pytest.raises(StorageQuotaExceeded):
        storage.set_item("c", "3")
    storage.remove_item("a")
    storage.set_item("c", "3")
    assert sorted(storage) == ["b", "c"]


def test_setting_the_same_value_on_a_full_storage_succeeds() -> None:
    storage = MemoryStorage(quota_bytes=storage_entry_bytes("k", "v"))
    storage.set_item("k", "v")
    storage.set_item("k", "v")


def test_zero_quota_refuses_everything_but_the_empty_entry() -> None:
    storage = MemoryStorage(quota_bytes=0)
    storage.set_item("", "")
    with pytest.raises(StorageQuotaExceeded):
        storage.set_item("k", "")


# -- read-only and unreadable ------------------------------------------------------


def test_read_only_refuses_writes_and_removals_but_reads() -> None:
    storage = MemoryStorage(read_only=True, initial={"k": "v"})
    assert storage.get_item("k") == "v"
    with pytest.raises(StorageSecurityError) as raised:
        storage.set_item("k", "w")
    assert raised.value.name == "SecurityError"
    with pytest.raises(StorageSecurityError):
        storage.remove_item("k")
    with pytest.raises(StorageSecurityError):
        storage.remove_item("absent")
    assert storage.snapshot() == {"k": "v"}


def test_modes_can_be_switched_after_seeding() -> None:
    storage = MemoryStorage()
    storage.set_item("k", "v")
    storage.read_only = True
    with pytest.raises(StorageSecurityError):
        storage.set_item("k", "w")
    storage.read_only = False
    storage.fail_reads = True
    with pytest.raises(StorageSecurityError):
        storage.get_item("k")
    assert storage.snapshot() == {"k": "v"}


def test_port_errors_share_a_base() -> None:
    assert issubclass(StorageQuotaExceeded, StorageError)
    assert issubclass(StorageSecurityError, StorageError)


# -- ResilientStorage -------------------------------------------------------------------


def test_resilient_storage_uses_the_primary_while_it_works() -> None:
    primary = MemoryStorage(initial={"k": "v"})
    notices: list[str] = []
    storage = ResilientStorage(lambda: primary, notices.append)
    assert storage.get_item("k") == "v"
    storage.set_item("j", "w")
    storage.remove_item("k")
    assert primary.snapshot() == {"j": "w"}
    assert not storage.is_fallback and notices == []


def test_resilient_storage_falls_back_once_when_opening_throws() -> None:
    notices: list[str] = []

    def refuse() -> Storage:
        raise StorageSecurityError("denied")

    storage = ResilientStorage(refuse, notices.append)
    assert storage.get_item("k") is None
    storage.set_item("k", "v")
    assert storage.get_item("k") == "v"
    storage.remove_item("k")
    assert storage.get_item("k") is None
    assert storage.is_fallback
    assert notices == [FALLBACK_MESSAGE]


def test_resilient_storage_falls_back_when_a_read_throws_later() -> None:
    primary = MemoryStorage(initial={"k": "v"})
    notices: list[str] = []
    storage = ResilientStorage(lambda: primary, notices.append)
    assert storage.get_item("k") == "v"
    primary.fail_reads = True
    assert storage.get_item("k") is None
    primary.fail_reads = False
    assert storage.get_item("k") is None  # stays on memory for the page's life
    storage.set_item("x", "1")
    assert primary.snapshot() == {"k": "v"}
    assert notices == [FALLBACK_MESSAGE]


def test_resilient_storage_lets_write_errors_through() -> None:
    primary = MemoryStorage(read_only=True)
    storage = ResilientStorage(lambda: primary)
    with pytest.raises(StorageSecurityError):
        storage.set_item("k", "v")
    with pytest.raises(StorageSecurityError):
        storage.remove_item("k")
    assert not storage.is_fallback


def test_a_raising_notice_does_not_break_the_fallback() -> None:
    def loud(_message: str) -> None:
        raise RuntimeError("boom")

    def refuse() -> Storage:
        raise StorageSecurityError("denied")

    storage = ResilientStorage(refuse, loud)
    storage.set_item("k", "v")
    assert storage.get_item("k") == "v"


# -- browser wrapper with stand-in JS objects -------------------------------------------


class FakeJsError(Exception):
    """Stands in for pyodide.ffi.JsException (which exposes the JS error `name`)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"{name}: failed")
        self.name = name


class FakeArea:
    """A JsProxy-like storage area with camelCase methods and switchable failures."""

    def __init__(self) -> None:
        self.items: dict[str, str] = {}
        self.fail: dict[str, str] = {}

    def _maybe_fail(self, method: str) -> None:
        if method in self.fail:
            raise FakeJsError(self.fail[method])

    def getItem(self, key: str) -> Any:  # JS spelling
        self._maybe_fail("getItem")
        return self.items.get(key)

    def setItem(self, key: str, value: str) -> None:
        self._maybe_fail("setItem")
        self.items[key] = value

    def removeItem(self, key: str) -> None:
        self._maybe_fail("removeItem")
        self.items.pop(key, None)


class FakeScope:
    def __init__(self, local: Any = None, session: Any = None) -> None:
        self.localStorage = local
        self.sessionStorage = session


class ThrowingScope:
    @property
    def localStorage(self) -> Any:
        raise FakeJsError("SecurityError")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("QuotaExceededError", StorageQuotaExceeded),
        ("NS_ERROR_DOM_QUOTA_REACHED", StorageQuotaExceeded),
        ("SecurityError", StorageSecurityError),
        ("InvalidStateError", StorageError),
    ],
)
def test_js_errors_map_to_port_errors(name: str, expected: type[StorageError]) -> None:
    mapped = storage_error_from(FakeJsError(name))
    assert type(mapped) is expected


def test_error_name_is_read_from_the_message_when_there_is_no_name() -> None:
    assert isinstance(
        storage_error_from(Exception("QuotaExceededError: full")), StorageQuotaExceeded
    )
    assert type(storage_error_from(Exception("odd"))) is StorageError


def test_browser_storage_wraps_each_call() -> None:
    area = FakeArea()
    port = BrowserStorage(area)
    port.set_item("k", "v")
    assert port.get_item("k") == "v"
    port.remove_item("k")
    assert port.get_item("k") is None
    area.fail = {"setItem": "QuotaExceededError", "removeItem": "SecurityError"}
    with pytest.raises(StorageQuotaExceeded):
        port.set_item("k", "v")
    with pytest.raises(StorageSecurityError):
        port.remove_item("k")
    area.fail = {"getItem": "SecurityError"}
    with pytest.raises(StorageSecurityError):
        port.get_item("k")


def test_browser_storage_reads_js_null_objects_as_none() -> None:
    class NullArea(FakeArea):
        def getItem(self, key: str) -> Any:
            return object()  # e.g. pyodide's jsnull

    assert BrowserStorage(NullArea()).get_item("k") is None


def test_open_web_storage_uses_local_storage_by_default() -> None:
    local, session = FakeArea(), FakeArea()
    storage = open_web_storage(scope=FakeScope(local, session))
    storage.set_item("k", "v")
    assert local.items == {"k": "v"} and session.items == {}
    assert PROBE_KEY not in local.items
    session_storage = open_web_storage("session", scope=FakeScope(local, session))
    session_storage.set_item("s", "1")
    assert session.items == {"s": "1"}


def test_open_web_storage_falls_back_when_reading_throws() -> None:
    area = FakeArea()
    area.fail = {"getItem": "SecurityError"}
    notices: list[str] = []
    storage = open_web_storage(on_fallback=notices.append, scope=FakeScope(area))
    assert storage.is_fallback and notices == [FALLBACK_MESSAGE]
    storage.set_item("k", "v")
    assert storage.get_item("k") == "v"
    assert area.items == {}
    assert notices == [FALLBACK_MESSAGE]


def test_open_web_storage_falls_back_when_the_area_getter_throws() -> None:
    notices: list[str] = []
    storage = open_web_storage(on_fallback=notices.append, scope=ThrowingScope())
    assert storage.is_fallback and notices == [FALLBACK_MESSAGE]


def test_open_web_storage_falls_back_without_an_area() -> None:
    notices: list[str] = []
    storage = open_web_storage(on_fallback=notices.append, scope=FakeScope(None))
    assert storage.is_fallback and len(notices) == 1


def test_open_web_storage_refuses_an_unknown_kind() -> None:
    with pytest.raises(ValueError):
        open_web_storage("cookie", scope=FakeScope())  # type: ignore[arg-type]


def test_read_only_browser_storage_does_not_fall_back() -> None:
    area = FakeArea()
    area.fail = {"setItem": "SecurityError", "removeItem": "SecurityError"}
    notices: list[str] = []
    storage = open_web_storage(on_fallback=notices.append, scope=FakeScope(area))
    with pytest.raises(StorageSecurityError):
        storage.set_item("k", "v")
    assert not storage.is_fallback and notices == []
