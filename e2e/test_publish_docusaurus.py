"""`agentskit-web publish --inject` on a real Docusaurus build (slow: minutes).

The same site as e2e/test_publish_generators.py (three sections, nested pages,
code), written as Docusaurus docs with the classic preset, installed from npm
(`@docusaurus/core` and `@docusaurus/preset-classic` at DOCUSAURUS_VERSION) and
built with `npm run build`; then the recipe's shell line from docs/embedding.md
runs as written, from the release wheel in a clean venv. Installing Docusaurus
takes minutes, so the test is marked `slow`: `make e2e` (and so CI) runs it with the
rest, `make e2e-slow` runs it alone.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from agentskit_web.testing import AskWidget
from e2e_support import BackgroundServer
from test_publish_generators import (  # noqa: F401 (fixtures shared with that module)
    ANSWER_WORD,
    NESTED_PAGE,
    PAGES,
    QUESTION,
    Host,
    assert_link_resolves,
    run_recipe,
    server,
    source_hrefs,
    venv,
    watch,
)
from wheel_support import Venv

pytestmark = pytest.mark.slow
DOCUSAURUS_VERSION = "3.10.2"
NPM_INSTALL_SECONDS = 900


def write_docusaurus_source(folder: Path) -> None:
    folder.mkdir(parents=True)
    package = {
        "name": "lantern-docs",
        "private": True,
        "scripts": {"build": "docusaurus build"},
        "dependencies": {
            "@docusaurus/core": DOCUSAURUS_VERSION,
            "@docusaurus/preset-classic": DOCUSAURUS_VERSION,
            "react": "^19.0.0",
            "react-dom": "^19.0.0",
        },
    }
    (folder / "package.json").write_text(json.dumps(package, indent=1), encoding="utf-8")
    (folder / "docusaurus.config.js").write_text(
        "module.exports = {\n"
        "  title: 'Lantern', url: 'https://lantern.example', baseUrl: '/',\n"
        "  onBrokenLinks: 'throw',\n"
        "  presets: [['classic', {docs: {routeBasePath: '/'}, blog: false, pages: false}]],\n"
        "};\n",
        encoding="utf-8",
    )
    docs = folder / "docs"
    docs.mkdir()
    (docs / "index.md").write_text(
        "---\nslug: /\ntitle: Lantern docs\n---\n\nThe lantern's manual.\n", encoding="utf-8"
    )
    for path, (title, body) in PAGES.items():
        target = docs / f"{path}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"---\ntitle: {title}\n---\n\n{body}", encoding="utf-8")


@pytest.fixture(scope="module")
def site(venv: Venv) -> Path:  # noqa: F811 (the imported fixture)
    source = venv.work / "docusaurus"
    write_docusaurus_source(source)
    env = {**os.environ, "npm_config_fund": "false", "npm_config_audit": "false"}
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=source,
        env=env,
        check=True,
        timeout=NPM_INSTALL_SECONDS,
        capture_output=True,
    )
    done = run_recipe(venv, source, "docusaurus")
    assert "static answers:" in done.stdout and "embedded in" in done.stdout, done.stdout
    return source / "build"


@pytest.fixture
def host(site: Path) -> Host:
    return Host(site)


def test_a_published_docusaurus_site_answers_in_the_page(
    host: Host,
    server: BackgroundServer,  # noqa: F811
    page: Page,
) -> None:
    page.goto(server.url + f"/{NESTED_PAGE}/")
    expect(page.locator("agentskit-ask")).to_have_attribute("data-answers", "static")
    widget = AskWidget(page).open()
    widget.ask(QUESTION)
    assert widget.wait_answer() == "complete"
    assert ANSWER_WORD in widget.answer_text
    assert host.posts == []
    hrefs = source_hrefs(page)
    assert hrefs and hrefs[0].startswith(server.url + "/guide/setup/charging"), hrefs
    for href in hrefs:
        assert href.startswith(server.url + "/"), href
        assert_link_resolves(page, href)
