"""`agentskit-web assets`: one folder, content-hashed names, compressed copies that pay."""

import gzip
import io
import json
import random
import zipfile
from pathlib import Path

import brotli
import pytest

from agentskit_web.build.assets import (
    ASSETS_MARKER,
    COMPRESS_MIN_BYTES,
    HASHED_RUNTIME,
    LOADER,
    MANIFEST,
    PRECACHE_MARKER,
    SERVICE_WORKER,
    SNAPSHOT_SOURCE,
    RuntimeInput,
    compressed_copies,
    content_hash,
    hashed_name,
    loader_text,
    precache_object,
    service_worker_text,
    write_assets,
)
from agentskit_web.build.files import BuildError
from agentskit_web.build.lock import dependency_closure
from agentskit_web.server.static import is_content_hashed

ROOT = Path(__file__).resolve().parents[1]
WEB = ROOT / "web"


def runtime(wasm: bytes = b"\0asm" * 600) -> RuntimeInput:
    files = {
        "pyodide.mjs": b"export const loadPyodide = 1;\n" * 50,
        "pyodide.asm.mjs": b"// asm\n" * 400,
        "pyodide.asm.wasm": wasm,
        "python_stdlib.zip": b"PK" + b"\0" * 2000,
    }
    wheels = {"agentskit_web-0.1.0-cp314-none-any.whl": _wheel({"agentskit_web/a.py": b"w" * 1500})}
    lock = {"info": {}, "packages": {}}
    return RuntimeInput(files, wheels, lock, page_wheels=tuple(wheels))


def _wheel(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as wheel:
        for name, data in members.items():
            wheel.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), data)  # same bytes
    return buffer.getvalue()


def test_names_carry_the_content_hash() -> None:
    assert hashed_name("agentskit-ask.css", b"a") != hashed_name("agentskit-ask.css", b"b")
    name = hashed_name("agentskit-ask.css", b"a")
    assert name.startswith("agentskit-ask.") and name.endswith(".css")
    assert is_content_hashed(name)
    assert content_hash([("a", b"bc")]) != content_hash([("ab", b"c")]), "names are delimited"


def test_the_loader_gets_its_assets_written_in_once() -> None:
    text = loader_text(f"const ASSETS = {ASSETS_MARKER};", {"runtime": "runtime.x/"})
    assert text == 'const ASSETS = {"runtime": "runtime.x/"};'
    with pytest.raises(BuildError, match="exactly one"):
        loader_text("const ASSETS = null;", {})
    with pytest.raises(BuildError, match="exactly one"):
        loader_text(ASSETS_MARKER * 2, {})


def test_compressed_copies_are_real_and_only_when_they_pay() -> None:
    text = b"agentskit " * 500
    copies = compressed_copies("a.js", text)
    assert brotli.decompress(copies["a.js.br"]) == text
    assert gzip.decompress(copies["a.js.gz"]) == text
    assert compressed_copies("a.js", b"x" * (COMPRESS_MIN_BYTES - 1)) == {}  # one short
    assert set(compressed_copies("a.js", b"x" * COMPRESS_MIN_BYTES)) == {"a.js.br", "a.js.gz"}
    assert compressed_copies("a.png", text) == {}, "not a compressible type"
    noise = random.Random(7).randbytes(8192)  # incompressible: no copy saves 5%
    assert compressed_copies("a.wasm", noise) == {}


def test_the_folder_is_complete_relative_and_hashed(tmp_path: Path) -> None:
    out = tmp_path / "assets"
    report = write_assets(out, WEB, runtime())
    assert HASHED_RUNTIME.match(report.runtime)
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["runtime"] == report.runtime
    for entry in manifest["files"]:
        assert (out / report.runtime / entry["name"]).stat().st_size == entry["size"]
    loader = (out / LOADER).read_text()
    assert ASSETS_MARKER not in loader and report.runtime in loader
    assert (out / report.stylesheet).is_file()
    assert (out / f"{report.runtime}pyodide.asm.wasm.br").is_file()
    assert "http" not in loader.split("*/")[-1].split("const ELEMENT")[0]


