"""Precompile the page's wheels to CPython 3.14 bytecode.

In the page, importing pydantic spends most of its time compiling sources. Pyodide's
own distribution ships wheels precompiled for that reason; the host here runs another
CPython, so the bytecode is produced by Pyodide itself under Node (web/compile_wheels.mjs).

Two layouts, both compiled with the *unchecked hash* invalidation mode (the bytes depend
only on the source, so the output is reproducible):

- sourceless (third-party wheels, as Pyodide's distribution ships them): each `x.py` is
  replaced by `x.pyc` at the same path (the legacy `compileall -b` layout: a sourceless
  import needs the .pyc where the .py was). The wheel is smaller than with sources and
  the import system reads one file per module. Binary members (a `.so`) keep their bytes.
- sources (the project's own wheel): every .py stays (tracebacks show source lines) and
  gets `__pycache__/<module>.cpython-314.pyc` next to it; the unchecked hash means the
  import system uses the .pyc without reading or stat-ing the source.

The repacked wheel has a fresh RECORD and its python tag becomes `cp314` (as
pyodide-build's py-compile does): the bytecode only runs on that interpreter. A
sourceless wheel also gets a build tag (`0pyc`), so its file name never equals the
PyPI wheel's (or a with-sources repack's) and no cache can confuse the two. Results are
cached under .cache/pyc-wheels, keyed by the input wheel's sha256, the layout, the
Pyodide version and the compiler's own inputs.

The standard library gets the same treatment (`compile_stdlib`): Pyodide imports it
from python_stdlib.zip with zipimport, which compiles each module's source on every page
load. The repacked zip has `x.pyc` where each `x.py` was (zipimport imports sourceless
bytecode from a zip; its code objects name /lib/python314.zip, as compiling in the page
does); every other member keeps its bytes, and the order is kept. It is cached under
.cache/pyc-stdlib, keyed like the wheels.

Any failure (no Node, a file that does not compile, a wrong magic number) raises
`CompileError`: the build never silently ships uncompiled wheels.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import stat
import subprocess
import tempfile
import zipfile
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .files import sha256_file

# Bump when the output layout changes, so cached wheels are rebuilt.
LAYOUT_VERSION = "3"
SCRIPT_NAME = "compile_wheels.mjs"
CACHE_FOLDER = "pyc-wheels"
NODE_TIMEOUT_S = 600
# Zip date for members the build adds: fixed, so the output is byte-for-byte reproducible.
ADDED_DATE = (1980, 1, 1, 0, 0, 0)
# A sourceless wheel's build tag: the input's (or "0": the wheel spec wants a leading
# digit) plus this suffix, e.g. `pydantic-2.14.4-0pyc-cp314-none-any.whl`.
SOURCELESS_BUILD_SUFFIX = "pyc"
# The argument prefixes web/compile_wheels.mjs understands, one per layout.
SOURCES = "sources"
SOURCELESS = "sourceless"
STDLIB = "stdlib"
STDLIB_CACHE_FOLDER = "pyc-stdlib"
# pyc header flags for a hash-based pyc whose source is never checked.
UNCHECKED_HASH_FLAGS = 0b01
# Unix mode for members the build adds (and originals that carry none).
DEFAULT_MODE = 0o644
# How every member of a served archive (wheels, python_stdlib.zip) is stored: uncompressed,
# so the HTTP layer's gzip/brotli compresses the archive as one stream. Deflated members
# cannot be compressed again (gzip saved nothing on them) and brotli on stored members
# beats per-member deflate by a wide margin (measured in docs/design/architecture.md).
MEMBER_COMPRESSION = zipfile.ZIP_STORED


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

    @property
    def python_tag(self) -> str:
        return "cp" + self.python.replace(".", "")

    def key(self) -> str:
        """What, besides the input wheel and its layout, decides the output bytes."""
        digest = hashlib.sha256()
        for part in (LAYOUT_VERSION, self.pyodide_version, self.python):
            digest.update(part.encode() + b"\0")
        digest.update(self.script.read_bytes())
        return digest.hexdigest()[:16]


def is_pure(wheel: Path) -> bool:
    """A `none-any` wheel: pure Python, no binary members."""
    _name, _version, _build, _python, abi, platform = _split_name(wheel.name)
    return abi == "none" and platform == "any"


def compiled_name(wheel_name: str, python: str, *, sourceless: bool) -> str:
    """The repacked wheel's file name: python tag `cp314`; sourceless adds a build tag.

    A binary wheel must already be built for that interpreter (its python tag is kept).
    """
    name, version, build, python_tag, abi, platform = _split_name(wheel_name)
    tag = "cp" + python.replace(".", "")
    if not (abi == "none" and platform == "any") and python_tag != tag:
        raise CompileError(f"{wheel_name}: a binary wheel for {python_tag}, not {tag}")
    if sourceless:
        build = (build or "0") + SOURCELESS_BUILD_SUFFIX
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


# ---------------------------------------------------------------- driver


@dataclass(frozen=True)
class _Job:
    """One wheel to compile: where it comes from, where it goes, which layout."""

    wheel: Path
    target: Path
    sourceless: bool
    drop: tuple[str, ...] = ()

    @property
    def layout(self) -> str:
        return SOURCELESS if self.sourceless else SOURCES


def compile_wheels(
    wheels: list[Path],
    compiler: Compiler,
    cache: Path,
    *,
    keep_sources: Collection[Path] = (),
    drops: Mapping[Path, tuple[str, ...]] | None = None,
) -> tuple[bool, list[Path]]:
    """The compiled wheel for each input (same order); True if any had to be compiled.

    Wheels in `keep_sources` keep their .py files beside `__pycache__`; every other
    wheel becomes sourceless. `drops` names, per input wheel, member paths (a trailing
    `/` takes a folder) left out of the output. Cache misses are compiled together in
    one Node run (Pyodide boots once). Cache entries no input uses any more are removed.
    """
    root = cache / CACHE_FOLDER
    key = compiler.key()
    jobs = []
    for wheel in wheels:
        sourceless = wheel not in keep_sources
        drop = tuple(sorted((drops or {}).get(wheel, ())))
        name = compiled_name(wheel.name, compiler.python, sourceless=sourceless)
        layout = SOURCELESS if sourceless else SOURCES
        dropped = hashlib.sha256("\0".join(drop).encode()).hexdigest()[:8] if drop else "all"
        folder = root / f"{sha256_file(wheel)[:24]}-{key}-{layout}-{dropped}"
        jobs.append(_Job(wheel, folder / name, sourceless, drop))
    missing = [job for job in jobs if not job.target.is_file()]
    if missing:
        root.mkdir(parents=True, exist_ok=True)
        _compile_missing(missing, compiler, root)
    _prune(root, {job.target.parent.name for job in jobs})
    return bool(missing), [job.target for job in jobs]


def _prune(root: Path, keep: set[str]) -> None:
    for entry in root.iterdir() if root.is_dir() else []:
        if entry.name not in keep:
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()


def _compile_missing(jobs: list[_Job], compiler: Compiler, root: Path) -> None:
    with tempfile.TemporaryDirectory(dir=root, prefix=".work-") as scratch:
        folders = []
        for index, job in enumerate(jobs):
            folder = Path(scratch) / f"w{index}"
            _unpack(job.wheel, folder)
            folders.append((job.layout, folder))
        magic = run_node(compiler, folders)
        for job, (_layout, folder) in zip(jobs, folders, strict=True):
            staged = Path(scratch) / job.target.name
            repack(
                job.wheel, folder, staged, compiler, magic, sourceless=job.sourceless, drop=job.drop
            )
            job.target.parent.mkdir(parents=True, exist_ok=True)
            staged.replace(job.target)


def _unpack(wheel: Path, folder: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            member = PurePosixPath(info.filename)
            if member.is_absolute() or ".." in member.parts:
                raise CompileError(f"{wheel.name}: unsafe member path {info.filename}")
        archive.extractall(folder)


def run_node(compiler: Compiler, folders: list[tuple[str, Path]]) -> bytes:
    """Compile every .py under each (layout, folder) in Pyodide; returns the magic number."""
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
    command = [node, str(compiler.script), *(f"{layout}:{path}" for layout, path in folders)]
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


# ---------------------------------------------------------------- standard library


def compile_stdlib(archive: Path, compiler: Compiler, cache: Path) -> tuple[bool, Path]:
    """`archive` (python_stdlib.zip) precompiled, same file name; True if compiled now.

    Cached by the archive's sha256 and the compiler's key (Pyodide version, script);
    entries no build uses any more are removed.
    """
    root = cache / STDLIB_CACHE_FOLDER
    folder = root / f"{sha256_file(archive)[:24]}-{compiler.key()}"
    target = folder / archive.name
    missing = not target.is_file()
    if missing:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=root, prefix=".work-") as scratch:
            unpacked = Path(scratch) / "stdlib"
            _unpack(archive, unpacked)
            magic = run_node(compiler, [(STDLIB, unpacked)])
            staged = Path(scratch) / archive.name
            repack_stdlib(archive, unpacked, staged, magic)
            folder.mkdir(parents=True, exist_ok=True)
            staged.replace(target)
    _prune(root, {folder.name})
    return missing, target


def repack_stdlib(archive: Path, folder: Path, target: Path, magic: bytes) -> None:
    """Each `x.py` member swapped in place for `x.pyc` from `folder`; the rest unchanged.

    Every member keeps its position, date and mode, so zipimport sees the same tree with
    bytecode where the sources were; all are stored uncompressed (MEMBER_COMPRESSION).
    """
    with zipfile.ZipFile(archive) as source:
        infos = source.infolist()
        names = {info.filename for info in infos}
        clashes = sorted(i.filename for i in infos if _is_source(i) and i.filename + "c" in names)
        if clashes:
            raise CompileError(f"{archive.name}: already holds {clashes[0]}c")
        with zipfile.ZipFile(target, "w") as out:
            for info in infos:
                name, data = info.filename, source.read(info)
                if _is_source(info):
                    name += "c"
                    data = _read_pyc(folder, name, magic, archive.name)
                out.writestr(_same_entry(info, name), data)


def _is_source(info: zipfile.ZipInfo) -> bool:
    return not info.is_dir() and info.filename.endswith(".py")


def _same_entry(original: zipfile.ZipInfo, name: str) -> zipfile.ZipInfo:
    """A new entry named `name` with the original's date and mode, stored uncompressed."""
    info = zipfile.ZipInfo(name, date_time=original.date_time)
    info.compress_type = MEMBER_COMPRESSION
    info.create_system = original.create_system
    info.external_attr = original.external_attr
    return info


