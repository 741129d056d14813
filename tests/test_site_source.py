"""What the backend answers from: `serve-ask --site-dir/--index/--docs` and `preview`, for real.

The commands run as processes from a folder that is not the project (as an
owner runs them), on a small folder of HTML pages written here; the answers
come over a real socket and cite the pages' own URLs and ids. Without a site
config the backend derives one from the site's name and says so in one line.
"""

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from _ask_helpers import site, write_docs
from agentskit_web.answering.site_index import SiteIndex
from agentskit_web.cli.preview import widget_snippet
from agentskit_web.indexing.site import index_site, write_site_index
from agentskit_web.server.ask_serve import AskServeConfig, StartupError, build_app
from agentskit_web.server.preview import (
    PREVIEW_CSP,
    PreviewConfig,
    PreviewServer,
    create_preview_app,
    has_widget,
    wire_endpoint,
)
from agentskit_web.server.site_source import (
    DERIVED_ASSISTANT_ID,
    DERIVED_CORPUS_ID,
    SiteSourceError,
    derived_site_config,
    from_site_dir,
    read_index_file,
)

PAGE = """<!doctype html><html><head><title>{title} - Lumen docs</title></head>
<body><nav>Home Guide</nav><main>
<h1 id="top-{slug}">{title}</h1><p>{intro}</p>
<section id="{slug}-details"><h2>Details<a class="headerlink" href="#{slug}-details">¶</a></h2>
<p>{details}</p></section>
</main></body></html>"""
PAGES = {
    "index.html": ("Lumen docs", "home", "The Lumen is a trail lantern.", "Read the guide."),
    "guide/charging/index.html": (
        "Charging",
        "charging",
        "Plug the cable into the base.",
        "The battery takes ninety minutes to charge fully; the ring glows green.",
    ),
    "guide/pairing.html": (
        "Pairing",
        "pairing",
        "Pair the remote with the app.",
        "Hold the button for five seconds to pair the remote.",
    ),
}
QUESTION = "How long does the battery take to charge?"


def write_site(folder: Path) -> Path:
    for name, (title, slug, intro, details) in PAGES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        page = PAGE.format(title=title, slug=slug, intro=intro, details=details)
        path.write_text(page, encoding="utf-8")
    return folder


def _cited(body: str) -> list[str]:
    for line in body.splitlines():
        event = json.loads(line)
        if event.get("name") == "cite":
            return [
                source["path"] + ("#" + source["anchor"] if "anchor" in source else "")
                for source in event["args"]["sources"]
            ]
    return []


