"""Precompiling wheels with Pyodide under Node: repacked wheel, RECORD, magic, cache, errors."""

from __future__ import annotations

import base64
import hashlib
import shutil
import tomllib
import zipfile
from pathlib import Path

import pytest

from agentskit_web import wheel_compile
from agentskit_web.wheel_compile import CompileError, Compiler, compile_wheels

ROOT = Path(__file__).resolve().parents[1]
WEB = ROOT / "web"
RUNTIME = tomllib.loads((WEB / "wheels.toml").read_text(encoding="utf-8"))["runtime"]
HAVE_RUNTIME = (WEB / "node_modules" / "pyodide" / "pyodide.mjs").is_file()
HAVE_NODE = shutil.which("node") is not None


def require_runtime() -> None:
    """These tests run the real compile: `make unit` installs web/node_modules first."""
    assert HAVE_NODE and HAVE_RUNTIME, "needs Node.js and web/node_modules: run `make unit`"


SOURCES = {
    "tiny/__init__.py": b'"""Tiny."""\nfrom .mod import add\n',
    "tiny/mod.py": b"def add(a, b):\n    return a + b  # caf\xc3\xa9\n",
    "tiny/sub/__init__.py": b"",
    "tiny/data.txt": b"not python\n",
}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def make_wheel(folder: Path, sources: dict[str, bytes], name: str = "tiny") -> Path:
    """A minimal valid pure-Python wheel with the given package files."""
    dist_info = f"{name}-1.0.dist-info"
    files = dict(sources)
    files[f"{dist_info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode()
    files[f"{dist_info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        b"Tag: py2-none-any\nTag: py3-none-any\n"
    )
    record = "".join(f"{n},sha256={_b64(d)},{len(d)}\n" for n, d in files.items())
    files[f"{dist_info}/RECORD"] = (record + f"{dist_info}/RECORD,,\n").encode()
    path = folder / f"{name}-1.0-py2.py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for member, data in files.items():
            archive.writestr(member, data)
    return path


def compiler(**overrides: str) -> Compiler:
    return Compiler(WEB, RUNTIME["pyodide"], RUNTIME["python"], **overrides)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(input wheel, compiled wheel, cache folder): one real Node run for the module."""
    require_runtime()
    folder = tmp_path_factory.mktemp("compile")
    wheel = make_wheel(folder, SOURCES)
    cache = folder / "cache"
    changed, [output] = compile_wheels([wheel], compiler(), cache)
    assert changed
    return wheel, output, cache


def test_compiled_name_takes_the_interpreter_tag() -> None:
    name = wheel_compile.compiled_name
    assert name("pydantic-2.14.4-py3-none-any.whl", "3.14") == "pydantic-2.14.4-cp314-none-any.whl"
    assert name("six-1.17.0-py2.py3-none-any.whl", "3.14") == "six-1.17.0-cp314-none-any.whl"
    assert name("a-1.0-7-py3-none-any.whl", "3.14") == "a-1.0-7-cp314-none-any.whl"
    with pytest.raises(CompileError, match="not a wheel file name"):
        name("a-1.0.tar.gz", "3.14")


def test_only_pure_wheels_are_compiled() -> None:
    assert wheel_compile.is_pure(Path("pydantic-2.14.4-py3-none-any.whl"))
    assert not wheel_compile.is_pure(
        Path("pydantic_core-2.50.5-cp314-cp314-pyemscripten_2026_0_wasm32.whl")
    )


def test_repacked_wheel_has_a_valid_record(compiled: tuple[Path, Path, Path]) -> None:
    require_runtime()
    _wheel, output, _cache = compiled
    assert output.name == "tiny-1.0-cp314-none-any.whl"
    with zipfile.ZipFile(output) as archive:
        assert archive.testzip() is None
        names = archive.namelist()
        record_name = "tiny-1.0.dist-info/RECORD"
        assert names[-1] == record_name
        rows = [line.split(",") for line in archive.read(record_name).decode().splitlines()]
        assert {row[0] for row in rows} == set(names)
        for member, digest, size in rows:
            if member == record_name:
                assert (digest, size) == ("", "")
                continue
            data = archive.read(member)
            assert digest == f"sha256={_b64(data)}", member
            assert int(size) == len(data), member
        wheel_meta = archive.read("tiny-1.0.dist-info/WHEEL").decode()
    assert "Tag: cp314-none-any\n" in wheel_meta
    assert "py3-none-any" not in wheel_meta


def test_pyc_members_are_unchecked_hash_cpython_314(compiled: tuple[Path, Path, Path]) -> None:
    require_runtime()
    _wheel, output, _cache = compiled
    expected = {
        "tiny/__pycache__/__init__.cpython-314.pyc",
        "tiny/__pycache__/mod.cpython-314.pyc",
        "tiny/sub/__pycache__/__init__.cpython-314.pyc",
    }
    with zipfile.ZipFile(output) as archive:
        pycs = {name for name in archive.namelist() if name.endswith(".pyc")}
        assert pycs == expected
        for name in pycs:
            header = archive.read(name)[:16]
            magic = int.from_bytes(header[:2], "little")
            # CPython 3.14 magic numbers are 3600-3649 (3.15 starts at 3650).
            assert 3600 <= magic < 3650 and header[2:4] == b"\r\n", (name, magic)
            assert int.from_bytes(header[4:8], "little") == 0b01, name  # hash-based, unchecked
            source = name.replace("__pycache__/", "").replace(".cpython-314.pyc", ".py")
            assert source in archive.namelist(), name


def test_original_members_are_unchanged(compiled: tuple[Path, Path, Path]) -> None:
    require_runtime()
    wheel, output, _cache = compiled
    with zipfile.ZipFile(wheel) as before, zipfile.ZipFile(output) as after:
        for member in SOURCES:
            assert after.read(member) == before.read(member) == SOURCES[member]
        kept = [n for n in after.namelist() if not n.endswith((".pyc", "RECORD", "WHEEL"))]
        assert kept == [n for n in before.namelist() if not n.endswith(("RECORD", "WHEEL"))]


def test_a_second_run_uses_the_cache(
    compiled: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    require_runtime()
    wheel, output, cache = compiled
    before = output.read_bytes()

    def no_node(*_args: object) -> bytes:
        raise AssertionError("the cache should have answered")

    monkeypatch.setattr(wheel_compile, "run_node", no_node)
    changed, [again] = compile_wheels([wheel], compiler(), cache)
    assert not changed
    assert again == output
    assert again.read_bytes() == before


def test_a_source_that_does_not_compile_fails_clearly(tmp_path: Path) -> None:
    require_runtime()
    wheel = make_wheel(tmp_path, {"broken/__init__.py": b"def (:\n"}, name="broken")
    with pytest.raises(CompileError, match=r"(?s)failed.*SyntaxError"):
        compile_wheels([wheel], compiler(), tmp_path / "cache")
    assert not list((tmp_path / "cache").rglob("*.whl")), "nothing cached on failure"


def test_missing_node_fails_clearly(tmp_path: Path) -> None:
    require_runtime()
    wheel = make_wheel(tmp_path, SOURCES)
    with pytest.raises(CompileError, match=r"Node\.js"):
        compile_wheels([wheel], compiler(node="no-such-node-binary"), tmp_path / "cache")
