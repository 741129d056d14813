"""`<agentskit-ask>` attributes -> widget configuration: bounded, defaulted, never failing."""

import json

import pytest

from agentskit_web.chat.widget_config import (
    DEFAULT_ENDPOINT,
    DEFAULT_HEADING,
    WidgetConfig,
    config_from_attributes,
    keys_from_attribute,
    suggestions_from_attribute,
)


def test_defaults() -> None:
    config = config_from_attributes({})
    assert config == WidgetConfig()
    assert config.endpoint == DEFAULT_ENDPOINT and config.storage_key == "agentskit:ask:ask"


def test_all_attributes() -> None:
    config = config_from_attributes(
        {
            "endpoint": " /proxy/ask ",
            "corpus": "docs",
            "persona": "guide",
            "chat-id": "site-docs",
            "legacy-keys": "old-a, old-b old-a",
            "storage": "session",
            "theme": "dark",
            "suggestions": '["One?", "Two?", " ", 3]',
            "heading": "Help",
            "placeholder": "Type",
            "disclaimer": "Careful",
            "knowledge": "/faq.json",
        }
    )
    assert config.endpoint == "/proxy/ask" and config.corpus == "docs" and config.persona == "guide"
    assert config.chat_id == "site-docs" and config.storage_key == "agentskit:ask:site-docs"
    assert config.legacy_keys == ("old-a", "old-b")
    assert config.storage == "session" and config.theme == "dark"
    assert config.suggestions == ("One?", "Two?")
    assert (config.heading, config.placeholder, config.disclaimer) == ("Help", "Type", "Careful")
    assert config.knowledge_url == "/faq.json"


def test_invalid_values_fall_back_to_defaults() -> None:
    config = config_from_attributes(
        {"chat-id": "not a safe id!", "theme": "neon", "storage": "cookies", "heading": "   "}
    )
    assert config.chat_id == "ask" and config.theme == "auto" and config.storage == "local"
    assert config.heading == DEFAULT_HEADING


def test_a_getter_like_get_attribute_works() -> None:
    values = {"endpoint": "/x"}
    assert config_from_attributes(values.get).endpoint == "/x"


def test_suggestions_are_bounded_to_eight_and_deduplicated() -> None:
    many = "|".join(f"Question {i}?" for i in range(20))
    assert len(suggestions_from_attribute(many)) == 8
    assert suggestions_from_attribute("A|A|B") == ("A", "B")
    assert suggestions_from_attribute("[broken json") == ("[broken json",)
    assert suggestions_from_attribute(None) == ()
    long = suggestions_from_attribute(["x" * 1_000])
    assert len(long[0]) == 256
    emoji = suggestions_from_attribute(["😀" * 200])
    assert len(emoji[0]) == 128  # 256 UTF-16 units, never half a pair


def test_key_lists() -> None:
    assert keys_from_attribute(None) == ()
    assert keys_from_attribute("a,b  c,,a") == ("a", "b", "c")


def test_strings_replace_ui_text_and_bad_values_keep_the_default() -> None:
    from agentskit_web.chat.widget_config import DEFAULT_STRINGS, STRING_MAX_CHARS

    config = config_from_attributes(
        {
            "strings": json.dumps(
                {
                    "send": "Envoyer",
                    "heading": "Demandez",
                    "copy": "",  # blank: default kept
                    "stop": "x" * (STRING_MAX_CHARS + 1),  # one past the bound: default kept
                    "retry": "r" * STRING_MAX_CHARS,  # at the bound: taken
                    "unknown": "ignored",
                    "new": 3,
                }
            )
        }
    )
    assert config.text("send") == "Envoyer"
    assert config.heading == "Demandez"
    assert config.text("copy") == DEFAULT_STRINGS["copy"]
    assert config.text("stop") == DEFAULT_STRINGS["stop"]
    assert config.text("retry") == "r" * STRING_MAX_CHARS
    assert config.text("new") == DEFAULT_STRINGS["new"]
    assert "unknown" not in config.strings


@pytest.mark.parametrize("value", ["not json", "[1, 2]", '"a string"', "{", ""])
def test_a_strings_attribute_that_is_not_an_object_changes_nothing(value: str) -> None:
    assert config_from_attributes({"strings": value}).strings == {}


def test_an_explicit_heading_attribute_wins_over_strings() -> None:
    config = config_from_attributes({"heading": "Docs help", "strings": '{"heading": "Aide"}'})
    assert config.heading == "Docs help"


@pytest.mark.parametrize(
    ("value", "layout"), [("launcher", "launcher"), ("LAUNCHER", "launcher"), ("modal", "inline")]
)
def test_layout(value: str, layout: str) -> None:
    assert config_from_attributes({"layout": value}).layout == layout


def test_images_prefix_is_an_absolute_folder_path_or_nothing() -> None:
    from agentskit_web.chat.widget_config import IMAGE_PREFIX_MAX_CHARS

    def read(value: str) -> str | None:
        return config_from_attributes({"images": value}).image_prefix

    assert config_from_attributes({}).image_prefix is None
    assert read(" /assets/ ") == "/assets/"
    assert read("/docs/img/") == "/docs/img/"
    for unsafe in (
        "/",
        "assets/",
        "/assets",
        "//evil.example/",
        "/../",
        "/a/../",
        "/%2e%2e/",
        "/a?b/",
        "https://x/a/",
        "/a b/",
        "/./",
    ):
        assert read(unsafe) is None, unsafe
    at_limit = "/" + "a" * (IMAGE_PREFIX_MAX_CHARS - 2) + "/"
    assert read(at_limit) == at_limit
    assert read("/" + "a" * (IMAGE_PREFIX_MAX_CHARS - 1) + "/") is None
