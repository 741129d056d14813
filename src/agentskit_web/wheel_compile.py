"""Precompile the page's pure-Python wheels to CPython 3.14 bytecode.

In the page, importing pydantic spends most of its time compiling sources. Pyodide's
own distribution ships wheels precompiled for that reason; the host here runs another
CPython, so the bytecode is produced by Pyodide itself under Node (web/compile_wheels.mjs).

Layout: every .py stays (tracebacks show source lines) and gets
`__pycache__/<module>.cpython-314.pyc` next to it, compiled with the *unchecked hash*
invalidation mode, so the import system uses the .pyc without reading or stat-ing the
source (file times after unpacking do not matter). The repacked wheel has a fresh RECORD,
and its python tag becomes `cp314` (as pyodide-build's py-compile does): the speed-up
only exists on that interpreter. Results are cached under .cache/pyc-wheels, keyed by the
input wheel's sha256, the Pyodide version and the compiler's own inputs.

Any failure (no Node, a file that does not compile, a wrong magic number) raises
`CompileError`: the build never silently ships uncompiled wheels.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

# Bump when the output layout changes, so cached wheels are rebuilt.
LAYOUT_VERSION = "1"
SCRIPT_NAME = "compile_wheels.mjs"
CACHE_FOLDER = "pyc-wheels"
NODE_TIMEOUT_S = 600
# Zip date for members the build adds: fixed, so the output is byte-for-byte reproducible.
ADDED_DATE = (1980, 1, 1, 0, 0, 0)


class CompileError(RuntimeError):
    """The bytecode step cannot complete; the message says what and how to fix it."""


@dataclass(frozen=True)
class Compiler:
    """How to run the compile: the web/ folder (script + node_modules) and the target."""

    web: Path
    pyodide_version: str
    python: str  # "3.14"
    node: str = "node"

    @property
    def script(self) -> Path:
        return self.web / SCRIPT_NAME

    @property
    def cache_tag(self) -> str:
        return "cpython-" + self.python.replace(".", "")

    def key(self) -> str:
        """What, besides the input wheel, decides the output bytes."""
        digest = hashlib.sha256()
        for part in (LAYOUT_VERSION, self.pyodide_version, self.python):
            digest.update(part.encode() + b"\0")
        digest.update(self.script.read_bytes())
        return digest.hexdigest()[:16]


def is_pure(wheel: Path) -> bool:
    """A `none-any` wheel: pure Python, the kind this step compiles."""
    _name, _version, _build, _python, abi, platform = _split_name(wheel.name)
    return abi == "none" and platform == "any"


def compiled_name(wheel_name: str, python: str) -> str:
    """The repacked wheel's file name: python tag `cp314`, everything else kept."""
    name, version, build, _python, abi, platform = _split_name(wheel_name)
    tag = "cp" + python.replace(".", "")
    parts = [name, version, *([build] if build else []), tag, abi, platform]
    return "-".join(parts) + ".whl"


def _split_name(wheel_name: str) -> tuple[str, str, str, str, str, str]:
    if not wheel_name.endswith(".whl"):
        raise CompileError(f"not a wheel file name: {wheel_name}")
    parts = wheel_name[: -len(".whl")].split("-")
    if len(parts) == 5:
        return parts[0], parts[1], "", parts[2], parts[3], parts[4]
    if len(parts) == 6:
        return parts[0], parts[1], parts[2], parts[3], parts[4], parts[5]
    raise CompileError(f"not a wheel file name: {wheel_name}")


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# ---------------------------------------------------------------- driver


def compile_wheels(wheels: list[Path], compiler: Compiler, cache: Path) -> tuple[bool, list[Path]]:
    """The compiled wheel for each input (same order); True if any had to be compiled.

    Cache misses are compiled together in one Node run (Pyodide boots once). Cache
    entries no input uses any more are removed.
    """
    root = cache / CACHE_FOLDER
    key = compiler.key()
    targets = [
        root / f"{sha256_file(wheel)[:24]}-{key}" / compiled_name(wheel.name, compiler.python)
        for wheel in wheels
    ]
    missing = [(w, t) for w, t in zip(wheels, targets, strict=True) if not t.is_file()]
    if missing:
        root.mkdir(parents=True, exist_ok=True)
        _compile_missing(missing, compiler, root)
    _prune(root, {target.parent.name for target in targets})
    return bool(missing), targets


def _prune(root: Path, keep: set[str]) -> None:
    for entry in root.iterdir() if root.is_dir() else []:
        if entry.name not in keep:
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()


def _compile_missing(pairs: list[tuple[Path, Path]], compiler: Compiler, root: Path) -> None:
    with tempfile.TemporaryDirectory(dir=root, prefix=".work-") as scratch:
        folders = []
        for index, (wheel, _target) in enumerate(pairs):
            folder = Path(scratch) / f"w{index}"
            _unpack(wheel, folder)
            folders.append(folder)
        magic = run_node(compiler, folders)
        for (wheel, target), folder in zip(pairs, folders, strict=True):
            staged = Path(scratch) / target.name
            repack(wheel, folder, staged, compiler, magic)
            target.parent.mkdir(parents=True, exist_ok=True)
            staged.replace(target)


