"""`source-list` props, its `open` rule and PortableUrl (PROTOCOL.md 3)."""

from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from agentskit_web.protocol import limits
from agentskit_web.protocol.source_list import (
    SourceListProps,
    is_portable_url,
    is_valid_source_open,
    source_list_fallback,
    source_list_props_or_none,
)

PROPS: dict[str, Any] = {
    "label": "Sources",
    "sources": [
        {"id": "install", "title": "Install", "url": "/docs/install#pip", "snippet": "pip ..."},
        {"id": "faq", "title": "FAQ", "url": "https://example.com/faq"},
        {"id": "offline", "title": "Offline note"},
    ],
}


# ---------------------------------------------------------------- PortableUrl

ACCEPTED = [
    "/",
    "/docs",
    "/docs/install?x=1#pip",
    "/a:b",
    "/%2F%2Fevil",
    "/docs/ünïcode",
    "/a b",
    "http://example.com",
    "https://example.com/",
    "HTTPS://EXAMPLE.COM/Path",
    "HtTp://example.com",
    "https://example.com:443/a",
    "https://example.com:65535",
    "https://example.com:/",
    "https://sub.example.co.uk/a?b=c#d",
    "https://example.com./",
    "https://127.0.0.1:8000/x",
    "https://[::1]/",
    "https://[2001:db8::1]:8443/x",
    "https://münchen.de/",
    "https://xn--mnchen-3ya.de/",
    "https://my_host.example/",
    "https://example.com/@user",
    "https://example.com?q=javascript:alert(1)",
    "https://example.com#//evil",
]

REJECTED = [
    "",
    "javascript:alert(1)",
    "JAVASCRIPT:alert(1)",
    "JaVaScRiPt:alert(1)",
    " javascript:alert(1)",
    "\tjavascript:alert(1)",
    "java\tscript:alert(1)",
    "java\nscript:alert(1)",
    "java\rscript:alert(1)",
    "javascript&colon;alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "DATA:text/html;base64,PHNjcmlwdD4=",
    "vbscript:msgbox(1)",
    "file:///etc/passwd",
    "ftp://example.com/",
    "mailto:a@example.com",
    "blob:https://example.com/uuid",
    "//evil.example",
    "///evil.example",
    "\\\\evil.example",
    "/\\evil.example",
    "\\/evil.example",
    "https:\\\\evil.example",
    "https://evil.example\\@good.example",
    "https:evil.example",
    "https:/evil.example",
    "https:///evil.example",
    "http:evil.example",
    "https//evil.example",
    "https://",
    "https://:443",
    "https://user:pass@example.com/",
    "https://user@example.com/",
    "https://@example.com/",
    "https://:pass@example.com/",
    " https://example.com/",
    "https://example.com/ ",
    " /docs",
    "https://exa mple.com/",
    "https://example.com\t/",
    "https://example.com\n/",
    "https://example.com/\x00",
    "https://example.com/\x7f",
    "/docs\x1f",
    "https://example.com:65536/",
    "https://example.com:-1/",
    "https://example.com:80:80/",
    "https://example.com:8o/",
    "https://exa%6dple.com/",
    "https://a..b/",
    "https://.example.com/",
    "https://1.2.3.256/",
    "https://0x7f.1/",
    "https://999/",
    "https://[::1/",
    "https://[fe80::1%25eth0]/",
    "https://[not-ip]/",
    "https://[::1]x/",
    "https://exa<mple.com/",
    "https://xn--/",
    "docs/relative",
    "./docs",
    "?q=1",
    "#frag",
    "example.com",
]


@pytest.mark.parametrize("url", ACCEPTED)
def test_accepted_urls(url: str) -> None:
    assert is_portable_url(url)


@pytest.mark.parametrize("url", REJECTED)
def test_rejected_urls(url: str) -> None:
    assert not is_portable_url(url)


@pytest.mark.parametrize("value", [None, 1, b"/docs", ["/docs"], {"url": "/x"}])
def test_non_strings_are_rejected(value: Any) -> None:
    assert not is_portable_url(value)


def test_url_length_at_and_past_the_limit() -> None:
    cap = limits.PORTABLE_URL_MAX_CHARS
    assert is_portable_url("/" + "a" * (cap - 1))
    assert not is_portable_url("/" + "a" * cap)
    assert is_portable_url("/" + "a" * (cap - 3) + "😀")  # emoji counts 2
    assert not is_portable_url("/" + "a" * (cap - 2) + "😀")
    base = "https://example.com/"
    assert is_portable_url(base + "a" * (cap - len(base)))
    assert not is_portable_url(base + "a" * (cap - len(base) + 1))


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=60), st.sampled_from(["\x00", "\t", "\n", "\r", "\x1b", "\x7f", "\\"]))
def test_forbidden_characters_anywhere_are_rejected(text: str, bad: str) -> None:
    for url in ("/" + text + bad, "https://example.com/" + bad + text, bad + "/" + text):
        assert not is_portable_url(url)


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        st.text(max_size=80),
        st.builds(
            lambda scheme, rest: scheme + rest,
            st.sampled_from(
                ["https://", "HTTP://", "https:", "/", "//", "javascript:", "hTtPs://"]
            ),
            st.text(max_size=60),
        ),
    )
)
def test_accepted_urls_are_root_relative_or_http_without_credentials(url: str) -> None:
    if not is_portable_url(url):
        return
    if url.startswith("/"):
        assert not url.startswith("//")
        return
    parts = urlsplit(url)
    assert parts.scheme in {"http", "https"}
    assert url.lower().startswith(parts.scheme + "://")
    assert parts.username is None and parts.password is None
    assert parts.hostname


