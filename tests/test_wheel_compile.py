"""Precompiling wheels with Pyodide under Node: both layouts, RECORD, magic, cache, errors.

Third-party wheels become sourceless (`x.pyc` where `x.py` was, no sources, a build tag
in the file name); the project's own wheel keeps its sources beside `__pycache__`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import tomllib
import zipfile
from pathlib import Path
from typing import NamedTuple

import pytest

from agentskit_web.build import bytecode as wheel_compile
from agentskit_web.build.bytecode import CompileError, Compiler, compile_wheels

ROOT = Path(__file__).resolve().parents[1]
WEB = ROOT / "web"
RUNTIME = tomllib.loads((WEB / "wheels.toml").read_text(encoding="utf-8"))["runtime"]
HAVE_RUNTIME = (WEB / "node_modules" / "pyodide" / "pyodide.mjs").is_file()
HAVE_NODE = shutil.which("node") is not None
WASM = "cp314-cp314-pyemscripten_2026_0_wasm32"


def require_runtime() -> None:
    """These tests run the real compile: `make unit` installs web/node_modules first."""
    assert HAVE_NODE and HAVE_RUNTIME, "needs Node.js and web/node_modules: run `make unit`"


def sources_of(package: str) -> dict[str, bytes]:
    return {
        f"{package}/__init__.py": b'"""Tiny."""\nfrom .mod import add\n',
        f"{package}/mod.py": b"def add(a, b):\n    return a + b  # caf\xc3\xa9\n",
        f"{package}/sub/__init__.py": b"",
        f"{package}/data.txt": b"not python\n",
    }


TINY = {**sources_of("tiny"), "single.py": b"VALUE = 1\n"}
OWN = sources_of("own")
SO_BYTES = bytes(range(256)) * 64
BINARY = {"binext/__init__.py": b"from .helpers import X\n", "binext/helpers.py": b"X = 2\n"}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def make_wheel(
    folder: Path,
    sources: dict[str, bytes],
    name: str = "tiny",
    tags: str = "py2.py3-none-any",
    binary: dict[str, bytes] | None = None,
) -> Path:
    """A minimal valid wheel with the given package files (binary ones mode 0755)."""
    dist_info = f"{name}-1.0.dist-info"
    files = dict(sources)
    files.update(binary or {})
    files[f"{dist_info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode()
    python, abi, platform = tags.split("-")
    tag_lines = "".join(f"Tag: {p}-{abi}-{platform}\n" for p in python.split("."))
    files[f"{dist_info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: {str(not binary).lower()}\n"
        + tag_lines
    ).encode()
    record = "".join(f"{n},sha256={_b64(d)},{len(d)}\n" for n, d in files.items())
    files[f"{dist_info}/RECORD"] = (record + f"{dist_info}/RECORD,,\n").encode()
    path = folder / f"{name}-1.0-{tags}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for member, data in files.items():
            info = zipfile.ZipInfo(member, date_time=(2020, 1, 2, 3, 4, 6))
            mode = 0o755 if binary and member in binary else 0o644
            info.external_attr = (0o100000 | mode) << 16
            archive.writestr(info, data, zipfile.ZIP_DEFLATED)
    return path


def compiler(**overrides: str) -> Compiler:
    return Compiler(WEB, RUNTIME["pyodide"], RUNTIME["python"], **overrides)


class Compiled(NamedTuple):
    """Inputs and outputs of the module's one real Node run."""

    tiny: tuple[Path, Path]  # third-party, pure: sourceless
    own: tuple[Path, Path]  # the project's own: with sources
    binary: tuple[Path, Path]  # third-party, with a binary member: sourceless
    cache: Path


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Compiled:
    require_runtime()
    folder = tmp_path_factory.mktemp("compile")
    tiny = make_wheel(folder, TINY)
    own = make_wheel(folder, OWN, name="own", tags="py3-none-any")
    so = {"binext/_ext.cpython-314-wasm32-emscripten.so": SO_BYTES}
    binary = make_wheel(folder, BINARY, name="binext", tags=WASM, binary=so)
    cache = folder / "cache"
    changed, outputs = compile_wheels([tiny, own, binary], compiler(), cache, keep_sources={own})
    assert changed
    return Compiled((tiny, outputs[0]), (own, outputs[1]), (binary, outputs[2]), cache)