def _unpack(wheel: Path, folder: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            member = PurePosixPath(info.filename)
            if member.is_absolute() or ".." in member.parts:
                raise CompileError(f"{wheel.name}: unsafe member path {info.filename}")
        archive.extractall(folder)


def run_node(compiler: Compiler, folders: list[Path]) -> bytes:
    """Compile every .py under `folders` in Pyodide; returns the interpreter's magic."""
    pyodide = compiler.web / "node_modules" / "pyodide" / "pyodide.mjs"
    if not pyodide.is_file():
        raise CompileError(f"missing {pyodide}: run `npm ci` in web/")
    if not compiler.script.is_file():
        raise CompileError(f"missing {compiler.script}")
    node = shutil.which(compiler.node)
    if node is None:
        raise CompileError(
            f"`{compiler.node}` (Node.js 20+) is needed to precompile the page's wheels "
            "with Pyodide; install Node.js"
        )
    command = [node, str(compiler.script), *map(str, folders)]
    try:
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=NODE_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise CompileError(f"{SCRIPT_NAME} did not finish in {NODE_TIMEOUT_S} s") from None
    if result.returncode != 0:
        tail = "\n  ".join(result.stderr.strip().splitlines()[-20:])
        raise CompileError(
            f"precompiling wheels with Pyodide failed (exit {result.returncode}):\n  {tail}"
        )
    return _check_report(result.stdout, compiler)


def _check_report(stdout: str, compiler: Compiler) -> bytes:
    lines = stdout.strip().splitlines()
    try:
        report = json.loads(lines[-1]) if lines else None
    except ValueError:
        report = None
    if not isinstance(report, dict) or report.get("failed") != []:
        raise CompileError(f"{SCRIPT_NAME} gave no valid report: {stdout.strip()[-300:]!r}")
    if report.get("cache_tag") != compiler.cache_tag:
        raise CompileError(
            f"Pyodide runs {report.get('cache_tag')}, the page expects {compiler.cache_tag}: "
            "web/node_modules does not match web/wheels.toml (run `npm ci` in web/)"
        )
    return bytes.fromhex(str(report["magic"]))


# ---------------------------------------------------------------- repack


def repack(wheel: Path, folder: Path, target: Path, compiler: Compiler, magic: bytes) -> None:
    """`wheel` plus the .pyc files compiled into `folder`, with WHEEL and RECORD updated.

    Every original member keeps its bytes and order (sources are not rewritten); the
    `__pycache__` members go just before the .dist-info folder, RECORD stays last.
    """
    with zipfile.ZipFile(wheel) as source:
        infos = source.infolist()
        dist_info = _dist_info(wheel, [info.filename for info in infos])
        record_name = f"{dist_info}/RECORD"
        pycs = _collect_pycs(folder, [i.filename for i in infos], compiler, magic, wheel.name)
        record: list[tuple[str, bytes]] = []
        retagged = False
        with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as out:
            for info in infos:
                if info.filename == record_name or info.is_dir():
                    continue
                if info.filename.startswith(dist_info + "/") and pycs:
                    for name in pycs:
                        _write(out, name, (folder / name).read_bytes(), ADDED_DATE, record)
                    pycs = {}
                data = source.read(info)
                if info.filename == f"{dist_info}/WHEEL":
                    data = _retag(data, compiler.python, wheel.name)
                    retagged = True
                _write(out, info.filename, data, info.date_time, record)
            if pycs or not retagged:
                raise CompileError(f"{wheel.name}: {dist_info}/WHEEL missing or misplaced")
            lines = [f"{name},sha256={_b64(data)},{len(data)}" for name, data in record]
            lines.append(f"{record_name},,")
            _write(out, record_name, ("\n".join(lines) + "\n").encode(), ADDED_DATE, None)


def _dist_info(wheel: Path, names: list[str]) -> str:
    folders = {n.split("/", 1)[0] for n in names if n.split("/", 1)[0].endswith(".dist-info")}
    if len(folders) != 1:
        raise CompileError(f"{wheel.name}: expected one .dist-info folder, found {len(folders)}")
    return folders.pop()


def _collect_pycs(
    folder: Path, members: Iterable[str], compiler: Compiler, magic: bytes, wheel: str
) -> dict[str, None]:
    """The .pyc member names, in source order; each source must have its .pyc."""
    wanted: dict[str, None] = {}
    for name in members:
        path = PurePosixPath(name)
        top = path.parts[0]
        if path.suffix != ".py" or top.endswith((".dist-info", ".data")):
            continue
        pyc = path.parent / "__pycache__" / f"{path.stem}.{compiler.cache_tag}.pyc"
        data = (folder / pyc).read_bytes() if (folder / pyc).is_file() else b""
        if data[:4] != magic or int.from_bytes(data[4:8], "little") != 0b01:
            raise CompileError(f"{wheel}: {pyc} is missing or not an unchecked-hash .pyc")
        wanted[pyc.as_posix()] = None
    return wanted


def _retag(data: bytes, python: str, wheel: str) -> bytes:
    """WHEEL metadata: its `Tag:` lines name the compiled wheel's tag."""
    tag = "cp" + python.replace(".", "")
    lines = data.decode("utf-8").splitlines()
    out: list[str] = []
    for line in lines:
        if line.startswith("Tag:"):
            _python, abi, platform = line.split(":", 1)[1].strip().split("-")
            line = f"Tag: {tag}-{abi}-{platform}"
            if line in out:
                continue
        out.append(line)
    if not any(line.startswith("Tag:") for line in out):
        raise CompileError(f"{wheel}: WHEEL metadata has no Tag line")
    return ("\n".join(out) + "\n").encode("utf-8")


def _write(
    out: zipfile.ZipFile,
    name: str,
    data: bytes,
    date: tuple[int, int, int, int, int, int],
    record: list[tuple[str, bytes]] | None,
) -> None:
    info = zipfile.ZipInfo(name, date_time=date)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    out.writestr(info, data)
    if record is not None:
        record.append((name, data))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
