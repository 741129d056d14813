"""The MkDocs plugin and the Sphinx extension, run by the real generators on the fixture docs.

The e2e (e2e/test_site_generators.py) builds with the real assets folder and
drives Chromium; these tests are the quick part: settings validation (a bad
value stops the build and names the setting), the page-relative embed on
pages two folders deep, and publishing from a prebuilt folder (`assets_from`,
what a pip-installed package without a checkout uses), with a stand-in
folder of two small files so nothing heavy is built.
"""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest

from agentskit_web.docs_text import directory_page_path, html_page_path
from agentskit_web.integrations.assets_source import is_assets_folder, publish_assets
from agentskit_web.integrations.embed import (
    EmbedConfigError,
    assets_folder,
    element_tag,
    embed_options,
)

ROOT = Path(__file__).resolve().parents[1]
SITES = ROOT / "fixtures" / "sites"
DOCS = SITES / "docs"
SCRIPT = re.compile(r'<script type="module" src="([^"]+)"></script>')
ELEMENT = re.compile(r"<agentskit-ask ([^>]*)></agentskit-ask>")


@pytest.fixture
def prebuilt(tmp_path: Path) -> Path:
    """A stand-in for a folder `agentskit-web assets` wrote: its loader and its manifest."""
    folder = tmp_path / "prebuilt"
    (folder / "runtime.0123456789abcdef").mkdir(parents=True)
    loader = "// loader\nconst STATIC_INDEX = /* agentskit:static-index */ null;\n"
    (folder / "agentskit-ask.js").write_text(loader, encoding="utf-8")
    (folder / "assets.json").write_text("{}\n", encoding="utf-8")
    (folder / "runtime.0123456789abcdef" / "pyodide.mjs").write_text("//\n", encoding="utf-8")
    return folder


def _mkdocs(
    tmp_path: Path, options: str, theme: str = "material"
) -> subprocess.CompletedProcess[str]:
    config = (SITES / "mkdocs" / "mkdocs.yml").read_text(encoding="utf-8")
    config = config.replace("docs_dir: ../docs", f"docs_dir: {DOCS}")
    assert "  name: material\n" in config
    config = config.replace("  name: material\n", f"  name: {theme}\n")
    config = config.replace(
        "      storage_key: lumen:ask\n", f"      storage_key: lumen:ask\n{options}"
    )
    written = tmp_path / "mkdocs.yml"
    written.write_text(config, encoding="utf-8")
    command = ["-m", "mkdocs", "build", "-q", "-f", str(written), "-d", str(tmp_path / "site")]
    return subprocess.run([sys.executable, *command], capture_output=True, text=True, check=False)


def _sphinx(tmp_path: Path, *settings: str) -> subprocess.CompletedProcess[str]:
    command = ["-m", "sphinx", "-q", "-b", "html", "-c", str(SITES / "sphinx")]
    for setting in settings:
        command += ["-D", setting]
    command += [str(DOCS), str(tmp_path / "site")]
    return subprocess.run([sys.executable, *command], capture_output=True, text=True, check=False)


def _embed(page: Path) -> tuple[str, dict[str, str]]:
    text = page.read_text(encoding="utf-8")
    scripts = SCRIPT.findall(text)
    elements = ELEMENT.findall(text)
    assert len(scripts) == 1 and len(elements) == 1, (scripts, elements)
    return scripts[0], dict(re.findall(r'([a-z-]+)="([^"]*)"', elements[0]))