def assert_record_valid(wheel: Path, dist_info: str) -> list[str]:
    """Every member listed once with its real hash and size; RECORD last. The names."""
    with zipfile.ZipFile(wheel) as archive:
        assert archive.testzip() is None
        names = archive.namelist()
        record_name = f"{dist_info}/RECORD"
        assert names[-1] == record_name
        rows = [line.split(",") for line in archive.read(record_name).decode().splitlines()]
        assert [row[0] for row in rows] == names
        for member, digest, size in rows:
            if member == record_name:
                assert (digest, size) == ("", "")
                continue
            data = archive.read(member)
            assert digest == f"sha256={_b64(data)}", member
            assert int(size) == len(data), member
    return names


def assert_unchecked_hash_314(data: bytes, name: str) -> None:
    magic = int.from_bytes(data[:2], "little")
    # CPython 3.14 magic numbers are 3600-3649 (3.15 starts at 3650).
    assert 3600 <= magic < 3650 and data[2:4] == b"\r\n", (name, magic)
    assert int.from_bytes(data[4:8], "little") == 0b01, name  # hash-based, unchecked
    assert len(data) > 16, name


# ---------------------------------------------------------------- names


def test_compiled_name_takes_the_interpreter_tag_and_a_build_tag_when_sourceless() -> None:
    name = wheel_compile.compiled_name
    pydantic = "pydantic-2.14.4-py3-none-any.whl"
    assert name(pydantic, "3.14", sourceless=True) == "pydantic-2.14.4-0pyc-cp314-none-any.whl"
    assert name(pydantic, "3.14", sourceless=False) == "pydantic-2.14.4-cp314-none-any.whl"
    six = "six-1.17.0-py2.py3-none-any.whl"
    assert name(six, "3.14", sourceless=True) == "six-1.17.0-0pyc-cp314-none-any.whl"
    assert name("a-1.0-7-py3-none-any.whl", "3.14", sourceless=True) == (
        "a-1.0-7pyc-cp314-none-any.whl"
    )
    assert name("a-1.0-7-py3-none-any.whl", "3.14", sourceless=False) == (
        "a-1.0-7-cp314-none-any.whl"
    )
    core = f"pydantic_core-2.50.5-{WASM}.whl"
    assert name(core, "3.14", sourceless=True) == f"pydantic_core-2.50.5-0pyc-{WASM}.whl"
    with pytest.raises(CompileError, match="not a wheel file name"):
        name("a-1.0.tar.gz", "3.14", sourceless=True)
    with pytest.raises(CompileError, match="binary wheel for cp313"):
        name("a-1.0-cp313-cp313-pyemscripten_2026_0_wasm32.whl", "3.14", sourceless=True)


def test_the_build_tag_is_valid_per_the_wheel_spec() -> None:
    from packaging.utils import parse_wheel_filename

    for wheel in ("pydantic-2.14.4-py3-none-any.whl", "a-1.0-7-py3-none-any.whl"):
        compiled = wheel_compile.compiled_name(wheel, "3.14", sourceless=True)
        name, version, build, tags = parse_wheel_filename(compiled)
        original = parse_wheel_filename(wheel)
        assert (name, version) == original[:2]
        assert build and build != original[2]
        assert {str(tag) for tag in tags} == {"cp314-none-any"}


def test_is_pure() -> None:
    assert wheel_compile.is_pure(Path("pydantic-2.14.4-py3-none-any.whl"))
    assert not wheel_compile.is_pure(Path(f"pydantic_core-2.50.5-{WASM}.whl"))


# ---------------------------------------------------------------- sourceless layout


