"""`agentskit-web assets OUT --with-pyscript`: PyScript self-hosted beside the runtime, opt-in."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from agentskit_web.build.assets import MANIFEST, write_assets
from agentskit_web.build.cdn_scan import scan_for_cdn
from agentskit_web.build.files import BuildError
from agentskit_web.build.pyscript import (
    NO_CDN,
    PYSCRIPT_CONFIG,
    PYSCRIPT_CORE,
    PYSCRIPT_ENTRY,
    PYSCRIPT_SOURCE,
    entry_text,
    pyscript_config,
    pyscript_files,
)
from agentskit_web.page_packages import PAGE_PACKAGE
from test_assets import WEB, runtime

CACHE = Path(__file__).resolve().parents[1] / ".cache"
"""The build's own cache of compressed copies (brotli at quality 11 takes seconds per run)."""
PINNED = json.loads((WEB / "package.json").read_text())["dependencies"]["@pyscript/core"]


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def test_pyscript_is_pinned_exactly_and_locked() -> None:
    assert PINNED.count(".") == 2 and PINNED[0].isdigit(), "an exact version, not a range"
    lock = json.loads((WEB / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/@pyscript/core"]["version"] == PINNED
    installed = json.loads((WEB / PYSCRIPT_SOURCE).parent.joinpath("package.json").read_text())
    assert installed["version"] == PINNED


def test_the_default_folder_is_unchanged_by_the_option_existing(tmp_path: Path) -> None:
    plain, with_pyscript = tmp_path / "plain", tmp_path / "with"
    write_assets(plain, WEB, runtime(), CACHE)
    write_assets(with_pyscript, WEB, runtime(), CACHE, with_pyscript=True)
    default, extended = _tree(plain), _tree(with_pyscript)
    assert not any("pyscript" in name for name in default)
    for name, data in default.items():
        if name not in (MANIFEST, MANIFEST + ".br", MANIFEST + ".gz"):
            assert extended[name] == data, name  # the loader, runtime and stylesheet: byte for byte
    manifest = json.loads(extended[MANIFEST])
    assert {k: v for k, v in manifest.items() if k != "pyscript"} == json.loads(default[MANIFEST])


def test_the_config_uses_our_pyodide_and_lock_and_never_micropip(tmp_path: Path) -> None:
    write_assets(tmp_path, WEB, runtime(), CACHE, with_pyscript=True)
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    config = json.loads((tmp_path / PYSCRIPT_CONFIG).read_text())
    assert config == {
        "interpreter": f"./{manifest['runtime']}pyodide.mjs",
        "packages": [PAGE_PACKAGE],
        "packages_cache": "passthrough",
    }
    folder = manifest["pyscript"]["folder"]
    assert (tmp_path / folder / PYSCRIPT_CORE).is_file()
    entry = (tmp_path / PYSCRIPT_ENTRY).read_text()
    assert f'"{folder}{PYSCRIPT_CORE}"' in entry
    assert json.dumps(manifest["stylesheet"]) in entry


def test_no_served_pyscript_file_names_a_cdn_or_a_source_map(tmp_path: Path) -> None:
    raw = WEB / PYSCRIPT_SOURCE
    assert any(b"cdn.jsdelivr.net" in p.read_bytes() for p in raw.glob("*.js")), "upstream has some"
    write_assets(tmp_path, WEB, runtime(), CACHE, with_pyscript=True)
    assert scan_for_cdn(tmp_path, WEB) == []
    files = pyscript_files(WEB)
    assert not any(name.endswith(".map") for name in files)
    assert not any(b"sourceMappingURL" in data for data in files.values())
    assert any(NO_CDN.encode() in data for data in files.values())


def test_turning_the_option_off_removes_the_pyscript_files(tmp_path: Path) -> None:
    write_assets(tmp_path, WEB, runtime(), CACHE, with_pyscript=True)
    (tmp_path / "site-page.html").write_text("mine")
    write_assets(tmp_path, WEB, runtime(), CACHE)
    names = set(_tree(tmp_path))
    assert not any("pyscript" in name for name in names)
    assert "site-page.html" in names


def test_a_missing_pyscript_install_fails_the_build_with_the_fix(tmp_path: Path) -> None:
    web = tmp_path / "web"
    web.mkdir()
    with pytest.raises(BuildError, match="npm ci"):
        pyscript_files(web)


def test_publishing_a_copied_folder_without_pyscript_says_so(tmp_path: Path) -> None:
    from agentskit_web.integrations.assets_source import publish_assets

    source = tmp_path / "plain"
    write_assets(source, WEB, runtime(), CACHE)
    with pytest.raises(BuildError, match=r"with_pyscript: .* --with-pyscript"):
        publish_assets(tmp_path / "site", source, with_pyscript=True)
    publish_assets(tmp_path / "site", source)


def test_every_scrubbed_script_still_parses(tmp_path: Path) -> None:
    """Rewriting CDN URLs inside PyScript's bundled code must leave valid modules (an URL in an
    escaped Python string, for one, must keep its escape)."""
    node = shutil.which("node")
    assert node is not None, "node (which `npm ci` needs) is on PATH"
    for name, data in pyscript_files(WEB).items():
        if not name.endswith(".js"):
            continue
        script = tmp_path / (name[:-3] + ".mjs")
        script.write_bytes(data)
        checked = subprocess.run([node, "--check", str(script)], capture_output=True, text=True)
        assert checked.returncode == 0, f"{name}: {checked.stderr[-500:]}"


def test_the_entry_parses_and_names_the_runtime_against_its_own_folder(tmp_path: Path) -> None:
    """PyScript resolves a config's interpreter against the page: the entry must name it
    against its own URL (a page anywhere boots), keeping the file config's other keys."""
    config = pyscript_config("runtime.0123/")
    entry = entry_text("pyscript.4567/", {"runtime": "runtime.0123/"}, config)
    assert 'new URL("runtime.0123/pyodide.mjs", BASE)' in entry
    assert '"packages_cache": "passthrough"' in entry and '"packages": ["agentskit-web"]' in entry
    node = shutil.which("node")
    assert node is not None, "node (which `npm ci` needs) is on PATH"
    script = tmp_path / "entry.mjs"
    script.write_text(entry, encoding="utf-8")
    checked = subprocess.run([node, "--check", str(script)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr[-500:]
