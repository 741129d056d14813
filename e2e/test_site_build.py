"""The built site: pinned runtime, generated lock, no CDN, served with the right types."""

from __future__ import annotations

import hashlib
import json
import tomllib
import urllib.request
import zipfile
from pathlib import Path, PurePosixPath

import pytest
from playwright.sync_api import Page

from agentskit_web.bench.harness import BOOT_TIMEOUT_MS, assets_manifest
from agentskit_web.build import bytecode as wheel_compile
from agentskit_web.build import cdn_scan, pins
from agentskit_web.build import files as build_files
from agentskit_web.build import site as site_build
from agentskit_web.build import wheels as build_wheels
from agentskit_web.server.static import StaticSite
from e2e_support import ROOT, runtime_path


def runtime_dir(dist: Path) -> Path:
    """dist/agentskit/runtime.<hash>/ (the one the loader names)."""
    return dist / "agentskit" / assets_manifest(dist)["runtime"]


def test_lock_lists_exactly_the_served_wheels_with_real_hashes(dist: Path) -> None:
    runtime = runtime_dir(dist)
    lock = json.loads((runtime / "pyodide-lock.json").read_text(encoding="utf-8"))
    upstream = json.loads((ROOT / "web/node_modules/pyodide/pyodide-lock.json").read_text())
    assert lock["info"]["abi_version"] == upstream["info"]["abi_version"] == "2026_0"

    served = {path.name for path in runtime.glob("*.whl")}
    listed = {entry["file_name"] for entry in lock["packages"].values()}
    assert listed == served, "bare names, every one served beside the lock"
    for name, entry in lock["packages"].items():
        wheel = runtime / entry["file_name"]
        assert wheel.is_file(), entry["file_name"]
        assert hashlib.sha256(wheel.read_bytes()).hexdigest() == entry["sha256"]
        assert set(entry["depends"]) <= set(lock["packages"]), name
        assert entry["imports"], name

    packages = lock["packages"]
    assert packages["pydantic-core"]["file_name"].endswith("-pyemscripten_2026_0_wasm32.whl")
    assert packages["agentskit-web"]["imports"] == ["agentskit_web"]
    # pydantic-core comes with pydantic (the host requirement names pydantic alone)
    assert "pydantic" in packages["agentskit-web"]["depends"]
    assert "pydantic-core" in packages["pydantic"]["depends"]
    assert "micropip" not in packages, "nothing installs at run time: the lock is the set"


def test_pins_match_the_manifest_and_pyproject(dist: Path) -> None:
    manifest = tomllib.loads((ROOT / "web/wheels.toml").read_text(encoding="utf-8"))
    for pin in manifest["wheel"]:
        # The pin checks the build's input; every pinned wheel is served as its sourceless
        # bytecode repack (wheel_compile), under a name PyPI's file never has.
        cached = ROOT / ".cache" / "wheels" / pin["file"]
        assert hashlib.sha256(cached.read_bytes()).hexdigest() == pin["sha256"]
        python = manifest["runtime"]["python"]
        compiled = wheel_compile.compiled_name(pin["file"], python, sourceless=True)
        assert compiled != pin["file"]
        assert (runtime_dir(dist) / compiled).is_file(), pin["file"]
        assert not (runtime_dir(dist) / pin["file"]).exists(), pin["file"]
    package = json.loads((ROOT / "web/package.json").read_text(encoding="utf-8"))
    assert package["dependencies"]["pyodide"] == manifest["runtime"]["pyodide"]


def test_served_archives_store_their_members_uncompressed(dist: Path) -> None:
    """gzip/brotli on the wire can only compress what the archive did not deflate itself."""
    archives = [*runtime_dir(dist).glob("*.whl"), runtime_dir(dist) / "python_stdlib.zip"]
    assert len(archives) > 2
    for path in archives:
        with zipfile.ZipFile(path) as archive:
            methods = {info.compress_type for info in archive.infolist()}
        assert methods == {zipfile.ZIP_STORED}, (path.name, methods)


def test_members_the_page_never_imports_are_not_served(dist: Path) -> None:
    for distribution, drops in build_wheels.WHEEL_DROPS.items():
        [wheel] = runtime_dir(dist).glob(f"{distribution.replace('-', '_')}-*.whl")
        with zipfile.ZipFile(wheel) as archive:
            names = archive.namelist()
        for drop in drops:
            compiled = drop + "c" if drop.endswith(".py") else drop
            assert not [n for n in names if n == compiled or n.startswith(drop)], drop