def test_sourceless_wheel_has_pycs_at_the_source_paths_and_no_sources(
    compiled: Compiled,
) -> None:
    wheel, output = compiled.tiny
    assert output.name == "tiny-1.0-0pyc-cp314-none-any.whl"
    names = assert_record_valid(output, "tiny-1.0.dist-info")
    with zipfile.ZipFile(wheel) as before:
        expected = [n[:-3] + ".pyc" if n.endswith(".py") else n for n in before.namelist()]
    assert names == expected, "each .py replaced in place by its .pyc, order kept"
    assert not [n for n in names if n.endswith(".py")]
    assert not [n for n in names if "__pycache__" in n]
    with zipfile.ZipFile(output) as archive:
        for source in (n for n in TINY if n.endswith(".py")):
            assert_unchecked_hash_314(archive.read(source + "c"), source)
        assert archive.read("tiny/data.txt") == TINY["tiny/data.txt"]
        wheel_meta = archive.read("tiny-1.0.dist-info/WHEEL").decode()
    assert "Tag: cp314-none-any\n" in wheel_meta
    assert "py3-none-any" not in wheel_meta and "py2-none-any" not in wheel_meta


def test_sourceless_pycs_are_the_legacy_compileall_b_files(compiled: Compiled) -> None:
    """The payload names the install path: that is what tracebacks show without a source."""
    _wheel, output = compiled.tiny
    with zipfile.ZipFile(output) as archive:
        code = archive.read("tiny/mod.pyc")
    assert b"site-packages/tiny/mod.py" in code
    assert b"add" in code
    # The unchecked-hash header holds the source's hash: same source, same bytes.
    with zipfile.ZipFile(output) as archive:
        assert archive.read("tiny/sub/__init__.pyc")[8:16] != b"\0" * 8


def test_a_binary_wheel_keeps_its_extension_byte_identical(compiled: Compiled) -> None:
    wheel, output = compiled.binary
    assert output.name == f"binext-1.0-0pyc-{WASM}.whl"
    names = assert_record_valid(output, "binext-1.0.dist-info")
    assert "binext/__init__.pyc" in names and "binext/helpers.pyc" in names
    assert not [n for n in names if n.endswith(".py")]
    so = "binext/_ext.cpython-314-wasm32-emscripten.so"
    with zipfile.ZipFile(wheel) as before, zipfile.ZipFile(output) as after:
        assert after.read(so) == before.read(so) == SO_BYTES
        assert after.getinfo(so).external_attr >> 16 == 0o100755, "the extension stays 0755"
        assert after.getinfo(so).date_time == before.getinfo(so).date_time
        wheel_meta = after.read("binext-1.0.dist-info/WHEEL").decode()
        assert after.read("binext-1.0.dist-info/METADATA") == before.read(
            "binext-1.0.dist-info/METADATA"
        )
    assert f"Tag: {WASM}\n" in wheel_meta
    assert "Root-Is-Purelib: false\n" in wheel_meta


# ---------------------------------------------------------------- own wheel: sources kept


def test_own_wheel_keeps_sources_beside_pycache(compiled: Compiled) -> None:
    wheel, output = compiled.own
    assert output.name == "own-1.0-cp314-none-any.whl"
    assert_record_valid(output, "own-1.0.dist-info")
    expected = {
        "own/__pycache__/__init__.cpython-314.pyc",
        "own/__pycache__/mod.cpython-314.pyc",
        "own/sub/__pycache__/__init__.cpython-314.pyc",
    }
    with zipfile.ZipFile(wheel) as before, zipfile.ZipFile(output) as after:
        pycs = {name for name in after.namelist() if name.endswith(".pyc")}
        assert pycs == expected
        for name in pycs:
            assert_unchecked_hash_314(after.read(name), name)
        for member in OWN:
            assert after.read(member) == before.read(member) == OWN[member]
        kept = [n for n in after.namelist() if not n.endswith((".pyc", "RECORD", "WHEEL"))]
        assert kept == [n for n in before.namelist() if not n.endswith(("RECORD", "WHEEL"))]
        assert after.namelist().index(max(pycs)) < after.namelist().index("own-1.0.dist-info/WHEEL")
        assert "Tag: cp314-none-any\n" in after.read("own-1.0.dist-info/WHEEL").decode()


# ---------------------------------------------------------------- cache and errors


