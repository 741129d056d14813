"""The trimmed standard library: what is kept, and the message an import of the rest gives."""

from __future__ import annotations

import importlib.util
import io
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentskit_web.build.files import BuildError
from agentskit_web.build.runtime import (
    FINDER_MODULE,
    STDLIB_MARGIN,
    StdlibSelection,
    load_stdlib_selection,
    stdlib_modules,
    trim_stdlib,
)

ROOT = Path(__file__).resolve().parent.parent

# A tiny stand-in for python_stdlib.zip. Names carry a prefix no real module has, so the
# archive can go on CPython's own sys.path.
FAKE = {
    "akt_a.py": "import akt_b\nfrom akt_pkg import akt_sub\n\ndef later():\n    import akt_c\n",
    "akt_b.py": "from akt_rel import *\n",
    "akt_c.py": "VALUE = 1\n",
    "akt_rel/__init__.py": "from ._inner import x\n",
    "akt_rel/_inner.py": "x = 1\n",
    "akt_pkg/__init__.py": "",
    "akt_pkg/akt_sub.py": "",
    "akt_pkg/akt_other.py": "",
    "akt_pkg/data.txt": "kept with its package",
    "akt_whole/__init__.py": "",
    "akt_whole/deep.py": "",
    "site-packages/README.txt": "not a module",
}


def fake_archive(members: dict[str, str] = FAKE) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def selection(measured: tuple[str, ...], keep: tuple[str, ...] = ()) -> StdlibSelection:
    return StdlibSelection(measured, margin=("akt_whole",), keep=keep)


def modules_of(archive: bytes) -> set[str]:
    with zipfile.ZipFile(io.BytesIO(archive)) as trimmed:
        return set(stdlib_modules(trimmed.namelist()))


def test_keeps_measured_modules_their_imports_parents_and_the_margin_whole() -> None:
    trimmed = trim_stdlib(fake_archive(), selection(("akt_a",)))
    kept = modules_of(trimmed)
    # akt_b and akt_pkg.akt_sub are imported at top level; akt_rel through `import *`,
    # akt_rel._inner through a relative import; the margin package comes whole.
    assert kept == {
        "akt_a",
        "akt_b",
        "akt_rel",
        "akt_rel._inner",
        "akt_pkg",
        "akt_pkg.akt_sub",
        "akt_whole",
        "akt_whole.deep",
        FINDER_MODULE,
    }
    names = zipfile.ZipFile(io.BytesIO(trimmed)).namelist()
    assert "akt_pkg/data.txt" in names  # data of a kept package stays
    assert "site-packages/README.txt" not in names


def test_an_indented_import_is_not_followed_and_keep_adds_it() -> None:
    assert "akt_c" not in modules_of(trim_stdlib(fake_archive(), selection(("akt_a",))))
    kept = modules_of(trim_stdlib(fake_archive(), selection(("akt_a",), keep=("akt_c",))))
    assert "akt_c" in kept


def test_a_keep_entry_that_is_no_module_fails_the_build() -> None:
    with pytest.raises(BuildError, match="akt_nope"):
        trim_stdlib(fake_archive(), selection(("akt_a",), keep=("akt_nope",)))


def test_the_same_inputs_give_the_same_bytes() -> None:
    chosen = selection(("akt_a",))
    assert trim_stdlib(fake_archive(), chosen) == trim_stdlib(fake_archive(), chosen)


def test_an_archive_with_its_own_sitecustomize_is_refused() -> None:
    with pytest.raises(BuildError, match=FINDER_MODULE):
        trim_stdlib(fake_archive({**FAKE, f"{FINDER_MODULE}.py": ""}), selection(("akt_a",)))


@pytest.fixture
def trimmed_on_path(tmp_path: Path) -> Iterator[Path]:
    """The trimmed fake archive first on sys.path and its finder on sys.meta_path."""
    archive = tmp_path / "stdlib.zip"
    archive.write_bytes(trim_stdlib(fake_archive(), selection(("akt_a",))))
    sys.path.insert(0, str(archive))
    before = list(sys.meta_path)
    with zipfile.ZipFile(archive) as opened:
        source = opened.read(f"{FINDER_MODULE}.py").decode()
    spec = importlib.util.spec_from_loader("akt_finder", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, "sitecustomize.py", "exec"), module.__dict__)
    try:
        yield archive
    finally:
        sys.meta_path[:] = before
        sys.path.remove(str(archive))
        for name in [n for n in sys.modules if n.startswith("akt_")]:
            del sys.modules[name]


def test_a_trimmed_module_fails_naming_it_and_how_to_keep_it(trimmed_on_path: Path) -> None:
    importlib.import_module("akt_a")  # kept: imports from the archive
    with pytest.raises(ModuleNotFoundError) as caught:
        importlib.import_module("akt_c")
    assert caught.value.name == "akt_c"
    message = str(caught.value)
    assert "'akt_c'" in message and "[stdlib]" in message and "web/wheels.toml" in message
    assert "akt_c" not in sys.modules  # never half-imported
    with pytest.raises(ModuleNotFoundError, match=r"'akt_pkg\.akt_other'"):
        importlib.import_module("akt_pkg.akt_other")


def test_a_module_nowhere_gets_the_usual_error(trimmed_on_path: Path) -> None:
    with pytest.raises(ModuleNotFoundError) as caught:
        importlib.import_module("akt_never_existed")
    assert "wheels.toml" not in str(caught.value)


def test_the_repository_selection_reads_and_keeps_pyodide_itself() -> None:
    chosen = load_stdlib_selection(ROOT / "web")
    assert chosen.measured, "web/page-modules.txt lists the measured modules"
    assert {"pyodide", "_pyodide", "encodings"} <= set(STDLIB_MARGIN)
    assert all(isinstance(name, str) for name in chosen.keep)
