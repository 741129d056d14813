"""Backend site config: strict everywhere, bounded, labels trimmed, never raising."""

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from agentskit_web.protocol import SiteConfig, parse_site_config
from agentskit_web.protocol.limits import (
    SITE_ASSISTANT_NAME_MAX_CHARS,
    SITE_GENERATION_TIMEOUT_MS_RANGE,
    SITE_MAX_ACTIONS,
    SITE_MAX_COMPONENTS,
    SITE_MAX_SOURCES_RANGE,
    SITE_MAX_SUGGESTIONS,
    SITE_REQUEST_TIMEOUT_MS_RANGE,
    SITE_RETRIEVAL_TIMEOUT_MS_RANGE,
)

SITE: dict[str, Any] = {
    "protocol": "agentskit.chat.backend-site",
    "version": 1,
    "siteId": "docs",
    "assistant": {"id": "guide", "name": "Docs guide", "suggestions": []},
    "corpus": {"id": "docs", "mode": "local"},
    "components": [],
    "actions": [],
    "limits": {
        "requestTimeoutMs": 30_000,
        "retrievalTimeoutMs": 5_000,
        "generationTimeoutMs": 60_000,
        "maxSources": 4,
    },
    "persistence": {"mode": "required"},
}
INVALID = ("SERVER_INVALID_CONFIG", "Ask site configuration is invalid.")


def nested(key: str, **changes: Any) -> dict[str, Any]:
    return {**SITE, key: {**SITE[key], **changes}}


def valid(value: Any) -> bool:
    return bool(parse_site_config(value).ok)


def test_config_model_and_round_trip() -> None:
    result = parse_site_config(json.dumps(SITE).encode())
    assert result.ok and isinstance(result.config, SiteConfig)
    config = result.config
    assert config.to_wire() == SITE
    assert config.limits.max_sources == 4 and config.corpus.mode == "local"
    assert parse_site_config(config).config is config
    with pytest.raises(ValidationError):
        config.site_id = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("field", "bounds"),
    [
        ("requestTimeoutMs", SITE_REQUEST_TIMEOUT_MS_RANGE),
        ("retrievalTimeoutMs", SITE_RETRIEVAL_TIMEOUT_MS_RANGE),
        ("generationTimeoutMs", SITE_GENERATION_TIMEOUT_MS_RANGE),
        ("maxSources", SITE_MAX_SOURCES_RANGE),
    ],
)
def test_limits_at_and_past_both_ends(field: str, bounds: tuple[int, int]) -> None:
    low, high = bounds
    assert valid(nested("limits", **{field: low})) and valid(nested("limits", **{field: high}))
    assert not valid(nested("limits", **{field: low - 1}))
    assert not valid(nested("limits", **{field: high + 1}))
    assert valid(nested("limits", **{field: float(low)}))
    for bad in (low + 0.5, str(low), True, None):
        assert not valid(nested("limits", **{field: bad})), bad


@pytest.mark.parametrize(
    ("key", "limit"), [("components", SITE_MAX_COMPONENTS), ("actions", SITE_MAX_ACTIONS)]
)
def test_id_lists_at_and_past(key: str, limit: int) -> None:
    assert valid({**SITE, key: [f"x{i}" for i in range(limit)]})
    assert not valid({**SITE, key: [f"x{i}" for i in range(limit + 1)]})
    assert not valid({**SITE, key: ["not safe"]})


def test_assistant_labels() -> None:
    limit = SITE_ASSISTANT_NAME_MAX_CHARS
    assert valid(nested("assistant", name="n" * limit))
    assert not valid(nested("assistant", name="n" * (limit + 1)))
    assert valid(nested("assistant", name="😀" * (limit // 2)))
    assert not valid(nested("assistant", name="😀" * (limit // 2) + "n"))
    trimmed = parse_site_config(nested("assistant", name="\u3000 Guide \ufeff"))
    assert trimmed.ok and trimmed.config.assistant.name == "Guide"
    # JavaScript trim keeps U+001C..U+001F and U+0085, so those are not blank.
    assert parse_site_config(nested("assistant", name="\x1c")).config.assistant.name == "\x1c"
    suggestions = [f"s{i}" for i in range(SITE_MAX_SUGGESTIONS)]
    assert valid(nested("assistant", suggestions=suggestions))
    assert not valid(nested("assistant", suggestions=[*suggestions, "one more"]))


def test_hostile_inputs_never_raise() -> None:
    cyclic: dict[str, Any] = dict(SITE)
    cyclic["assistant"] = cyclic
    for value in (cyclic, None, [], "nope", b"\xff", object(), {**SITE, "limits": float("nan")}):
        result = parse_site_config(value)
        assert not result.ok and result.diagnostic is not None
        assert result.diagnostic.code == "SERVER_INVALID_CONFIG"
    assert parse_site_config("{").diagnostic.message == "Ask site configuration is not valid JSON."


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=200)
@given(st.sampled_from(sorted(SITE)), _VALUES)
def test_any_field_replacement_never_raises(field: str, value: Any) -> None:
    result = parse_site_config({**SITE, field: value})
    if result.ok:
        assert parse_site_config(result.config.to_wire()).ok
    else:
        assert result.diagnostic is not None
        assert (result.diagnostic.code, result.diagnostic.message) == INVALID