def test_mkdocs_writes_the_embed_relative_to_each_page_and_copies_prebuilt_assets(
    tmp_path: Path, prebuilt: Path
) -> None:
    done = _mkdocs(tmp_path, f"      assets_from: {prebuilt}\n      layout: launcher\n")
    assert done.returncode == 0, done.stderr
    site = tmp_path / "site"
    deep, attributes = _embed(site / "guide" / "setup" / "charging" / "index.html")
    assert deep == "../../../agentskit/agentskit-ask.js"
    assert attributes == {
        "endpoint": "/api/ask",
        "corpus": "docs",
        "persona": "guide",
        "boot": "intent",
        "layout": "launcher",
        "theme": "auto",
        "storage-key": "lumen:ask",
        "site-theme": "material",  # the widget's stylesheet sizes it: no inline <style>
    }
    page = (site / "index.html").read_text(encoding="utf-8")
    assert "agentskit-ask){" not in page, "no inline style: a strict style-src blocks it"
    assert _embed(site / "index.html")[0] == "agentskit/agentskit-ask.js"
    assert is_assets_folder(site / "agentskit")
    assert (site / "agentskit" / "runtime.0123456789abcdef" / "pyodide.mjs").is_file()


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("      layout: sidebar\n", "layout"),
        ("      boot: soon\n", "boot"),
        ("      corpus: 'my docs'\n", "corpus"),
        ("      assets_path: ../outside\n", "assets_path"),
        ("      endpoint: 'api ask'\n", "endpoint"),
    ],
)
def test_a_bad_mkdocs_setting_stops_the_build_and_names_it(
    tmp_path: Path, option: str, message: str
) -> None:
    done = _mkdocs(tmp_path, option)
    assert done.returncode != 0
    assert message in done.stderr and "agentskit-ask" in done.stderr, done.stderr
    assert not (tmp_path / "site" / "index.html").exists()


def test_sphinx_writes_the_embed_relative_to_each_page_and_copies_prebuilt_assets(
    tmp_path: Path, prebuilt: Path
) -> None:
    done = _sphinx(
        tmp_path,
        f"agentskit_ask_assets_from={prebuilt}",
        "agentskit_ask_knowledge=faq/knowledge.json",
        "agentskit_ask_assets_path=static/ask",
    )
    assert done.returncode == 0, done.stderr
    site = tmp_path / "site"
    deep, attributes = _embed(site / "guide" / "setup" / "charging.html")
    assert deep == "../../static/ask/agentskit-ask.js"
    # A site path is written relative to the page; a /-rooted endpoint is left as it is.
    assert attributes["knowledge"] == "../../faq/knowledge.json"
    assert attributes["endpoint"] == "/api/ask"
    assert attributes["layout"] == "inline"  # the fixture's conf.py
    assert attributes["site-theme"] == "furo", "furo's colours and switch (agentskit-ask.css)"
    assert _embed(site / "index.html")[0] == "static/ask/agentskit-ask.js"
    assert is_assets_folder(site / "static" / "ask")


@pytest.mark.parametrize(
    ("html_theme", "site_theme"),
    [("flask", "pallets-flask"), ("click", "pallets-click"), ("pocoo", "pallets")],
)
def test_sphinx_names_a_pallets_theme_for_the_stylesheet(
    tmp_path: Path, prebuilt: Path, html_theme: str, site_theme: str
) -> None:
    """The Pallets themes' colours (light only) are in agentskit-ask.css under these names."""
    done = _sphinx(
        tmp_path,
        f"agentskit_ask_assets_from={prebuilt}",
        "extensions=myst_parser,agentskit_web.sphinx,pallets_sphinx_themes",
        f"html_theme={html_theme}",
    )
    assert done.returncode == 0, done.stderr
    attributes = _embed(tmp_path / "site" / "index.html")[1]
    assert attributes["site-theme"] == site_theme


@pytest.mark.parametrize(("theme", "site_theme"), [("readthedocs", "rtd"), ("mkdocs", None)])
def test_mkdocs_names_the_site_theme_of_its_readthedocs_theme(
    tmp_path: Path, prebuilt: Path, theme: str, site_theme: str | None
) -> None:
    done = _mkdocs(tmp_path, f"      assets_from: {prebuilt}\n", theme)
    assert done.returncode == 0, done.stderr
    assert _embed(tmp_path / "site" / "index.html")[1].get("site-theme") == site_theme


def test_sphinx_names_no_site_theme_for_a_theme_the_stylesheet_does_not_know(
    tmp_path: Path, prebuilt: Path
) -> None:
    done = _sphinx(tmp_path, f"agentskit_ask_assets_from={prebuilt}", "html_theme=classic")
    assert done.returncode == 0, done.stderr
    assert "site-theme" not in _embed(tmp_path / "site" / "index.html")[1]


def test_every_site_theme_the_plugins_write_has_a_rule_in_the_stylesheet() -> None:
    from agentskit_web.integrations import mkdocs, sphinx_ext

    css = (ROOT / "web" / "agentskit-ask.css").read_text(encoding="utf-8")
    written = set(mkdocs.SITE_THEMES.values()) | set(sphinx_ext.SITE_THEMES.values())
    assert {name for name in written if f'[site-theme="{name}"]' not in css} == set()


