"""Extras that each work alone, and host requirements as ranges that admit the page's pins.

A missing extra is hidden the way Python itself reports an absent module (a
`None` in `sys.modules` makes `find_spec` find nothing and `import` raise
ModuleNotFoundError), in a child interpreter, so the real CLI and the real
generators run exactly as they would in an environment without it. The clean
venv with the built wheel (e2e/test_wheel_install.py) checks the same on a real
install.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from agentskit_web.build.files import BuildError
from agentskit_web.build.pins import WheelPin, _check_pyproject_pins
from agentskit_web.extras import COMMAND_EXTRAS, EXTRA_MODULES

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
HIDE = "import sys\nfor name in {names!r}: sys.modules[name] = None\n"


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )


def _cli_without(modules: tuple[str, ...], *argv: str) -> subprocess.CompletedProcess[str]:
    code = HIDE.format(names=modules) + (
        f"from agentskit_web.cli import main\nraise SystemExit(main({list(argv)!r}))\n"
    )
    return _run(code)


@pytest.mark.parametrize(
    ("argv", "hidden", "extra"),
    [
        (("serve-ask", "--help"), ("uvicorn",), "server"),
        (("ask", "http://127.0.0.1:9/api/ask", "hi"), ("httpx",), "server"),
        (("turn", "--help"), ("starlette",), "server"),
        (("serve",), ("uvicorn",), "server"),
        (("assets", "/tmp/agentskit-unused"), ("brotli",), "build"),
        (("build",), ("packaging",), "build"),
        (("check", "http://127.0.0.1:9/"), ("playwright",), "testing"),
    ],
)
def test_a_command_without_its_extra_says_which_in_one_line(
    argv: tuple[str, ...], hidden: tuple[str, ...], extra: str
) -> None:
    result = _cli_without(hidden, *argv)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert f"[{extra}]" in lines[0] and f"pip install 'agentskit-web[{extra}]'" in lines[0]
    assert repr(hidden[0]) in lines[0]


def test_a_command_with_its_extra_runs() -> None:
    """The guard is not a blanket refusal: with the extra present, --help prints help."""
    result = _cli_without((), "serve-ask", "--help")
    assert result.returncode == 0, result.stderr
    assert "usage" in result.stdout


def test_check_help_needs_no_extra() -> None:
    """`check --help` says what the command does before the owner installs [testing]."""
    result = _cli_without(("playwright",), "check", "--help")
    assert result.returncode == 0, result.stderr
    assert "--strict-page" in result.stdout


def test_every_command_names_known_extras() -> None:
    for command, extras in COMMAND_EXTRAS.items():
        assert set(extras) <= set(EXTRA_MODULES), command


def test_each_extra_declares_the_distributions_of_its_modules() -> None:
    """An extra that forgot a module's distribution would install without it (the `[mkdocs]`
    extra once lacked brotli): every module the code looks up is provided by the extra."""
    providers = importlib.metadata.packages_distributions()
    declared = PROJECT["optional-dependencies"]
    for extra, modules in EXTRA_MODULES.items():
        names = {canonicalize_name(Requirement(line).name) for line in declared[extra]}
        for module in modules:
            owners = {canonicalize_name(d) for d in providers.get(module, [])}
            assert owners & names, f"[{extra}] lacks the distribution of {module!r}: {owners}"


def _lower_bound(requirement: Requirement) -> str:
    return next(spec.version for spec in requirement.specifier if spec.operator == ">=")


def test_host_requirements_are_ranges_with_lower_bounds_and_no_exact_pins() -> None:
    """A lower bound each; an upper cap only where a major version is known to break us."""
    lines = list(PROJECT["dependencies"])
    for extra, requirements in PROJECT["optional-dependencies"].items():
        if extra not in ("dev", "fuzz", "mutate"):  # the developers' own tools stay exact
            lines += requirements
    for line in lines:
        operators = {spec.operator for spec in Requirement(line).specifier}
        assert ">=" in operators, f"{line}: a host requirement needs a lower bound"
        assert operators <= {">=", "<"}, f"{line}: a range, not a pin"


def test_the_lowest_constraints_install_each_lower_bound() -> None:
    """constraints/lowest.txt is what `make test-resolutions` tests: the bounds themselves."""
    lowest = {}
    for line in (ROOT / "constraints" / "lowest.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            requirement = Requirement(line)
            lowest[canonicalize_name(requirement.name)] = str(requirement.specifier)[2:]
    lines = list(PROJECT["dependencies"])
    for extra in ("server", "scale", "postgres", "build", "mkdocs", "sphinx", "testing"):
        lines += PROJECT["optional-dependencies"][extra]
    for line in lines:
        requirement = Requirement(line)
        bound = _lower_bound(requirement)
        name = canonicalize_name(requirement.name)
        assert name in lowest, f"constraints/lowest.txt does not install {name}"
        tested = lowest[name]
        assert Version(tested) == Version(bound), f"{name}: tested {tested}, declared >={bound}"


def _pins_root(tmp_path: Path, dependency: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "x"\ndependencies = ["{dependency}"]\n', encoding="utf-8"
    )
    return tmp_path


PIN = WheelPin("pydantic", "2.14.4", "pydantic-2.14.4-py3-none-any.whl", "0" * 64)


@pytest.mark.parametrize("dependency", ["pydantic>=2.14", "pydantic>=2.14.4", "pydantic==2.14.4"])
def test_a_page_pin_inside_the_host_range_builds(tmp_path: Path, dependency: str) -> None:
    _check_pyproject_pins(_pins_root(tmp_path, dependency), [PIN])


@pytest.mark.parametrize("dependency", ["pydantic>=2.14.5", "pydantic>=3", "pydantic<2.14.4"])
def test_a_page_pin_outside_the_host_range_stops_the_build(tmp_path: Path, dependency: str) -> None:
    with pytest.raises(BuildError, match=r"pins pydantic 2\.14\.4, outside"):
        _check_pyproject_pins(_pins_root(tmp_path, dependency), [PIN])


def test_a_host_requirement_the_page_lacks_stops_the_build(tmp_path: Path) -> None:
    with pytest.raises(BuildError, match="does not pin markdown-it-py"):
        _check_pyproject_pins(_pins_root(tmp_path, "markdown-it-py>=4.0"), [PIN])


SITES = ROOT / "fixtures" / "sites"


def test_mkdocs_without_brotli_stops_at_once_naming_the_mkdocs_extra_in_one_line(
    tmp_path: Path,
) -> None:
    """Before any page is built (not 20 s later in on_post_build), and no traceback."""
    config = (SITES / "mkdocs" / "mkdocs.yml").read_text(encoding="utf-8")
    written = tmp_path / "mkdocs.yml"
    written.write_text(config.replace("docs_dir: ../docs", f"docs_dir: {SITES / 'docs'}"))
    site = tmp_path / "site"
    result = _run(
        HIDE.format(names=("brotli",))
        + "from mkdocs.__main__ import cli\n"
        + f"cli(['build', '-q', '-f', {str(written)!r}, '-d', {str(site)!r}])\n"
    )
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "agentskit-ask" in line]
    assert len(errors) == 1 and "pip install 'agentskit-web[mkdocs]'" in errors[0], result.stderr
    assert "no module named 'brotli'" in errors[0]
    assert not (site / "index.html").exists(), "the pages were built before the error"


def test_sphinx_without_brotli_stops_at_config_naming_the_sphinx_extra(
    tmp_path: Path,
) -> None:
    out = tmp_path / "site"
    argv = ["-q", "-b", "html", "-c", str(SITES / "sphinx"), str(SITES / "docs"), str(out)]
    result = _run(
        HIDE.format(names=("brotli",))
        + f"from sphinx.cmd.build import main\nraise SystemExit(main({argv!r}))\n"
    )
    # Sphinx reports a ConfigError in its own format: Sphinx 8 as "Configuration error:" and
    # the message alone, Sphinx 9 as a "Configuration error!" report (as for a bad setting)
    # ending in it. Either way the message names the extra and no ModuleNotFoundError escapes.
    assert result.returncode != 0
    assert "Configuration error" in result.stderr
    assert "ModuleNotFoundError" not in result.stderr
    needs = "agentskit-ask: the agentskit_web.sphinx extension needs the [sphinx] extra"
    assert needs in result.stderr and "pip install 'agentskit-web[sphinx]'" in result.stderr
    assert not (out / "contents.html").exists()


def test_check_with_a_chromium_that_cannot_start_is_one_line(tmp_path: Path) -> None:
    """A Playwright failure is a reason on one line, not a traceback (issue 23, item 8)."""
    from agentskit_web.server.static import AppServer, create_static_app

    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<!doctype html><agentskit-ask></agentskit-ask>\n")
    server = AppServer(create_static_app(site)).start()
    try:
        missing = str(tmp_path / "no-such-chromium")
        argv = ["check", server.url + "/", "--chromium", missing]
        code = f"from agentskit_web.cli import main\nraise SystemExit(main({argv!r}))\n"
        result = _run(code)
    finally:
        server.stop()
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and "cannot start Chromium" in result.stderr