def test_every_served_wheel_is_sourceless(dist: Path) -> None:
    wheels = [*runtime_dir(dist).glob("*.whl"), *(dist / "bench").glob("*.whl")]
    assert any(w.name.startswith("agentskit_web_bench-") for w in wheels)
    assert any(w.name.startswith("agentskit_web-") for w in wheels)
    for wheel in sorted(wheels):
        assert "-0pyc-" in wheel.name, wheel.name
        with zipfile.ZipFile(wheel) as archive:
            names = archive.namelist()
        code = [n for n in names if not n.split("/", 1)[0].endswith(".dist-info")]
        sources = {n for n in code if n.endswith(".py")}
        assert not sources, (wheel.name, sorted(sources)[:3])
        assert any(n.endswith(".pyc") for n in code), wheel.name
        assert "__pycache__" not in "".join(names), wheel.name


# Runs in the page: import every module of every served package; report what fails.
# A module may only fail for a dependency the page does not ship (an optional extra) or
# for a standard-library module the build trimmed, and then with the trim's own message.
# The module list comes from the wheels' members (pkgutil is not a page module).
IMPORT_EVERYTHING = """
import importlib, json, sys, warnings
warnings.simplefilter("ignore")
shipped = set(json.loads(SHIPPED))
failed, trimmed, count = [], {}, 0
for name in json.loads(MODULES):
    try:
        importlib.import_module(name)
        count += 1
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] in shipped:
            failed.append(f"{name}: {error!r}")
        elif "left it out of the standard library" in str(error):
            trimmed[name] = str(error)
    except Exception as error:
        if not isinstance(error, ImportError) or "sourceless" in str(error):
            failed.append(f"{name}: {error!r}")
json.dumps({"failed": failed, "trimmed": trimmed, "count": count, "loader": type(
    sys.modules["pydantic.main"].__loader__).__name__})
"""


def wheel_modules(wheel: Path) -> list[str]:
    """Every module of a served wheel's regular packages (sourceless .pyc, .py, extension).

    As pkgutil.walk_packages finds them: a folder without `__init__` (a vendored
    namespace folder) is not walked.
    """
    found: dict[tuple[str, ...], bool] = {}  # dotted parts -> is a package
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            path = PurePosixPath(name)
            if path.parts[0].endswith((".dist-info", ".data")) or "__pycache__" in path.parts:
                continue
            if path.suffix not in {".py", ".pyc", ".so"}:
                continue
            stem = path.name.split(".", 1)[0]
            if stem == "__init__":
                found[path.parts[:-1]] = True
            else:
                found.setdefault((*path.parts[:-1], stem), False)
    packages = {parts for parts, is_package in found.items() if is_package}
    walked = [
        parts for parts in found if all(parts[:depth] in packages for depth in range(1, len(parts)))
    ]
    return sorted(".".join(parts) for parts in walked)


@pytest.mark.unmeasured_imports
def test_every_module_of_every_served_wheel_imports_in_the_page(
    page: Page, site: StaticSite, dist: Path
) -> None:
    lock = json.loads((runtime_dir(dist) / "pyodide-lock.json").read_text(encoding="utf-8"))
    packages = sorted(lock["packages"])
    shipped = sorted({name for entry in lock["packages"].values() for name in entry["imports"]})
    wheels = [runtime_dir(dist) / e["file_name"] for e in lock["packages"].values()]
    modules = sorted({module for wheel in wheels for module in wheel_modules(wheel)})
    page.goto(site.url + "/bench/raw.html")
    page.wait_for_selector("#status[data-state=ready]", timeout=BOOT_TIMEOUT_MS)
    runtime = runtime_path(dist)
    result = page.evaluate(
        """async ([path, packages, shipped, modules, code]) => {
            const runtime = new URL(path, location.href).href;
            const { loadPyodide } = await import(runtime + "pyodide.mjs");
            const pyodide = await loadPyodide({
                indexURL: runtime, lockFileURL: runtime + "pyodide-lock.json", packages,
            });
            pyodide.globals.set("SHIPPED", JSON.stringify(shipped));
            pyodide.globals.set("MODULES", JSON.stringify(modules));
            return JSON.parse(pyodide.runPython(code));
        }""",
        [runtime, packages, shipped, modules, IMPORT_EVERYTHING],
    )
    assert result["failed"] == []
    # Modules no page imports (pydantic's mypy plugin, markdown-it's CLI...) may need a
    # trimmed module; each of those fails naming the module and the way to keep it.
    for name, message in result["trimmed"].items():
        assert "web/wheels.toml" in message and "No module named" in message, (name, message)
        assert not name.startswith("agentskit_web"), (name, message)
    assert result["count"] > 200, result["count"]  # pydantic alone has ~100 modules
    assert result["loader"] == "SourcelessFileLoader"


# Runs in the page: a trimmed module fails with the build's message, a kept one imports.
IMPORT_TRIMMED = """
import json, sys
outcome = {}
try:
    import wave
    outcome["imported"] = True
except ModuleNotFoundError as error:
    outcome = {"imported": False, "name": error.name, "message": str(error)}
outcome["in_sys_modules"] = "wave" in sys.modules
import textwrap
outcome["kept_imports"] = textwrap.__name__ == "textwrap"
json.dumps(outcome)
"""