def test_a_bad_sphinx_setting_stops_the_build_and_names_it(tmp_path: Path) -> None:
    done = _sphinx(tmp_path, "agentskit_ask_layout=sidebar")
    assert done.returncode != 0
    assert "agentskit_ask_layout" in done.stderr and "launcher, inline" in done.stderr
    assert not (tmp_path / "site" / "index.html").exists()


def test_options_are_validated_with_the_setting_named() -> None:
    defaults = embed_options({})
    # The launcher by default; its corner and where links open are the loader's defaults
    # (bottom-right, same tab), written only when a site chooses another.
    assert (defaults.layout, defaults.placement) == ("launcher", "end")
    assert defaults.value("position") is None and defaults.value("links") is None
    named = embed_options({"layout": "inline", "placement": "#ask-here"})
    assert named.value("into") == "#ask-here"
    for bad in ('#a"><script>', "", " #a", "x" * 201):
        with pytest.raises(EmbedConfigError, match="placement"):
            embed_options({"placement": bad})
    with pytest.raises(EmbedConfigError, match="position: 'top' is not one of"):
        embed_options({"position": "top"})
    assert (
        embed_options({"boot": "eager", "endpoint": "https://ask.example.org/v1"}).boot == "eager"
    )
    with pytest.raises(EmbedConfigError, match="agentskit_ask_theme: 'blue' is not one of"):
        embed_options({"theme": "blue"}, "agentskit_ask_")
    with pytest.raises(EmbedConfigError, match="storage_key"):
        embed_options({"storage_key": "a key with spaces"})
    with pytest.raises(EmbedConfigError, match="knowledge"):
        embed_options({"knowledge": 'x"><script>'})
    assert assets_folder("assets_path", "/agentskit") == "agentskit/"
    assert assets_folder("assets_path", "a/b") == "a/b/"
    for bad in ("", "/", "..", "../x", "https://cdn.example/x", "."):
        with pytest.raises(EmbedConfigError, match="assets_path"):
            assets_folder("assets_path", bad)


def test_the_element_escapes_and_relativises_only_site_paths() -> None:
    options = embed_options({"knowledge": "faq.json", "endpoint": "https://x.example/ask?a=1&b=2"})
    tag = element_tag(options, lambda target: "../" + target)
    assert 'knowledge="../faq.json"' in tag
    assert 'endpoint="https://x.example/ask?a=1&amp;b=2"' in tag


def test_publishing_from_a_folder_that_is_not_an_assets_folder_names_it(tmp_path: Path) -> None:
    from agentskit_web.build.files import BuildError

    with pytest.raises(BuildError, match=r"assets_from: .* is not a folder written by"):
        publish_assets(tmp_path / "out", tmp_path)


def test_page_paths_match_what_each_generator_publishes() -> None:
    assert directory_page_path(PurePosixPath("index.md")) == "/"
    assert directory_page_path(PurePosixPath("guide/setup/charging.md")) == "/guide/setup/charging/"
    assert directory_page_path(PurePosixPath("guide/index.md")) == "/guide/"
    assert html_page_path(PurePosixPath("guide/setup/charging.md")) == "/guide/setup/charging.html"
    assert html_page_path(PurePosixPath("index.md")) == "/index.html"


def test_the_screenshots_in_the_embedding_guide_are_published_beside_it(tmp_path: Path) -> None:
    """docs/embedding.md shows the e2e's screenshots; the demo site must carry them too."""
    from agentskit_web.build.files import Paths
    from agentskit_web.build.pages import render_pages

    files = render_pages(Paths(root=ROOT, dist=tmp_path, cache=tmp_path))
    page = files["docs/embedding.html"].decode("utf-8")
    pictures = re.findall(r'<img src="([^"]+)"', page)
    assert len(pictures) == 6, pictures  # 4 of the backend journey, 2 of a static answer
    for src in pictures:
        published = files[str(PurePosixPath("docs") / src)]
        assert published == (ROOT / "docs" / src).read_bytes()
        assert published.startswith(b"\x89PNG") and len(published) < 150_000, src


