"""`with_pyscript` in the MkDocs plugin and the Sphinx extension: real builds, real themes."""

from pathlib import Path

from agentskit_web.build.assets import write_assets
from agentskit_web.build.pyscript import PYSCRIPT_CONFIG, PYSCRIPT_ENTRY
from test_assets import WEB, runtime
from test_integrations import _mkdocs, _sphinx
from test_pyscript_build import CACHE


def _folder(tmp_path: Path, with_pyscript: bool) -> Path:
    folder = tmp_path / ("with-pyscript" if with_pyscript else "plain")
    write_assets(folder, WEB, runtime(), CACHE, with_pyscript=with_pyscript)
    return folder


def test_mkdocs_publishes_pyscript_when_asked(tmp_path: Path) -> None:
    source = _folder(tmp_path, True)
    done = _mkdocs(tmp_path, f"      assets_from: {source}\n      with_pyscript: true\n")
    assert done.returncode == 0, done.stderr
    published = tmp_path / "site" / "agentskit"
    assert (published / PYSCRIPT_ENTRY).is_file() and (published / PYSCRIPT_CONFIG).is_file()


def test_mkdocs_with_pyscript_from_a_folder_without_it_stops_and_says_how(tmp_path: Path) -> None:
    source = _folder(tmp_path, False)
    done = _mkdocs(tmp_path, f"      assets_from: {source}\n      with_pyscript: true\n")
    assert done.returncode != 0
    assert "with_pyscript" in done.stderr and "--with-pyscript" in done.stderr, done.stderr


def test_mkdocs_rejects_a_with_pyscript_that_is_not_a_boolean(tmp_path: Path) -> None:
    done = _mkdocs(tmp_path, "      with_pyscript: sometimes\n")
    assert done.returncode != 0
    assert "with_pyscript" in done.stderr, done.stderr


def test_sphinx_publishes_pyscript_when_asked_and_not_otherwise(tmp_path: Path) -> None:
    source = _folder(tmp_path, True)
    done = _sphinx(
        tmp_path / "on", f"agentskit_ask_assets_from={source}", "agentskit_ask_with_pyscript=1"
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "on" / "site" / "agentskit" / PYSCRIPT_ENTRY).is_file()
    plain = _folder(tmp_path, False)
    done = _sphinx(tmp_path / "off", f"agentskit_ask_assets_from={plain}")
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "off" / "site" / "agentskit" / PYSCRIPT_ENTRY).exists()
    done = _sphinx(
        tmp_path / "missing", f"agentskit_ask_assets_from={plain}", "agentskit_ask_with_pyscript=1"
    )
    assert done.returncode != 0
    assert "with_pyscript" in done.stderr and "--with-pyscript" in done.stderr, done.stderr