# ---------------------------------------------------------------- repack


def repack(
    wheel: Path,
    folder: Path,
    target: Path,
    compiler: Compiler,
    magic: bytes,
    *,
    sourceless: bool,
    drop: tuple[str, ...] = (),
) -> None:
    """`wheel` with the .pyc files compiled into `folder`, WHEEL and RECORD updated.

    Sourceless: each compiled .py member is replaced, in place, by its .pyc. With
    sources: every original member keeps its bytes and order, the `__pycache__` members
    go just before the .dist-info folder. Either way RECORD stays last. Members named
    by `drop` (a path, or a folder ending in `/`) are left out; each entry must match.
    """
    with zipfile.ZipFile(wheel) as source:
        infos = [info for info in source.infolist() if not info.is_dir()]
        infos = _without(infos, drop, wheel.name)
        dist_info = _dist_info(wheel, [info.filename for info in infos])
        record_name = f"{dist_info}/RECORD"
        record: list[tuple[str, bytes]] = []
        retagged = False
        with zipfile.ZipFile(target, "w", compression=MEMBER_COMPRESSION) as out:
            members = _sourceless if sourceless else _with_sources
            for name, data, info in members(source, infos, folder, compiler, magic, dist_info):
                if name == record_name:
                    continue
                if name == f"{dist_info}/WHEEL":
                    data = _retag(data, compiler.python, wheel.name)
                    retagged = True
                _write(out, name, data, info, record)
            if not retagged:
                raise CompileError(f"{wheel.name}: {dist_info}/WHEEL missing")
            lines = [f"{name},sha256={_b64(data)},{len(data)}" for name, data in record]
            lines.append(f"{record_name},,")
            _write(out, record_name, ("\n".join(lines) + "\n").encode(), None, None)