def test_without_assets_from_a_shipped_prebuilt_folder_is_used_before_the_checkout(
    tmp_path: Path, prebuilt: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An installed release (no checkout) copies its package-data folder."""
    from agentskit_web.integrations import assets_source

    monkeypatch.setattr(assets_source, "PREBUILT", prebuilt)
    origin = publish_assets(tmp_path / "site" / "agentskit")
    assert origin == str(prebuilt)
    assert is_assets_folder(tmp_path / "site" / "agentskit")


# ------------------------------------------------- every attribute is an option of both

EVERY_ATTRIBUTE: dict[str, object] = {
    "endpoint": "/api/ask",
    "protocol": "turn",
    "corpus": "docs",
    "persona": "guide",
    "storage-key": "lumen:ask",
    "legacy-keys": ["lumen:old", "lumen:older"],
    "storage": "session",
    "chat-id": "lumen",
    "images": "/img/",
    "knowledge": "faq/knowledge.json",
    "feedback-endpoint": "/api/feedback",
    "suggestions": ["How do I charge it?", "Is it waterproof?"],
    "strings": {"send": "Envoyer"},
    "theme": "dark",
    "layout": "launcher",
    "position": "bottom-left",
    "into": "#ask-here",
    "links": "new-tab",
    "boot": "idle",
    "offline": "cache",
    "snapshot": "keep",
    "offline-scope": "/",
    "heading": "Ask Lumen",
    "placeholder": "Your question about the lantern",
    "disclaimer": "Check the manual too.",
}
"""A value for every attribute, in the generators' own forms (a list, a mapping): a new
attribute without one here fails `test_every_attribute_of_the_docs_table_is_an_option`."""
WRITTEN = {
    "legacy-keys": "lumen:old lumen:older",
    "suggestions": '["How do I charge it?", "Is it waterproof?"]',
    "strings": '{"send": "Envoyer"}',
}
"""How the element carries the values that are not text already."""


def _docs_attribute_names() -> set[str]:
    """The first column of docs/embedding.md's table of the element's attributes."""
    text = (ROOT / "docs" / "embedding.md").read_text(encoding="utf-8")
    section = text.split("## The element's attributes", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for line in section.splitlines():
        cells = line.split("|")
        if len(cells) > 2 and cells[1].strip().startswith("`"):
            names.update(re.findall(r"`([a-z-]+)`", cells[1]))
    return names


def test_every_attribute_of_the_docs_table_is_an_option() -> None:
    from agentskit_web.integrations.embed import ATTRIBUTES
    from agentskit_web.integrations.mkdocs import AgentskitAskConfig
    from agentskit_web.integrations.sphinx_ext import SETTINGS

    names = {attribute.name for attribute in ATTRIBUTES}
    # `site-theme` is written by the plugins for the theme they build with, not an option.
    assert _docs_attribute_names() == names | {"site-theme"}
    assert set(EVERY_ATTRIBUTE) == names
    mkdocs_options = {key for key, _option in AgentskitAskConfig._schema}
    assert {attribute.option for attribute in ATTRIBUTES} <= mkdocs_options
    assert {attribute.option for attribute in ATTRIBUTES} <= set(SETTINGS)


def _written_attributes(page: Path) -> dict[str, str]:
    _script, attributes = _embed(page)
    attributes.pop("site-theme", None)
    return {name: html.unescape(value) for name, value in attributes.items()}


def _expected(knowledge: str) -> dict[str, str]:
    expected = {name: str(value) for name, value in EVERY_ATTRIBUTE.items()}
    expected.update(WRITTEN)
    expected["knowledge"] = knowledge
    return expected


def _mkdocs_with(tmp_path: Path, plugin: dict[str, object]) -> subprocess.CompletedProcess[str]:
    import yaml

    config = (SITES / "mkdocs" / "mkdocs.yml").read_text(encoding="utf-8")
    config = config.replace("docs_dir: ../docs", f"docs_dir: {DOCS}")
    tmp_path.mkdir(exist_ok=True)
    config = config[: config.index("plugins:")] + yaml.safe_dump(
        {"plugins": [{"agentskit-ask": plugin}]}, allow_unicode=True
    )
    written = tmp_path / "mkdocs.yml"
    written.write_text(config, encoding="utf-8")
    command = ["-m", "mkdocs", "build", "-q", "-f", str(written), "-d", str(tmp_path / "site")]
    return subprocess.run([sys.executable, *command], capture_output=True, text=True, check=False)


def _sphinx_with(tmp_path: Path, settings: dict[str, object]) -> subprocess.CompletedProcess[str]:
    conf = tmp_path / "conf"
    conf.mkdir(parents=True)
    text = (SITES / "sphinx" / "conf.py").read_text(encoding="utf-8")
    text += "".join(f"agentskit_ask_{key} = {value!r}\n" for key, value in settings.items())
    (conf / "conf.py").write_text(text, encoding="utf-8")
    command = ["-m", "sphinx", "-q", "-b", "html", "-c", str(conf), str(DOCS)]
    command.append(str(tmp_path / "site"))
    return subprocess.run([sys.executable, *command], capture_output=True, text=True, check=False)


def _as_options(values: dict[str, object]) -> dict[str, object]:
    return {name.replace("-", "_"): value for name, value in values.items()}


def test_mkdocs_takes_every_attribute_as_an_option(tmp_path: Path, prebuilt: Path) -> None:
    plugin = {**_as_options(EVERY_ATTRIBUTE), "assets_from": str(prebuilt), "index": False}
    done = _mkdocs_with(tmp_path, plugin)
    assert done.returncode == 0, done.stderr
    page = tmp_path / "site" / "guide" / "setup" / "charging" / "index.html"
    assert _written_attributes(page) == _expected("../../../faq/knowledge.json")


def test_sphinx_takes_every_attribute_as_a_setting(tmp_path: Path, prebuilt: Path) -> None:
    settings = {**_as_options(EVERY_ATTRIBUTE), "assets_from": str(prebuilt), "index": False}
    done = _sphinx_with(tmp_path, settings)
    assert done.returncode == 0, done.stderr
    page = tmp_path / "site" / "guide" / "setup" / "charging.html"
    assert _written_attributes(page) == _expected("../../faq/knowledge.json")


BAD_VALUES = [
    ("suggestions", [f"question {n}?" for n in range(9)], "1 to 8"),
    ("suggestions", ["x" * 257], "suggestions"),
    ("strings", {"sned": "Envoyer"}, "unknown UI string sned"),
    ("legacy_keys", ["a key"], "legacy_keys"),
    ("images", "/", "images"),
    ("offline", "always", "offline"),
    ("chat_id", "a b", "chat_id"),
    ("heading", "two\nlines", "heading"),
]


@pytest.mark.parametrize(("option", "value", "message"), BAD_VALUES)
def test_a_bad_attribute_option_stops_either_build_and_names_it(
    tmp_path: Path, prebuilt: Path, option: str, value: object, message: str
) -> None:
    with pytest.raises(EmbedConfigError, match=message):
        embed_options({option: value})
    done = _mkdocs_with(tmp_path / "m", {option: value, "assets_from": str(prebuilt)})
    assert done.returncode != 0 and option in done.stderr, done.stderr
    done = _sphinx_with(tmp_path / "s", {option: value, "assets_from": str(prebuilt)})
    assert done.returncode != 0 and f"agentskit_ask_{option}" in done.stderr, done.stderr


def test_the_inline_box_goes_where_the_placement_says(tmp_path: Path, prebuilt: Path) -> None:
    done = _mkdocs(
        tmp_path, f"      assets_from: {prebuilt}\n      layout: inline\n      placement: start\n"
    )
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    [element] = ELEMENT.findall(page)
    first_heading = page.index("<h1")
    assert page.index(element) < first_heading, "placement: start puts the box before the content"
    assert 'layout="inline"' in element and "position=" not in element

    named = tmp_path / "named"
    named.mkdir()
    done = _sphinx(
        named,
        f"agentskit_ask_assets_from={prebuilt}",
        "agentskit_ask_layout=inline",
        "agentskit_ask_placement=#ask-here",
        "agentskit_ask_links=new-tab",
    )
    assert done.returncode == 0, done.stderr
    _, attributes = _embed(named / "site" / "index.html")
    assert attributes["into"] == "#ask-here" and attributes["links"] == "new-tab"


def test_element_tag_writes_only_what_differs_from_the_loader_defaults() -> None:
    def tag(**settings: object) -> str:
        return element_tag(embed_options(settings), lambda target: target)

    assert 'layout="launcher"' in tag()
    assert "position=" not in tag() and "into=" not in tag() and "links=" not in tag()
    assert 'position="bottom-left"' in tag(position="bottom-left")
    inline = tag(layout="inline", placement=".md-content")
    assert 'into=".md-content"' in inline and "position=" not in inline
    assert "into=" not in tag(layout="inline", placement="start")
    assert 'links="new-tab"' in tag(links="new-tab")