@pytest.mark.unmeasured_imports
def test_a_trimmed_stdlib_module_fails_in_the_page_naming_how_to_keep_it(
    page: Page, site: StaticSite, dist: Path
) -> None:
    with zipfile.ZipFile(runtime_dir(dist) / "python_stdlib.zip") as archive:
        names = set(archive.namelist())
    assert "wave.pyc" not in names and "sitecustomize.pyc" in names
    assert "json/__init__.pyc" in names and "textwrap.pyc" in names
    page.goto(site.url + "/bench/raw.html")
    page.wait_for_selector("#status[data-state=ready]", timeout=BOOT_TIMEOUT_MS)
    result = page.evaluate(
        """async ([path, code]) => {
            const runtime = new URL(path, location.href).href;
            const { loadPyodide } = await import(runtime + "pyodide.mjs");
            const pyodide = await loadPyodide({
                indexURL: runtime, lockFileURL: runtime + "pyodide-lock.json",
            });
            return JSON.parse(pyodide.runPython(code));
        }""",
        [runtime_path(dist), IMPORT_TRIMMED],
    )
    assert result["imported"] is False
    assert result["name"] == "wave"
    assert "No module named 'wave'" in result["message"]
    assert "add 'wave' to `keep` under [stdlib] in web/wheels.toml" in result["message"]
    assert result["in_sys_modules"] is False
    assert result["kept_imports"] is True


def test_nothing_served_names_a_cdn(dist: Path) -> None:
    assert cdn_scan.scan_for_cdn(dist) == []
    assert not list(dist.rglob(cdn_scan.CDN_HOSTS_FILE)), "the deny-list is never served"
    assert not list(dist.rglob("*.map")), "source maps are not served"


def test_a_second_build_changes_nothing(dist: Path) -> None:
    report = site_build.build(ROOT, dist)
    assert set(report.steps.values()) == {"unchanged"}, report.steps


def test_a_missing_pinned_wheel_fails_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def offline(command: list[str], cwd: Path, what: str) -> None:
        raise build_files.BuildError(f"{what} failed: no such version on the index")

    monkeypatch.setattr(build_wheels, "run_tool", offline)
    paths = build_files.Paths(root=ROOT, dist=tmp_path / "dist", cache=tmp_path / "cache")
    pin = pins.WheelPin("pydantic", "0.0.0", "pydantic-0.0.0-py3-none-any.whl", "0" * 64)
    runtime = {"python": "3.14", "platform": "pyemscripten_2026_0_wasm32"}
    with pytest.raises(build_files.BuildError, match=r"pydantic-0\.0\.0-py3-none-any\.whl"):
        build_wheels.fetch_wheels(paths, runtime, [pin])


def test_a_tampered_cached_wheel_is_refused(tmp_path: Path) -> None:
    paths = build_files.Paths(root=ROOT, dist=tmp_path / "dist", cache=tmp_path / "cache")
    cached = paths.cache / "wheels" / "pydantic-2.14.4-py3-none-any.whl"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"not the pinned wheel")
    pin = pins.WheelPin("pydantic", "2.14.4", cached.name, "0" * 64)
    with pytest.raises(build_files.BuildError, match="sha256"):
        build_wheels.fetch_wheels(paths, {"python": "3.14"}, [pin])
    assert not cached.exists()


@pytest.mark.parametrize(
    ("name", "content_type", "cache"),
    [
        ("RUNTIME/pyodide.asm.wasm", "application/wasm", "immutable"),
        ("RUNTIME/pyodide.mjs", "text/javascript; charset=utf-8", "immutable"),
        ("RUNTIME/pyodide-lock.json", "application/json; charset=utf-8", "immutable"),
        ("/agentskit/agentskit-ask.js", "text/javascript; charset=utf-8", "no-cache"),
        ("/site.css", "text/css; charset=utf-8", "no-cache"),
        ("/", "text/html; charset=utf-8", "no-cache"),
    ],
)
def test_static_server_types_and_caching(
    site: StaticSite, dist: Path, name: str, content_type: str, cache: str
) -> None:
    path = name.replace("RUNTIME/", runtime_path(dist))
    with urllib.request.urlopen(site.url + path) as response:
        assert response.headers["Content-Type"] == content_type
        assert cache in response.headers["Cache-Control"]
        assert response.read(1)


def test_large_files_go_out_compressed(site: StaticSite, dist: Path) -> None:
    wasm = runtime_path(dist) + "pyodide.asm.wasm"
    raw = (dist / wasm.lstrip("/")).stat().st_size
    request = urllib.request.Request(site.url + wasm, headers={"Accept-Encoding": "br, gzip"})
    with urllib.request.urlopen(request) as response:
        assert response.headers["Content-Encoding"] == "br"
        assert response.headers["Vary"] == "Accept-Encoding"
        assert len(response.read()) < raw * 0.5