def test_a_second_run_uses_the_cache(compiled: Compiled, monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = [compiled.tiny[0], compiled.own[0], compiled.binary[0]]
    outputs = [compiled.tiny[1], compiled.own[1], compiled.binary[1]]
    before = [path.read_bytes() for path in outputs]

    def no_node(*_args: object) -> bytes:
        raise AssertionError("the cache should have answered")

    monkeypatch.setattr(wheel_compile, "run_node", no_node)
    changed, again = compile_wheels(inputs, compiler(), compiled.cache, keep_sources={inputs[1]})
    assert not changed
    assert again == outputs
    assert [path.read_bytes() for path in again] == before


def test_the_layout_is_part_of_the_cache_key(tmp_path: Path, compiled: Compiled) -> None:
    """The same input asked with sources is a different entry (never the sourceless one)."""
    wheel, sourceless = compiled.tiny
    cache = tmp_path / "cache"
    shutil.copytree(compiled.cache, cache)
    changed, [with_sources] = compile_wheels([wheel], compiler(), cache, keep_sources={wheel})
    assert changed
    assert with_sources.name == "tiny-1.0-cp314-none-any.whl"
    with zipfile.ZipFile(with_sources) as archive:
        assert "tiny/mod.py" in archive.namelist()
    assert with_sources.parent.name != sourceless.parent.name


def test_dropped_members_are_left_out_and_the_record_matches(
    tmp_path: Path, compiled: Compiled
) -> None:
    """A drop is part of the cache key, leaves the rest intact and must match something."""
    wheel, whole = compiled.tiny
    cache = tmp_path / "cache"
    shutil.copytree(compiled.cache, cache)
    drop = ("tiny/mod.py",)
    changed, [trimmed] = compile_wheels([wheel], compiler(), cache, drops={wheel: drop})
    assert changed and trimmed.parent.name != whole.parent.name
    names = assert_record_valid(trimmed, "tiny-1.0.dist-info")
    assert "tiny/mod.pyc" not in names and "tiny/__init__.pyc" in names
    with pytest.raises(CompileError, match="nothing to drop at tiny/absent/"):
        compile_wheels([wheel], compiler(), cache, drops={wheel: ("tiny/absent/",)})


def test_a_source_that_does_not_compile_fails_clearly(tmp_path: Path) -> None:
    require_runtime()
    wheel = make_wheel(tmp_path, {"broken/__init__.py": b"def (:\n"}, name="broken")
    with pytest.raises(CompileError, match=r"(?s)failed.*SyntaxError"):
        compile_wheels([wheel], compiler(), tmp_path / "cache")
    assert not list((tmp_path / "cache").rglob("*.whl")), "nothing cached on failure"


def test_missing_node_fails_clearly(tmp_path: Path) -> None:
    require_runtime()
    wheel = make_wheel(tmp_path, TINY)
    with pytest.raises(CompileError, match=r"Node\.js"):
        compile_wheels([wheel], compiler(node="no-such-node-binary"), tmp_path / "cache")


# ---------------------------------------------------------------- standard library zip

STDLIB_MEMBERS: list[tuple[str, bytes, int]] = [  # name, bytes, compression (dirs stored)
    ("first.py", b"FIRST = 1\n", zipfile.ZIP_DEFLATED),
    ("pkg/", b"", zipfile.ZIP_STORED),
    ("pkg/__init__.py", b'"""Pkg."""\n', zipfile.ZIP_DEFLATED),
    ("pkg/mod.py", b"def twice(x):\n    return 2 * x  # caf\xc3\xa9\n", zipfile.ZIP_DEFLATED),
    ("pkg/README.txt", b"not python\n" * 40, zipfile.ZIP_DEFLATED),
    ("pkg/py.typed", b"", zipfile.ZIP_STORED),
    ("pkg/tool", b"#!/bin/sh\necho hi\n", zipfile.ZIP_DEFLATED),
]


def make_stdlib_zip(folder: Path) -> Path:
    path = folder / "python_stdlib.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data, compression in STDLIB_MEMBERS:
            info = zipfile.ZipInfo(name, date_time=(2026, 9, 14, 3, 3, 54))
            mode = 0o40755 if name.endswith("/") else 0o100755 if name == "pkg/tool" else 0o100644
            info.external_attr = mode << 16
            info.compress_type = compression
            archive.writestr(info, data)
    return path


@pytest.fixture(scope="module")
def stdlib_zip(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(input zip, compiled zip, cache) from one real Node run."""
    require_runtime()
    folder = tmp_path_factory.mktemp("stdlib")
    archive = make_stdlib_zip(folder)
    cache = folder / "cache"
    changed, output = wheel_compile.compile_stdlib(archive, compiler(), cache)
    assert changed
    return archive, output, cache


def test_stdlib_zip_has_pycs_at_the_source_paths_other_members_identical(
    stdlib_zip: tuple[Path, Path, Path],
) -> None:
    archive, output, _cache = stdlib_zip
    assert output.name == "python_stdlib.zip"
    with zipfile.ZipFile(archive) as before, zipfile.ZipFile(output) as after:
        assert after.testzip() is None
        expected = [n + "c" if n.endswith(".py") else n for n in before.namelist()]
        assert after.namelist() == expected, "each .py replaced in place, order kept"
        for old, new in zip(before.infolist(), after.infolist(), strict=True):
            assert new.date_time == old.date_time, new.filename
            assert new.external_attr == old.external_attr, new.filename
            # Stored, whatever the input used: HTTP compression does the rest.
            assert new.compress_type == zipfile.ZIP_STORED, new.filename
            if new.filename.endswith(".pyc"):
                assert_unchecked_hash_314(after.read(new), new.filename)
            else:
                assert after.read(new) == before.read(old), new.filename
        code = after.read("pkg/mod.pyc")
    # The code objects name the zip on Pyodide's sys.path, as zipimport's own compile does.
    assert b"/lib/python314.zip/pkg/mod.py" in code


def test_zipimport_imports_the_sourceless_stdlib_zip_in_pyodide(
    stdlib_zip: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _archive, output, _cache = stdlib_zip
    script = tmp_path / "probe.mjs"
    script.write_text(
        f"""
const {{ loadPyodide }} = await import({json.dumps(str(WEB / "node_modules/pyodide/pyodide.mjs"))});
const pyodide = await loadPyodide();
pyodide.FS.writeFile("/tmp/lib.zip", new Uint8Array(
  (await import("node:fs")).readFileSync({json.dumps(str(output))})));
console.log(pyodide.runPython(`
import sys; sys.path.insert(0, "/tmp/lib.zip")
import first, pkg.mod
import json
json.dumps([first.FIRST, pkg.mod.twice(21), pkg.mod.__file__, pkg.__doc__,
            pkg.mod.twice.__code__.co_filename])
`));
""",
        encoding="utf-8",
    )
    result = subprocess.run(
        ["node", str(script)], capture_output=True, text=True, timeout=120, check=True
    )
    first, answer, module_file, doc, code_file = json.loads(result.stdout.strip().splitlines()[-1])
    assert (first, answer, doc) == (1, 42, "Pkg.")
    assert module_file == "/tmp/lib.zip/pkg/mod.pyc", "imported from the bytecode member"
    assert code_file == "/lib/python314.zip/pkg/mod.py"


def test_stdlib_zip_second_run_uses_the_cache(
    stdlib_zip: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    archive, output, cache = stdlib_zip
    before = output.read_bytes()

    def no_node(*_args: object) -> bytes:
        raise AssertionError("the cache should have answered")

    monkeypatch.setattr(wheel_compile, "run_node", no_node)
    changed, again = wheel_compile.compile_stdlib(archive, compiler(), cache)
    assert (changed, again) == (False, output)
    assert again.read_bytes() == before


def test_stdlib_zip_with_a_broken_source_fails_clearly(tmp_path: Path) -> None:
    require_runtime()
    archive = tmp_path / "python_stdlib.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("broken.py", b"def (:\n")
    with pytest.raises(CompileError, match=r"(?s)failed.*SyntaxError"):
        wheel_compile.compile_stdlib(archive, compiler(), tmp_path / "cache")
    assert not list((tmp_path / "cache").rglob("*.zip")), "nothing cached on failure"
