"""`agentskit-web publish` and `inject_embed` on small folders (the quick part).

The e2e (e2e/test_publish_generators.py) runs the command from the release
wheel on real Hugo and Jekyll builds and drives Chromium to an answer; here a
stand-in assets folder (a loader with the static-index marker and a manifest)
keeps each test to a second: what `publish` writes, the idempotent injection,
and the release folder's PyScript build left out unless asked for.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentskit_web.build.assets import LOADER, MANIFEST
from agentskit_web.build.files import BuildError
from agentskit_web.build.static_index import STATIC_INDEX_FOLDER
from agentskit_web.cli import main as cli_main
from agentskit_web.integrations.assets_source import publish_assets
from agentskit_web.integrations.embed import embed_options
from agentskit_web.integrations.publish import (
    PublishSettings,
    embed_into,
    inject_embed,
    publish_site,
)

LOADER_TEXT = "// loader\nconst STATIC_INDEX = /* agentskit:static-index */ null;\n"
PAGE = (
    "<!doctype html>\n<html><head><title>{title}</title></head>\n"
    "<body><main><h1>{title}</h1><h2 id='charge'>Charge</h2>"
    "<p>The lantern charges its battery in ninety minutes over USB-C.</p></main></body></html>\n"
)


@pytest.fixture
def assets(tmp_path: Path) -> Path:
    """A stand-in for a folder `agentskit-web assets` wrote: its loader and its manifest."""
    folder = tmp_path / "assets"
    folder.mkdir()
    (folder / LOADER).write_text(LOADER_TEXT, encoding="utf-8")
    (folder / MANIFEST).write_text("{}\n", encoding="utf-8")
    return folder


@pytest.fixture
def site(tmp_path: Path) -> Path:
    folder = tmp_path / "site"
    (folder / "guide" / "setup").mkdir(parents=True)
    (folder / "index.html").write_text(PAGE.format(title="Lantern"), encoding="utf-8")
    page = folder / "guide" / "setup" / "charging.html"
    page.write_text(PAGE.format(title="Charging"), encoding="utf-8")
    return folder


def _digest(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_publish_writes_the_assets_the_index_and_points_the_loader_at_it(
    site: Path, assets: Path
) -> None:
    settings = PublishSettings(options=embed_options({}), assets_from=assets)
    publish_site(site, settings, say=lambda _m: None)
    loader = (site / "agentskit" / LOADER).read_text(encoding="utf-8")
    manifest = loader.split("/* agentskit:static-index */ ")[1].split(";")[0]
    assert manifest.startswith(f'"{STATIC_INDEX_FOLDER}agentskit-static.'), loader
    assert (site / "agentskit" / json.loads(manifest)).is_file()
    # A static site (no endpoint) publishes only what its page reads: no backend index file.
    assert list((site / "agentskit").glob("agentskit-index.*.json")) == []
    # Pages are left as they are without --inject.
    assert LOADER not in (site / "index.html").read_text(encoding="utf-8")


def _backend_indexes(site: Path) -> list[str]:
    return sorted(p.name for p in site.rglob("agentskit-index.*.json"))


@pytest.mark.parametrize(
    ("options", "backend_index", "written"),
    [
        ({}, None, False),
        ({}, True, True),
        ({"endpoint": "/api/ask"}, None, True),
        ({"endpoint": "/api/ask"}, False, False),
    ],
    ids=["static", "static-asked", "endpoint", "endpoint-refused"],
)
def test_the_backend_index_is_written_for_a_backend_or_when_asked(
    site: Path, assets: Path, options: dict[str, str], backend_index: bool | None, written: bool
) -> None:
    settings = PublishSettings(
        options=embed_options(options), assets_from=assets, backend_index=backend_index
    )
    lines: list[str] = []
    publish_site(site, settings, say=lines.append)
    found = _backend_indexes(site)
    assert len(found) == (1 if written else 0), found
    assert (site / "agentskit" / STATIC_INDEX_FOLDER).is_dir()  # static answers either way
    indexed = next(line for line in lines if "agentskit-ask: indexed 2 pages" in line)
    assert ("agentskit-index." in indexed) is written, indexed


def test_a_rebuild_without_the_backend_index_removes_the_earlier_one(
    site: Path, assets: Path
) -> None:
    asked = PublishSettings(options=embed_options({}), assets_from=assets, backend_index=True)
    publish_site(site, asked, say=lambda _m: None)
    assert len(_backend_indexes(site)) == 1
    publish_site(site, PublishSettings(options=embed_options({}), assets_from=assets), say=print)
    assert _backend_indexes(site) == []


@pytest.mark.parametrize(
    ("flags", "expected"),
    [([], None), (["--backend-index"], True)],
    ids=["default", "flag"],
)
def test_publish_backend_index_flag_reaches_the_settings(
    site: Path, monkeypatch: pytest.MonkeyPatch, flags: list[str], expected: bool | None
) -> None:
    import agentskit_web.integrations.publish as publish_module

    seen: list[PublishSettings] = []
    monkeypatch.setattr(publish_module, "publish_site", lambda _d, s, **_k: seen.append(s))
    assert cli_main(["publish", str(site), *flags]) == 0
    assert [s.backend_index for s in seen] == [expected]


def test_publish_on_a_folder_that_is_not_there_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["publish", str(tmp_path / "public")]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "build the site first" in error, error


def test_publish_on_a_site_without_pages_stops_with_one_line(tmp_path: Path, assets: Path) -> None:
    (tmp_path / "empty").mkdir()
    settings = PublishSettings(options=embed_options({}), assets_from=assets)
    with pytest.raises(BuildError, match="no HTML page"):
        publish_site(tmp_path / "empty", settings, say=lambda _m: None)


def test_inject_adds_the_loader_and_element_once_and_a_second_run_changes_nothing(
    site: Path,
) -> None:
    options = embed_options({"layout": "launcher"})
    assert inject_embed(site, options, "/docs/").changed == 2
    page = (site / "guide" / "setup" / "charging.html").read_text(encoding="utf-8")
    assert page.count('<script type="module" src="/docs/agentskit/agentskit-ask.js">') == 1
    assert page.index(LOADER) < page.index("</head>")
    assert page.count("<agentskit-ask ") == 1 and page.index("<agentskit-ask ") > page.index(
        "</main>"
    )
    before = _digest(site)
    report = inject_embed(site, options, "/docs/")
    assert (report.changed, report.unchanged) == (0, 2)
    assert _digest(site) == before


def test_inject_keeps_a_page_own_embed_and_pages_in_the_assets_folder(site: Path) -> None:
    own = '<html><head><script type="module" src="../x/agentskit-ask.js"></script></head><body>'
    (site / "own.html").write_text(own + "<agentskit-ask></agentskit-ask></body></html>")
    (site / "agentskit").mkdir()
    (site / "agentskit" / "note.html").write_text("<html><body></body></html>")
    inject_embed(site, embed_options({}))
    assert (site / "own.html").read_text() == own + "<agentskit-ask></agentskit-ask></body></html>"
    assert (site / "agentskit" / "note.html").read_text() == "<html><body></body></html>"


def test_a_page_without_head_or_body_still_gets_both_once() -> None:
    loader, element = (
        '<script type="module" src="/a.js"></script>',
        "<agentskit-ask></agentskit-ask>",
    )
    text = embed_into("<p>Fragment</p>", '<script src="/agentskit/agentskit-ask.js">', element)
    assert text.startswith('<script src="/agentskit/agentskit-ask.js">')
    assert text.count("<agentskit-ask>") == 1
    assert embed_into(text, loader, element) == text


def test_the_release_folder_pyscript_build_is_copied_only_when_asked(
    tmp_path: Path, assets: Path
) -> None:
    (assets / "pyscript.0123456789abcdef").mkdir()
    (assets / "pyscript.0123456789abcdef" / "core.js").write_text("//\n")
    for name in ("agentskit-ask-pyscript.js", "agentskit-ask-pyscript.json"):
        (assets / name).write_text("{}\n")
        (assets / (name + ".gz")).write_bytes(b"")
    pyscript = {
        "folder": "pyscript.0123456789abcdef/",
        "entry": "agentskit-ask-pyscript.js",
        "config": "agentskit-ask-pyscript.json",
    }
    (assets / MANIFEST).write_text(json.dumps({"runtime": "r/", "pyscript": pyscript}))
    plain = tmp_path / "plain"
    publish_assets(plain, assets, with_pyscript=False)
    assert sorted(p.name for p in plain.iterdir()) == [LOADER, MANIFEST]
    assert json.loads((plain / MANIFEST).read_text()) == {"runtime": "r/"}
    with_pyscript = tmp_path / "with"
    publish_assets(with_pyscript, assets, with_pyscript=True)
    assert (with_pyscript / "pyscript.0123456789abcdef" / "core.js").is_file()
    assert "pyscript" in json.loads((with_pyscript / MANIFEST).read_text())