def test_the_snapshot_module_is_hashed_and_keyed_by_every_files_sha256(tmp_path: Path) -> None:
    """The loader imports the boot snapshot's module by the hashed name in ASSETS.snapshot,
    and keys a kept snapshot by each runtime file's sha256 (web/agentskit-ask-snapshot.js)."""
    import hashlib

    out = tmp_path / "assets"
    report = write_assets(out, WEB, runtime())
    manifest = json.loads((out / MANIFEST).read_text())
    module = manifest["snapshot"]
    assert module.startswith("agentskit-ask-snapshot.") and is_content_hashed(module)
    assert (out / module).read_bytes() == (WEB / SNAPSHOT_SOURCE).read_bytes()
    assert f'"snapshot": "{module}"' in (out / LOADER).read_text()
    for entry in manifest["files"]:
        data = (out / report.runtime / entry["name"]).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest()
    changed = write_assets(out, WEB, runtime(wasm=b"\0asm3" * 600))
    again = json.loads((out / MANIFEST).read_text())
    assert changed.runtime != report.runtime
    before = {e["name"]: e["sha256"] for e in manifest["files"]}
    after = {e["name"]: e["sha256"] for e in again["files"]}
    assert before["pyodide.asm.wasm"] != after["pyodide.asm.wasm"]
    assert (out / module).is_file(), "an unchanged module keeps its name"


def test_a_new_runtime_replaces_the_old_and_leaves_the_sites_files(tmp_path: Path) -> None:
    out = tmp_path / "assets"
    first = write_assets(out, WEB, runtime())
    (out / "index.html").write_text("the site's own page")
    second = write_assets(out, WEB, runtime(wasm=b"\0asm2" * 600))
    assert first.runtime != second.runtime
    assert not (out / first.runtime).exists()
    assert (out / "index.html").read_text() == "the site's own page"
    again = write_assets(out, WEB, runtime(wasm=b"\0asm2" * 600))
    assert not again.changed, "an unchanged rebuild writes nothing"


def test_a_missing_boot_file_fails_the_build(tmp_path: Path) -> None:
    broken = runtime()
    files = dict(broken.files)
    del files["pyodide.asm.wasm"]
    with pytest.raises(BuildError, match=r"pyodide\.asm\.wasm"):
        write_assets(tmp_path, WEB, RuntimeInput(files, broken.wheels, broken.lock))


def test_the_page_loads_the_closure_of_its_package() -> None:
    lock = {
        "packages": {
            "agentskit-web": {"depends": ["pydantic"]},
            "pydantic": {"depends": ["pydantic-core"]},
            "pydantic-core": {"depends": []},
            "micropip": {"depends": []},
        }
    }
    assert dependency_closure(lock, "agentskit_web") == [
        "agentskit-web",
        "pydantic",
        "pydantic-core",
    ]
    lock["packages"]["pydantic"]["depends"].append("gone")
    with pytest.raises(BuildError, match="no package gone"):
        dependency_closure(lock, "agentskit-web")


def test_the_service_worker_precaches_every_boot_file_under_a_versioned_name(
    tmp_path: Path,
) -> None:
    out = tmp_path / "assets"
    report = write_assets(out, WEB, runtime())
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["serviceWorker"] == SERVICE_WORKER
    text = (out / SERVICE_WORKER).read_text()
    assert PRECACHE_MARKER not in text
    precache = json.loads(text.split("const PRECACHE = ", 1)[1].split(";\n", 1)[0])
    expected = {report.stylesheet, f"{report.runtime}pyodide.mjs"}
    expected |= {f"{report.runtime}{entry['name']}" for entry in manifest["files"]}
    expected.add(manifest["snapshot"])  # offline, snapshot="keep" restores with it
    expected.add(report.runtime + manifest["siteRecord"])  # and checks its files with it
    assert set(precache["files"]) == expected
    for name in precache["files"]:
        assert (out / name).is_file(), name
    assert precache_object(manifest) == precache
    # A new runtime is a new cache version; the same one keeps its version.
    again = write_assets(tmp_path / "again", WEB, runtime())
    assert again.runtime == report.runtime
    changed = write_assets(tmp_path / "changed", WEB, runtime(wasm=b"\0asm" * 601))
    newer = json.loads((tmp_path / "changed" / MANIFEST).read_text())
    assert changed.runtime != report.runtime
    assert precache_object(newer)["version"] != precache["version"]
    with pytest.raises(BuildError, match="exactly one"):
        service_worker_text("const PRECACHE = null;", manifest)