def _without(
    infos: list[zipfile.ZipInfo], drop: tuple[str, ...], wheel: str
) -> list[zipfile.ZipInfo]:
    """`infos` less the members `drop` names; an entry that matches nothing is an error."""
    if not drop:
        return infos

    def dropped(name: str, entry: str) -> bool:
        return name.startswith(entry) if entry.endswith("/") else name == entry

    unmatched = [e for e in drop if not any(dropped(i.filename, e) for i in infos)]
    if unmatched:
        raise CompileError(f"{wheel}: nothing to drop at {unmatched[0]} (the wheel changed?)")
    return [i for i in infos if not any(dropped(i.filename, e) for e in drop)]


# One output member: name, bytes, and the original entry it comes from (None: added).
_Member = tuple[str, bytes, zipfile.ZipInfo | None]


def _sourceless(
    source: zipfile.ZipFile,
    infos: list[zipfile.ZipInfo],
    folder: Path,
    compiler: Compiler,
    magic: bytes,
    dist_info: str,
) -> Iterable[_Member]:
    """Each compiled source swapped for `<name>.pyc` at its path; the rest as it was."""
    for info in infos:
        if not _compiled(info.filename):
            yield info.filename, source.read(info), info
            continue
        pyc = info.filename + "c"
        yield pyc, _read_pyc(folder, pyc, magic, source.filename), info