@contextmanager
def running(arguments: list[str], cwd: Path, first: str) -> Iterator[tuple[list[str], str]]:
    """The CLI as a process (from `cwd`); yields its first lines and the URL on the `first` line."""
    process = subprocess.Popen(
        [sys.executable, "-m", "agentskit_web.cli", *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None and process.stderr is not None
    lines = [process.stdout.readline()]
    if not lines[0].startswith(first):
        process.kill()
        raise AssertionError(f"did not start: {lines[0]!r} {process.stderr.read()!r}")
    lines += [process.stdout.readline() for _ in range(3)]
    url = lines[0].removeprefix(first).split()[0]
    try:
        yield lines, url
    finally:
        process.send_signal(signal.SIGINT)
        try:
            assert process.wait(timeout=15) == 0
        finally:
            if process.poll() is None:
                process.kill()


def test_serve_ask_docs_from_any_folder_needs_no_site_config(tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "my-docs")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    arguments = ["serve-ask", "--docs", str(docs), "--port", "0", "--pace", "0"]
    with running(arguments, elsewhere, "Ask backend: ") as (lines, url):
        assert any(line.startswith("No site config: answering as") for line in lines), lines
        assert sum("No site config" in line for line in lines) == 1
        reply = httpx.post(
            url, json={"messages": [{"role": "user", "content": "How do I install the widget?"}]}
        )
        assert reply.status_code == 200, reply.text
        assert _cited(reply.text)


def test_serve_ask_site_dir_cites_the_built_urls_and_ids(tmp_path: Path) -> None:
    built = write_site(tmp_path / "site")
    arguments = ["serve-ask", "--site-dir", str(built), "--port", "0", "--pace", "0"]
    with running(arguments, tmp_path, "Ask backend: ") as (lines, url):
        assert any("indexed at start-up (3 pages)" in line for line in lines), lines
        reply = httpx.post(url, json={"messages": [{"role": "user", "content": QUESTION}]})
        assert reply.status_code == 200, reply.text
        assert _cited(reply.text)[0] == "/guide/charging/#charging-details"


def test_a_site_config_beside_the_docs_is_used_and_an_explicit_one_must_read(
    tmp_path: Path,
) -> None:
    docs = write_docs(tmp_path / "docs")
    (docs / "site.json").write_text(json.dumps(site()), encoding="utf-8")
    app = build_app(AskServeConfig(docs=docs))
    assert app.state.startup_notes == []
    assert app.state.ask.site.site_id == site()["siteId"]
    with pytest.raises(StartupError, match=r"nope\.json cannot be read"):
        build_app(AskServeConfig(docs=docs, site=tmp_path / "nope.json"))


def test_the_derived_config_is_valid_and_named_after_the_site(tmp_path: Path) -> None:
    app = build_app(AskServeConfig(site_dir=write_site(tmp_path / "site")))
    settings = app.state.ask.site
    assert settings.assistant_name == "Lumen docs guide"
    assert (settings.site_id, settings.corpus_id) == ("lumen-docs", DERIVED_CORPUS_ID)
    assert settings.assistant_id == DERIVED_ASSISTANT_ID
    assert app.state.startup_notes == [
        'No site config: answering as "Lumen docs guide" from one corpus (docs); '
        "--site FILE sets the names, limits and synonyms."
    ]
    # A name with nothing usable for an id still gives a valid config.
    assert derived_site_config("¶¶¶")["siteId"] == "docs"


def test_the_index_file_is_used_when_its_base_path_matches(tmp_path: Path) -> None:
    built = write_site(tmp_path / "site")
    written = write_site_index(index_site(built, base_path="/docs/"), built / "agentskit")
    source = from_site_dir(built)
    assert source.origin == f"the index file {written}"
    assert source.base_path == "/docs/" and source.pages == 3
    assert from_site_dir(built, base_path="docs").origin == f"the index file {written}"
    # Another base path: the HTML is indexed again, so citations match where it is served.
    again = from_site_dir(built, base_path="/")
    assert again.origin.endswith("indexed at start-up") and again.base_path == "/"
    assert {chunk.path for chunk in again.chunks} == {
        "/",
        "/guide/charging/",
        "/guide/pairing.html",
    }


def test_bad_sources_stop_start_up_with_one_line(tmp_path: Path) -> None:
    with pytest.raises(StartupError, match=r"Site folder .*missing does not exist"):
        build_app(AskServeConfig(site_dir=tmp_path / "missing"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(StartupError, match="no HTML page with text"):
        build_app(AskServeConfig(site_dir=empty))
    bad = tmp_path / "agentskit-index.0123456789abcdef.json"
    bad.write_text('{"format": "something else"}', encoding="utf-8")
    with pytest.raises(SiteSourceError, match=r"not an agentskit\.site-index version 1 or 2"):
        read_index_file(bad)
    with pytest.raises(StartupError, match="not valid JSON"):
        bad.write_text("{", encoding="utf-8")
        build_app(AskServeConfig(index_file=bad))
    with pytest.raises(StartupError, match="not both"):
        build_app(AskServeConfig(index_file=bad, site_dir=empty))


def test_serve_ask_index_answers_from_the_file(tmp_path: Path) -> None:
    index = index_site(write_site(tmp_path / "site"))
    file = write_site_index(index, tmp_path / "out")
    app = build_app(AskServeConfig(index_file=file, pace_seconds=0))
    assert isinstance(app.state.source.index, SiteIndex)
    assert app.state.source.pages == 3


def test_preview_serves_the_site_and_answers_on_one_origin(tmp_path: Path) -> None:
    built = write_site(tmp_path / "site")
    arguments = ["preview", str(built), "--port", "0", "--no-widget"]
    with running(arguments, tmp_path, "Preview: ") as (lines, url):
        assert url.endswith("/") and "3 pages indexed" in lines[1], lines
        assert any("no Ask widget" in line for line in lines), lines
        origin = url.rstrip("/")
        assert httpx.get(origin + "/guide/pairing.html").status_code == 200
        assert httpx.get(origin + "/guide/charging/").text.count("ninety minutes") == 1
        body = {"messages": [{"role": "user", "content": QUESTION}]}
        reply = httpx.post(origin + "/api/ask", json=body)
        assert reply.status_code == 200 and _cited(reply.text)[0].startswith("/guide/charging/")


def test_preview_sends_a_content_security_policy(tmp_path: Path) -> None:
    """Issue 36: the preview sent no CSP; every response now carries PREVIEW_CSP."""
    built = write_site(tmp_path / "site")
    config = PreviewConfig(site_dir=built, base_path="/docs/")
    with PreviewServer(config) as preview, httpx.Client(base_url=preview.url) as client:
        replies = [
            client.get("/docs/guide/pairing.html"),
            client.get("/docs/missing.html"),
            client.get("/"),  # the redirect to the base path
            client.post("/api/ask", json={"messages": [{"role": "user", "content": QUESTION}]}),
        ]
    assert [r.status_code for r in replies] == [200, 404, 307, 200]
    for reply in replies:
        policy = reply.headers["content-security-policy"]
        assert policy == PREVIEW_CSP
        assert "connect-src 'self'" in policy and "object-src 'none'" in policy


def test_preview_under_a_base_path(tmp_path: Path) -> None:
    built = write_site(tmp_path / "site")
    app = create_preview_app(PreviewConfig(site_dir=built, base_path="/docs/"))
    assert app.state.source.base_path == "/docs/"
    paths = {chunk.path for chunk in app.state.source.chunks}
    assert paths == {"/docs/", "/docs/guide/charging/", "/docs/guide/pairing.html"}
    with pytest.raises(StartupError, match="does not exist"):
        create_preview_app(PreviewConfig(site_dir=tmp_path / "missing"))


def test_preview_adds_the_widget_to_pages_without_changing_the_files(tmp_path: Path) -> None:
    built = write_site(tmp_path / "site")
    before = {path: path.read_bytes() for path in built.rglob("*.html")}
    assets = tmp_path / "assets"
    assets.mkdir()
    (assets / "agentskit-ask.js").write_text("// loader\n", encoding="utf-8")
    config = PreviewConfig(site_dir=built, widget_assets=assets, inject=widget_snippet())
    with PreviewServer(config) as preview, httpx.Client(base_url=preview.url) as client:
        assert any("adds one" in note for note in preview.app.state.startup_notes)
        for url in ("/", "/guide/charging/", "/guide/pairing.html"):
            page = client.get(url)
            assert page.status_code == 200 and page.headers["cache-control"] == "no-cache"
            text = page.text
            script = '<script type="module" src="/_agentskit/agentskit-ask.js"></script>'
            assert text.count(script) == 1 and text.index(script) < text.index("</body>")
            assert '<agentskit-ask endpoint="/api/ask"' in text and 'layout="launcher"' in text
        assert client.get("/_agentskit/agentskit-ask.js").text == "// loader\n"
    assert {path: path.read_bytes() for path in built.rglob("*.html")} == before


def test_a_page_that_embeds_the_widget_is_sent_as_it_is(tmp_path: Path) -> None:
    built = write_site(tmp_path / "site")
    (built / "index.html").unlink()
    embedded = built / "contents.html"
    embedded.write_text(
        "<html><head><title>Contents</title></head><body><main><h1>Contents</h1>"
        "<p>All pages.</p></main><agentskit-ask></agentskit-ask></body></html>",
        encoding="utf-8",
    )
    assert has_widget(built)
    config = PreviewConfig(site_dir=built, inject=widget_snippet())
    with PreviewServer(config) as preview, httpx.Client(base_url=preview.url) as client:
        assert client.get("/contents.html").text == embedded.read_text(encoding="utf-8")
        assert client.get("/guide/pairing.html").text.count("<agentskit-ask") == 1


@pytest.mark.parametrize(
    ("tag", "wired"),
    [
        (
            '<agentskit-ask layout="launcher">',
            '<agentskit-ask endpoint="/api/ask" layout="launcher">',
        ),
        ("<AGENTSKIT-ASK>", '<agentskit-ask endpoint="/api/ask">'),
        (
            '<agentskit-ask feedback-endpoint="/fb">',
            '<agentskit-ask endpoint="/api/ask" feedback-endpoint="/fb">',
        ),
        ('<agentskit-ask endpoint="/other">', '<agentskit-ask endpoint="/other">'),
        (
            "<agentskit-ask ENDPOINT='https://x.example/ask'>",
            "<agentskit-ask ENDPOINT='https://x.example/ask'>",
        ),
        ('<agentskit-ask protocol="turn">', '<agentskit-ask protocol="turn">'),
        ("<agentskit-ask-other>", "<agentskit-ask-other>"),
    ],
)
def test_wire_endpoint_adds_the_preview_s_endpoint_only_where_none_is_named(
    tag: str, wired: str
) -> None:
    page = f"<html><body><p>x</p>{tag}</agentskit-ask></body></html>".encode()
    assert wire_endpoint(page, b"/api/ask") == page.replace(tag.encode(), wired.encode())


def _static_page_site(folder: Path) -> Path:
    built = write_site(folder)
    home = built / "index.html"
    text = home.read_text(encoding="utf-8").replace(
        "</body>", '<agentskit-ask layout="launcher"></agentskit-ask></body>'
    )
    home.write_text(text, encoding="utf-8")
    return built


def test_preview_wires_a_static_page_s_widget_to_its_backend(tmp_path: Path) -> None:
    """`preview` is the site and its backend: an element without endpoint asks /api/ask."""
    built = _static_page_site(tmp_path / "site")
    before = (built / "index.html").read_bytes()
    with PreviewServer(PreviewConfig(site_dir=built)) as preview:
        home = httpx.get(preview.url + "/").text
        assert any("endpoint=/api/ask" in note for note in preview.app.state.startup_notes)
    assert '<agentskit-ask endpoint="/api/ask" layout="launcher">' in home
    assert (built / "index.html").read_bytes() == before  # the file is not changed


def test_preview_static_answers_sends_the_pages_as_built(tmp_path: Path) -> None:
    built = _static_page_site(tmp_path / "site")
    config = PreviewConfig(site_dir=built, static_answers=True)
    with PreviewServer(config) as preview:
        home = httpx.get(preview.url + "/").text
    assert home == (built / "index.html").read_text(encoding="utf-8")
    assert "endpoint=" not in home
