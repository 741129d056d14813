"""The built site: pinned runtime, generated lock, no CDN, served with the right types."""

from __future__ import annotations

import hashlib
import json
import tomllib
import urllib.request
from pathlib import Path

import pytest

from agentskit_web import site_build, wheel_compile
from agentskit_web.server.static_site import StaticSite
from e2e_support import ROOT


def test_lock_lists_exactly_the_served_wheels_with_real_hashes(dist: Path) -> None:
    lock = json.loads((dist / "runtime/pyodide/pyodide-lock.json").read_text(encoding="utf-8"))
    upstream = json.loads((ROOT / "web/node_modules/pyodide/pyodide-lock.json").read_text())
    assert lock["info"]["abi_version"] == upstream["info"]["abi_version"] == "2026_0"

    served = {path.name for path in (dist / "wheels").glob("*.whl")}
    listed = {Path(entry["file_name"]).name for entry in lock["packages"].values()}
    assert listed == served
    for name, entry in lock["packages"].items():
        wheel = (dist / "runtime/pyodide" / entry["file_name"]).resolve()
        assert wheel.is_file(), entry["file_name"]
        assert hashlib.sha256(wheel.read_bytes()).hexdigest() == entry["sha256"]
        assert set(entry["depends"]) <= set(lock["packages"]), name
        assert entry["imports"], name

    packages = lock["packages"]
    assert packages["pydantic-core"]["file_name"].endswith("-pyemscripten_2026_0_wasm32.whl")
    assert packages["agentskit-web"]["imports"] == ["agentskit_web"]
    assert {"pydantic", "pydantic-core"} <= set(packages["agentskit-web"]["depends"])
    assert "micropip" in packages


def test_pins_match_the_manifest_and_pyproject(dist: Path) -> None:
    manifest = tomllib.loads((ROOT / "web/wheels.toml").read_text(encoding="utf-8"))
    for pin in manifest["wheel"]:
        # The pin checks the build's input; pure wheels are served precompiled (wheel_compile).
        cached = ROOT / ".cache" / "wheels" / pin["file"]
        assert hashlib.sha256(cached.read_bytes()).hexdigest() == pin["sha256"]
        compiled = wheel_compile.compiled_name(pin["file"], manifest["runtime"]["python"])
        pure = wheel_compile.is_pure(Path(pin["file"]))
        assert (dist / "wheels" / (compiled if pure else pin["file"])).is_file(), pin["file"]
    package = json.loads((ROOT / "web/package.json").read_text(encoding="utf-8"))
    assert package["dependencies"]["pyodide"] == manifest["runtime"]["pyodide"]
    assert package["dependencies"]["@pyscript/core"] == manifest["runtime"]["pyscript"]


def test_nothing_served_names_a_cdn(dist: Path) -> None:
    assert site_build.scan_for_cdn(dist) == []
    config = json.loads((dist / "web/pyscript.json").read_text(encoding="utf-8"))
    assert config["interpreter"] == "./runtime/pyodide/pyodide.mjs"
    assert (dist / config["interpreter"]).is_file()
    assert not list(dist.rglob("*.map")), "source maps are not served"


def test_a_second_build_changes_nothing(dist: Path) -> None:
    report = site_build.build(ROOT, dist)
    assert set(report.steps.values()) == {"unchanged"}, report.steps


def test_a_missing_pinned_wheel_fails_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def offline(command: list[str], cwd: Path, what: str) -> None:
        raise site_build.BuildError(f"{what} failed: no such version on the index")

    monkeypatch.setattr(site_build, "_run", offline)
    paths = site_build.Paths(root=ROOT, dist=tmp_path / "dist", cache=tmp_path / "cache")
    pin = site_build.WheelPin("pydantic", "0.0.0", "pydantic-0.0.0-py3-none-any.whl", "0" * 64)
    runtime = {"python": "3.14", "platform": "pyemscripten_2026_0_wasm32"}
    with pytest.raises(site_build.BuildError, match=r"pydantic-0\.0\.0-py3-none-any\.whl"):
        site_build.fetch_wheels(paths, runtime, [pin])


def test_a_tampered_cached_wheel_is_refused(tmp_path: Path) -> None:
    paths = site_build.Paths(root=ROOT, dist=tmp_path / "dist", cache=tmp_path / "cache")
    cached = paths.cache / "wheels" / "pydantic-2.14.4-py3-none-any.whl"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"not the pinned wheel")
    pin = site_build.WheelPin("pydantic", "2.14.4", cached.name, "0" * 64)
    with pytest.raises(site_build.BuildError, match="sha256"):
        site_build.fetch_wheels(paths, {"python": "3.14"}, [pin])
    assert not cached.exists()


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/runtime/pyodide/pyodide.asm.wasm", "application/wasm"),
        ("/runtime/pyodide/pyodide.mjs", "text/javascript; charset=utf-8"),
        ("/runtime/pyscript/core.js", "text/javascript; charset=utf-8"),
        ("/runtime/pyodide/pyodide-lock.json", "application/json; charset=utf-8"),
        ("/web/shell.css", "text/css; charset=utf-8"),
        ("/", "text/html; charset=utf-8"),
    ],
)
def test_static_server_types(site: StaticSite, path: str, content_type: str) -> None:
    assert site.url.startswith("http://127.0.0.1:")
    with urllib.request.urlopen(site.url + path) as response:
        assert response.headers["Content-Type"] == content_type
        assert response.read(1)