def _with_sources(
    source: zipfile.ZipFile,
    infos: list[zipfile.ZipInfo],
    folder: Path,
    compiler: Compiler,
    magic: bytes,
    dist_info: str,
) -> Iterable[_Member]:
    """Every original member, with `__pycache__/<name>.cpython-314.pyc` for each source."""
    pycs = []
    for info in infos:
        if _compiled(info.filename):
            path = PurePosixPath(info.filename)
            pycs.append(f"{path.parent}/__pycache__/{path.stem}.{compiler.cache_tag}.pyc")
    pending = [(name, _read_pyc(folder, name, magic, source.filename)) for name in pycs]
    for info in infos:
        if info.filename.startswith(dist_info + "/") and pending:
            for name, data in pending:
                yield name, data, None
            pending = []
        yield info.filename, source.read(info), info
    if pending:
        raise CompileError(f"{source.filename}: {dist_info}/ is not after the package files")


def _compiled(name: str) -> bool:
    """A member the compile step turns into bytecode: a .py outside .dist-info/.data."""
    path = PurePosixPath(name)
    return path.suffix == ".py" and not path.parts[0].endswith((".dist-info", ".data"))


def _read_pyc(folder: Path, name: str, magic: bytes, wheel: str | None) -> bytes:
    """The compiled file, checked: this interpreter's magic, unchecked-hash flags."""
    path = folder / name
    data = path.read_bytes() if path.is_file() else b""
    if data[:4] != magic or int.from_bytes(data[4:8], "little") != UNCHECKED_HASH_FLAGS:
        label = Path(wheel).name if wheel else "wheel"
        raise CompileError(f"{label}: {name} is missing or not an unchecked-hash .pyc")
    return data


def _dist_info(wheel: Path, names: list[str]) -> str:
    folders = {n.split("/", 1)[0] for n in names if n.split("/", 1)[0].endswith(".dist-info")}
    if len(folders) != 1:
        raise CompileError(f"{wheel.name}: expected one .dist-info folder, found {len(folders)}")
    return folders.pop()


def _retag(data: bytes, python: str, wheel: str) -> bytes:
    """WHEEL metadata: its `Tag:` lines name the compiled wheel's python tag."""
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
    original: zipfile.ZipInfo | None,
    record: list[tuple[str, bytes]] | None,
) -> None:
    """One stored member; an original's date and mode are kept (a .so stays 0755)."""
    info = zipfile.ZipInfo(name, date_time=original.date_time if original else ADDED_DATE)
    info.compress_type = MEMBER_COMPRESSION
    mode = (original.external_attr >> 16) & 0o7777 if original else 0
    info.external_attr = (stat.S_IFREG | (mode or DEFAULT_MODE)) << 16
    out.writestr(info, data)
    if record is not None:
        record.append((name, data))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