# ---------------------------------------------------------------- props


def test_valid_props_round_trip() -> None:
    props = SourceListProps.model_validate(PROPS)
    assert props.to_wire() == PROPS


def test_props_are_strict() -> None:
    for bad in (
        {**PROPS, "future": 1},
        {**PROPS, "sources": [{**PROPS["sources"][0], "future": 1}]},
        {**PROPS, "sources": [{"id": "a", "title": "A", "url": None}]},
        {**PROPS, "sources": [{"id": "a", "title": "A", "snippet": None}]},
        {**PROPS, "label": 5},
        {**PROPS, "sources": ({"id": "a", "title": "A"},)},
    ):
        with pytest.raises(ValidationError):
            SourceListProps.model_validate(bad)
        assert source_list_props_or_none(bad) is None


def _with_source(**changes: Any) -> dict[str, Any]:
    return {"label": "L", "sources": [{"id": "a", "title": "A", **changes}]}


@pytest.mark.parametrize(
    ("props", "ok"),
    [
        ({"label": "L" * 256, "sources": [{"id": "a", "title": "A"}]}, True),
        ({"label": "L" * 257, "sources": [{"id": "a", "title": "A"}]}, False),
        ({"label": "😀" * 128, "sources": [{"id": "a", "title": "A"}]}, True),
        ({"label": "😀" * 128 + "L", "sources": [{"id": "a", "title": "A"}]}, False),
        ({"label": "", "sources": [{"id": "a", "title": "A"}]}, False),
        (_with_source(title="T" * 256), True),
        (_with_source(title="T" * 257), False),
        (_with_source(title="😀" * 128 + "T"), False),
        (_with_source(title=""), False),
        (_with_source(snippet="s" * 4096), True),
        (_with_source(snippet="s" * 4097), False),
        (_with_source(snippet="😀" * 2048 + "s"), False),
        (_with_source(snippet=""), False),
        (_with_source(url="/x"), True),
        (_with_source(url="javascript:alert(1)"), False),
        (_with_source(url="//evil"), False),
        (_with_source(id="bad id"), False),
        (_with_source(id="a" * 129), False),
        ({"label": "L", "sources": []}, False),
        ({"label": "L", "sources": [{"id": f"s{i}", "title": "T"} for i in range(50)]}, True),
        ({"label": "L", "sources": [{"id": f"s{i}", "title": "T"} for i in range(51)]}, False),
        ({"label": "L", "sources": [{"id": "a", "title": "A"}, {"id": "a", "title": "B"}]}, False),
        ({"label": "L"}, False),
    ],
)
def test_props_bounds(props: dict[str, Any], ok: bool) -> None:
    assert (source_list_props_or_none(props) is not None) is ok


def test_parse_never_raises_on_hostile_input() -> None:
    class Hostile(dict[str, Any]):
        def __iter__(self) -> Any:
            raise RuntimeError("blocked")

        def items(self) -> Any:
            raise RuntimeError("blocked")

    for value in (None, [], "x", Hostile(PROPS), object()):
        assert source_list_props_or_none(value) is None


def test_fallback_text() -> None:
    assert source_list_fallback(PROPS) == "Sources: Install, FAQ, Offline note."
    model = SourceListProps.model_validate(PROPS)
    assert source_list_fallback(model) == "Sources: Install, FAQ, Offline note."
    one = {"label": "<b>See</b>", "sources": [{"id": "a", "title": "<i>A</i>"}]}
    assert source_list_fallback(one) == "<b>See</b>: <i>A</i>."
    with pytest.raises(ValueError):
        source_list_fallback({"label": "L", "sources": []})


def test_open_rule() -> None:
    assert is_valid_source_open(PROPS, "install")
    assert is_valid_source_open(PROPS, "faq")
    assert not is_valid_source_open(PROPS, "offline")  # no url: cannot be opened
    assert not is_valid_source_open(PROPS, "missing")
    assert not is_valid_source_open(PROPS, None)
    assert not is_valid_source_open(PROPS, ["install"])
    assert not is_valid_source_open(PROPS, "/docs/install#pip")  # the value is an id, not a url
    assert not is_valid_source_open({**PROPS, "future": 1}, "install")
    assert is_valid_source_open(SourceListProps.model_validate(PROPS), "install")
