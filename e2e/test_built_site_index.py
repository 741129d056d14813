"""The index the plugins write at build time, checked against the HTML they built (no browser).

For every build of built_sites.py (MkDocs Material and `mkdocs` themes,
directory URLs on and off, one under `/docs/`; Sphinx `html` and `dirhtml`
with furo and alabaster): the build log says what was indexed; the index file
is in the assets folder under its content-hashed name; every chunk's path is a
file of the built site and its anchor an `id` on that page; no title carries
markup or a `¶`; the sections with tricky ids are cited by the id the
generator published; and `serve-ask --site-dir` answers citing them.
"""

from __future__ import annotations

import json
import re

import httpx
import pytest

from agentskit_web.answering.site_index import SiteIndex, parse_site_index
from agentskit_web.server.ask_serve import AskServeConfig, build_app
from agentskit_web.server.demo_server import demo_uvicorn_config
from agentskit_web.server.preview import PreviewConfig, PreviewServer
from agentskit_web.server.static import AppServer
from built_sites import (
    BUILD_IDS,
    EXPECTED_ANCHORS,
    QUESTIONS,
    SITE_NAME,
    BuiltSite,
    broken_citation,
    built,
    unclean_title,
)

LOG_LINE = re.compile(
    r"agentskit-ask: indexed (\d+) pages \(\d+ sections\) into (\S+agentskit-index\.[0-9a-f]{16}"
    r"\.json) \((\d+(?:\.\d)? (?:B|kB|MB))\)"
)


def _index(site: BuiltSite) -> SiteIndex:
    decoded = parse_site_index(site.index_file.read_bytes())
    assert decoded.ok, decoded.diagnostic
    index = decoded.value
    assert isinstance(index, SiteIndex)
    return index


@pytest.mark.parametrize("build_id", BUILD_IDS)
def test_the_build_writes_an_index_whose_every_chunk_lands_on_the_built_site(
    build_id: str,
) -> None:
    site = built(build_id)
    index = _index(site)
    found = LOG_LINE.search(site.log)
    assert found, f"no index line in the build log:\n{site.log[-2000:]}"
    assert int(found.group(1)) == index.pages == 3
    assert found.group(2).endswith(site.index_file.name)
    assert site.index_file.name == index.file_name(), "the file is not named by its content"
    assert index.base_path == site.build.base_path
    assert index.site_name == SITE_NAME
    broken = []
    for chunk in index.chunk_list():
        url = chunk.path + (f"#{chunk.anchor}" if chunk.anchor else "")
        reason = broken_citation(site, url)
        if reason is not None:
            broken.append(reason)
        for title in (chunk.page_title, chunk.heading):
            assert not unclean_title(title), f"{url}: markup in the title {title!r}"
    assert broken == [], "\n".join(broken)
    anchors = {chunk.anchor for chunk in index.chunk_list()}
    expected = EXPECTED_ANCHORS[site.build.generator]
    assert expected <= anchors, (
        f"missing {sorted(expected - anchors)} in {sorted(anchors - {None})}"
    )
    paths = {chunk.path for chunk in index.chunk_list()}
    assert (
        site.build.url_of("guide/battery.md" if site.build.generator == "mkdocs" else "battery.rst")
        in paths
    )


@pytest.mark.parametrize("build_id", BUILD_IDS)
def test_serve_ask_site_dir_answers_citing_the_built_pages(build_id: str) -> None:
    site = built(build_id)
    app = build_app(AskServeConfig(site_dir=site.out, pace_seconds=0))
    assert app.state.source.origin == f"the index file {site.index_file}"
    assert app.state.startup_notes and "No site config" in app.state.startup_notes[0]
    cited = []
    with AppServer(app, settings=demo_uvicorn_config) as server, httpx.Client() as client:
        for question in QUESTIONS.values():
            body = {"messages": [{"role": "user", "content": question}]}
            response = client.post(server.url + "/api/ask", json=body)
            assert response.status_code == 200, response.text
            for line in response.text.splitlines():
                event = json.loads(line)
                if event.get("name") == "cite":
                    for source in event["args"]["sources"]:
                        url = source["path"] + (
                            "#" + source["anchor"] if "anchor" in source else ""
                        )
                        cited.append(url)
                        assert not unclean_title(source["title"]), source
    assert cited, "no source cited"
    broken = [reason for url in cited if (reason := broken_citation(site, url))]
    assert broken == [], "\n".join(broken)


def test_preview_serves_a_sub_path_site_under_its_base_path() -> None:
    site = built("mkdocs-material-files-subpath")
    config = PreviewConfig(site_dir=site.out, pace_seconds=0)
    with PreviewServer(config) as preview, httpx.Client(base_url=preview.url) as client:
        assert preview.site_url == preview.url + "/docs/"
        home = client.get("/")
        assert home.status_code == 307 and home.headers["location"] == "/docs/"
        page = client.get("/docs/guide/battery.html")
        assert page.status_code == 200 and "<agentskit-ask" in page.text
        assert client.get("/guide/battery.html").status_code == 404
        index = client.get(f"/docs/agentskit/{site.index_file.name}")
        assert index.status_code == 200
        assert index.headers["cache-control"] == "public, max-age=31536000, immutable"
