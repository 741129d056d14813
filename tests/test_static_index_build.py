"""build/static_index.py: the split index beside the assets and the loader pointed at it."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from agentskit_web.build.assets import LOADER
from agentskit_web.build.files import BuildError
from agentskit_web.build.static_index import (
    STATIC_INDEX_FOLDER,
    loader_with_static_index,
    publish_static_index,
)

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = (ROOT / "web" / LOADER).read_text(encoding="utf-8")


def test_the_loader_template_has_one_place_for_the_manifest_and_it_is_null() -> None:
    assert TEMPLATE.count("/* agentskit:static-index */ null") == 1


def test_writing_the_manifest_path_is_idempotent_and_can_be_undone() -> None:
    once = loader_with_static_index(TEMPLATE, "index/m.1.json")
    assert '/* agentskit:static-index */ "index/m.1.json"' in once
    again = loader_with_static_index(once, "index/m.2.json")
    assert '"index/m.2.json"' in again and "m.1" not in again
    assert loader_with_static_index(again, None) == TEMPLATE


@pytest.mark.parametrize(
    "path",
    [
        'index/x".json',
        "https://cdn.example/m.json",
        "a b",
        "//cdn.example/m.json",  # scheme-relative: another host (issue 36)
        "/index/m.json",
        "../m.json",
        "index//m.json",
        "index/../../m.json",
    ],
)
def test_a_manifest_path_that_is_not_plain_is_refused(path: str) -> None:
    with pytest.raises(BuildError):
        loader_with_static_index(TEMPLATE, path)


def test_a_loader_without_the_marker_is_a_build_error() -> None:
    with pytest.raises(BuildError, match="static-index"):
        loader_with_static_index("const ASSETS = null;", "index/m.json")


def test_publishing_writes_the_files_compressed_copies_and_the_loader(tmp_path: Path) -> None:
    assets = tmp_path / "agentskit"
    assets.mkdir()
    (assets / LOADER).write_text(TEMPLATE, encoding="utf-8")
    (assets / f"{LOADER}.gz").write_bytes(gzip.compress(TEMPLATE.encode()))
    big = b'{"terms": "' + b"lantern " * 1000 + b'"}'
    report = publish_static_index(assets, "m.1.json", {"m.1.json": b"{}", "p.1.json": big})
    folder = assets / STATIC_INDEX_FOLDER
    assert report.manifest == "index/m.1.json"
    assert (folder / "p.1.json.gz").is_file() and (folder / "p.1.json.br").is_file()
    loader = (assets / LOADER).read_text(encoding="utf-8")
    assert '"index/m.1.json"' in loader
    # The compressed loader a negotiating server sends says the same as the loader.
    assert gzip.decompress((assets / f"{LOADER}.gz").read_bytes()).decode() == loader
    # A rebuild with another index leaves none of the first one behind.
    publish_static_index(assets, "m.2.json", {"m.2.json": b"{}", "p.2.json": b"[]"})
    assert sorted(p.name for p in folder.iterdir()) == ["m.2.json", "p.2.json"]
    assert '"index/m.2.json"' in (assets / LOADER).read_text(encoding="utf-8")


def test_a_file_name_with_a_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / LOADER).write_text(TEMPLATE, encoding="utf-8")
    with pytest.raises(BuildError):
        publish_static_index(tmp_path, "m.json", {"m.json": b"{}", "../x.json": b"[]"})


def _site(tmp_path: Path, pages: dict[str, str]) -> Path:
    site = tmp_path / "site"
    (site / "agentskit").mkdir(parents=True)
    (site / "agentskit" / LOADER).write_text(TEMPLATE, encoding="utf-8")
    for name, body in pages.items():
        page = site / name
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(
            f"<!doctype html><html><head><title>{name}</title></head>"
            f"<body><main>{body}</main></body></html>",
            encoding="utf-8",
        )
    return site


def test_the_generators_step_splits_the_built_site_and_points_the_loader(tmp_path: Path) -> None:
    from agentskit_web.answering.static_index import StaticSearch
    from agentskit_web.integrations.static_answers import publish_static_answers

    body = "<h1>Charging</h1><h2 id='charge'>Charge</h2><p>A full charge takes ninety minutes.</p>"
    site = _site(tmp_path, {"guide/charging.html": body})
    report = publish_static_answers(site, "agentskit/", say=lambda _line: None)
    assert report is not None
    loader = (site / "agentskit" / LOADER).read_text(encoding="utf-8")
    assert f'"{report.manifest}"' in loader
    manifest = (site / "agentskit" / report.manifest).read_bytes()
    search = StaticSearch(manifest)  # the page's engine reads what the build wrote
    assert search.parts_for("How long does a full charge take?", 4)


def test_a_site_with_nothing_to_index_stops_the_build_only_without_an_endpoint(
    tmp_path: Path,
) -> None:
    from agentskit_web.integrations.static_answers import publish_static_answers

    site = _site(tmp_path, {})
    with pytest.raises(BuildError, match="static answers"):
        publish_static_answers(site, "agentskit/", say=lambda _line: None)
    warnings: list[str] = []
    result = publish_static_answers(
        site, "agentskit/", required=False, say=lambda _line: None, warn=warnings.append
    )
    assert result is None and len(warnings) == 1
    assert "/* agentskit:static-index */ null" in (site / "agentskit" / LOADER).read_text()
