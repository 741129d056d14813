"""The wheel every reader downloads holds only page code; bench harnesses ship apart.

`agentskit-web build` writes both wheels with `write_wheel` from these specs, so
the tests build them the same way and read the archives back.
"""

import base64
import hashlib
import tomllib
import zipfile
from pathlib import Path

import pytest

from agentskit_web.build.wheels import (
    BENCH_DISTRIBUTION,
    WheelSpec,
    page_wheel_specs,
    write_wheel,
)
from test_layers import import_graph, module_name

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
NEVER_IN_THE_PAGE = ("server", "build", "bench", "cli", "transports.httpx_transport")
# Imported only where sys.platform is not emscripten (transports.default_transport).
HOST_ONLY_BRANCHES = {("agentskit_web.transports", "agentskit_web.transports.httpx_transport")}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("wheels")
    wheels = {}
    for spec in page_wheel_specs(ROOT):
        target = folder / spec.file_name
        write_wheel(spec, SRC, target)
        wheels[spec.name] = target
    return wheels


def modules_in(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return {
            module_name(SRC / name)
            for name in archive.namelist()
            if name.endswith(".py") and not name.split("/")[0].endswith(".dist-info")
        }


def test_the_page_wheel_holds_the_page_layers_and_nothing_else(built):
    modules = modules_in(built["agentskit-web"])
    assert {"agentskit_web.browser.widget", "agentskit_web.protocol.turn"} <= modules
    assert "agentskit_web.transports.fetch_transport" in modules
    leaked = [
        m for m in modules if any(m.startswith(f"agentskit_web.{n}") for n in NEVER_IN_THE_PAGE)
    ]
    assert leaked == []


def test_every_import_of_page_code_resolves_inside_the_wheel(built):
    shipped = modules_in(built["agentskit-web"])
    _, edges, _ = import_graph()
    missing = sorted(
        f"{e.source} -> {e.target}"
        for e in edges
        if e.source in shipped
        and e.target not in shipped
        and (e.source, e.target) not in HOST_ONLY_BRANCHES
    )
    assert missing == []


def test_the_host_only_branch_is_really_guarded_by_the_platform():
    text = (SRC / "agentskit_web/transports/__init__.py").read_text(encoding="utf-8")
    guard = text.index('sys.platform == "emscripten"')
    assert guard < text.index("from .httpx_transport import")


def test_the_bench_wheel_holds_only_the_in_page_harnesses(built):
    modules = modules_in(built[BENCH_DISTRIBUTION])
    assert "agentskit_web.bench.page.render" in modules
    assert all(
        m == "agentskit_web.bench" or m.startswith("agentskit_web.bench.page") for m in modules
    )
    assert not modules & modules_in(built["agentskit-web"])


def test_metadata_carries_the_project_dependencies(built):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    with zipfile.ZipFile(built["agentskit-web"]) as archive:
        metadata = archive.read(f"agentskit_web-{project['version']}.dist-info/METADATA").decode()
    requires = [
        line.split(": ", 1)[1] for line in metadata.splitlines() if line.startswith("Requires-Dist")
    ]
    assert requires == project["dependencies"]


def test_record_lists_every_member_with_its_sha256(built):
    for wheel in built.values():
        with zipfile.ZipFile(wheel) as archive:
            names = archive.namelist()
            record_name = next(n for n in names if n.endswith(".dist-info/RECORD"))
            rows = [r.split(",") for r in archive.read(record_name).decode().splitlines()]
            assert sorted(r[0] for r in rows) == sorted(names)
            for name, digest, size in rows:
                if name == record_name:
                    continue
                data = archive.read(name)
                expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
                assert digest == "sha256=" + expected.decode() and int(size) == len(data)


def test_the_same_sources_give_byte_identical_wheels(tmp_path: Path):
    spec = page_wheel_specs(ROOT)[0]
    write_wheel(spec, SRC, tmp_path / "a.whl")
    write_wheel(spec, SRC, tmp_path / "b.whl")
    assert (tmp_path / "a.whl").read_bytes() == (tmp_path / "b.whl").read_bytes()


def test_the_wheel_file_name_uses_the_normalised_distribution_name():
    spec = WheelSpec("Agentskit.Web-Bench", "1.0", (), (), "")
    assert spec.file_name == "agentskit_web_bench-1.0-py3-none-any.whl"
