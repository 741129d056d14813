"""The built-site reader (indexing/site.py): folders, URLs, skip rules, the written file.

Each site is a few small pages written here in the shape the generators write
(no corpus, no build needed); test_indexing_html_page.py covers one page's
main-content rules theme by theme.
"""

from pathlib import Path

import pytest

from agentskit_web.answering.site_index import parse_site_index
from agentskit_web.indexing.site import (
    ASSETS_FOLDER,
    SiteIndexError,
    find_site_index,
    index_site,
    normalize_base_path,
    published_path,
    write_site_index,
)
from agentskit_web.integrations.embed import DEFAULT_ASSETS_PATH


def page(body: str, *, title: str = "Page", head: str = "") -> str:
    return (
        f"<!doctype html><html><head><title>{title}</title>{head}</head>"
        f"<body><nav><a href='/'>Home nav link</a></nav><main>{body}</main>"
        "<footer>Footer words</footer></body></html>"
    )


def write(site: Path, relative: str, html: str) -> None:
    file = site / relative
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(html, encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    write(root, "index.html", page("<h1>Home</h1><p>Welcome text.</p>"))
    write(root, "guide/index.html", page("<h1>Guide</h1><h2 id='setup'>Setup</h2><p>Run it.</p>"))
    write(root, "api.html", page("<h1>API</h1><p>Functions.</p>"))
    return root


def test_urls_are_the_published_paths_with_folders_for_index_html(site: Path) -> None:
    index = index_site(site)
    assert sorted({c.path for c in index.chunk_list()}) == ["/", "/api.html", "/guide/"]
    assert index.pages == 3
    assert index.site_name == "Home"


def test_base_path_prefixes_every_url(site: Path) -> None:
    index = index_site(site, base_path="docs")
    assert sorted({c.path for c in index.chunk_list()}) == [
        "/docs/",
        "/docs/api.html",
        "/docs/guide/",
    ]
    assert index.base_path == "/docs/"


@pytest.mark.parametrize(
    ("given", "expected"), [("", "/"), ("/", "/"), ("docs", "/docs/"), ("/a/b/", "/a/b/")]
)
def test_base_path_is_normalised(given: str, expected: str) -> None:
    assert normalize_base_path(given) == expected


def test_published_path_rule() -> None:
    from pathlib import PurePosixPath as P

    assert published_path(P("index.html")) == "/"
    assert published_path(P("a/index.html")) == "/a/"
    assert published_path(P("a/b.html"), "/docs/") == "/docs/a/b.html"


def test_navigation_and_footer_are_never_indexed(site: Path) -> None:
    text = " ".join(c.text + c.heading for c in index_site(site).chunk_list())
    assert "Home nav link" not in text
    assert "Footer words" not in text
    assert "Welcome text." in text


@pytest.mark.parametrize(
    ("relative", "html"),
    [
        (
            "hidden.html",
            page(
                "<h1>Hidden</h1><p>Secret</p>",
                head="<meta name='robots' content='noindex, follow'>",
            ),
        ),
        (
            "old.html",
            page(
                "<p>Secret moved</p>", head="<meta http-equiv='refresh' content='0; url=new.html'>"
            ),
        ),
        ("404.html", page("<h1>Oops</h1><p>Secret</p>")),
        ("missing.html", page("<h1>404 - Not found</h1><p>Secret</p>")),
        ("search.html", page("<h1>Search</h1><p>Secret</p>")),
        ("search/index.html", page("<h1>Search</h1><p>Secret</p>")),
        ("genindex.html", page("<h1>Index</h1><p>Secret</p>")),
        ("py-modindex.html", page("<h1>Modules</h1><p>Secret</p>")),
        ("_modules/pkg/mod.html", page("<h1>Source</h1><p>Secret</p>")),
        ("_sources/index.rst.html", page("<h1>Source</h1><p>Secret</p>")),
        ("find.html", page("<h1>Find</h1><div id='search-results'>Secret</div>")),
        ("theme/partial.html", "<div class='x'>{% block content %}Secret{% endblock %}</div>"),
        ("notes.txt", "Secret"),
        ("agentskit/loader.html", page("<h1>Assets</h1><p>Secret</p>")),
    ],
)
def test_pages_that_opt_out_or_are_internal_are_skipped(
    site: Path, relative: str, html: str
) -> None:
    write(site, relative, html)
    index = index_site(site)
    assert index.pages == 3
    assert all("Secret" not in c.text for c in index.chunk_list())


def test_an_unusable_folder_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(SiteIndexError, match="not a folder"):
        index_site(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    write(tmp_path / "empty", "blank.html", page(""))
    with pytest.raises(SiteIndexError, match="no HTML page with text"):
        index_site(tmp_path / "empty")


def test_a_selector_outside_the_subset_is_refused(site: Path) -> None:
    with pytest.raises(SiteIndexError, match="unsupported selector part"):
        index_site(site, body_selector="main > p")


def test_write_is_content_hashed_replaces_older_and_is_found(site: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = write_site_index(index_site(site), out)
    assert first.name.startswith("agentskit-index.") and first.suffix == ".json"
    assert find_site_index(out) == first
    decoded = parse_site_index(first.read_bytes())
    assert decoded.ok and decoded.value.pages == 3
    write(site, "more.html", page("<h1>More</h1><p>Another page.</p>"))
    second = write_site_index(index_site(site), out)
    assert second != first
    assert sorted(p.name for p in out.iterdir()) == [second.name]
    assert find_site_index(out) == second
    assert find_site_index(tmp_path / "nothing") is None


def test_the_same_site_gives_the_same_file(site: Path, tmp_path: Path) -> None:
    a = write_site_index(index_site(site), tmp_path / "a")
    b = write_site_index(index_site(site), tmp_path / "b")
    assert a.name == b.name and a.read_bytes() == b.read_bytes()


def test_the_default_assets_folder_is_the_plugins_one() -> None:
    assert DEFAULT_ASSETS_PATH.strip("/") == ASSETS_FOLDER


def test_the_index_command_prints_counts_and_the_file(
    site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentskit_web.cli import main

    assert main(["index", str(site), "--base-path", "/docs/", "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out.splitlines()
    written = find_site_index(tmp_path / "o")
    assert written is not None
    assert out[0].startswith("indexed 3 pages (html), 3 chunks")
    assert out[1] == f"wrote {written} ({written.stat().st_size} bytes, " + (
        f"{written.stat().st_size / 1024:.1f} KiB)"
    )
    assert main(["index", str(site)]) == 0
    assert find_site_index(site / ASSETS_FOLDER) is not None


@pytest.mark.parametrize("args", [["missing-folder"], [".", "--selector", "a > b"]])
def test_the_index_command_on_a_bad_folder_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    from agentskit_web.cli import main

    args = [str(tmp_path / args[0]) if args[0] == "missing-folder" else str(tmp_path), *args[1:]]
    assert main(["index", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1
    assert captured.err.startswith("agentskit-web index: ")


def test_a_page_at_the_size_limit_is_read_one_byte_more_is_skipped(site: Path) -> None:
    from agentskit_web.indexing.site import PAGE_MAX_BYTES

    head = page("<h1>Big</h1><p>Large page words.</p>")
    padding = PAGE_MAX_BYTES - len(head.encode())
    write(site, "big.html", head + " " * padding)
    assert (site / "big.html").stat().st_size == PAGE_MAX_BYTES
    assert index_site(site).pages == 4
    write(site, "big.html", head + " " * (padding + 1))
    index = index_site(site)
    assert index.pages == 3
    assert all("Large page words." not in c.text for c in index.chunk_list())


def test_the_bench_citation_check_finds_a_missing_anchor_and_page(site: Path) -> None:
    from agentskit_web.answering.chunk import Chunk
    from agentskit_web.bench.index import check_citations, page_targets

    targets = page_targets(site, "/")
    assert targets["/guide/"] >= {"setup"}
    good = index_site(site).chunk_list()
    assert check_citations(good, targets).broken == 0
    bad = [
        *good,
        Chunk("/guide/", "nope", "Guide", "Gone", "x"),
        Chunk("/missing/", None, "Missing", "Missing", "x"),
        Chunk("/api.html", None, "API ¶", "API", "x"),
    ]
    figures = check_citations(bad, targets)
    assert (figures.missing_anchor, figures.missing_page, figures.markup_titles) == (1, 1, 1)


def test_an_unreadable_page_is_counted_and_the_rest_indexed(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentskit_web.indexing.site import index_site_with_report

    write(site, "locked.html", page("<h1>Locked</h1><p>Locked words.</p>"))
    read_text = Path.read_text

    def refuse(self: Path, *args: object, **kwargs: object) -> str:
        if self.name == "locked.html":  # as root, permissions cannot make a file unreadable
            raise PermissionError(13, "Permission denied")
        return read_text(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", refuse)
    index, report = index_site_with_report(site)
    assert index.pages == 3
    assert report.skipped["unreadable"] == 1


def test_a_page_linking_outside_the_site_is_skipped_and_said_once(
    site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentskit_web.cli import main
    from agentskit_web.indexing.site import SKIP_OUTSIDE, index_site_with_report

    secret = tmp_path / "secret.html"
    secret.write_text(page("<h1>Secret</h1><p>Private words.</p>"), encoding="utf-8")
    (site / "leak.html").symlink_to(secret)
    (site / "guide" / "leak2.html").symlink_to(secret)
    (site / "alias.html").symlink_to(site / "api.html")  # a link inside the site is a page
    index, report = index_site_with_report(site)
    assert all("Private" not in chunk.text for chunk in index.chunk_list())
    assert report.skipped[SKIP_OUTSIDE] == 2
    assert "/alias.html" in {chunk.path for chunk in index.chunk_list()}
    assert main(["index", str(site), "--out", str(tmp_path / "o")]) == 0
    summary = capsys.readouterr().out.splitlines()[0]
    assert summary.count(SKIP_OUTSIDE) == 1 and f"2 {SKIP_OUTSIDE}" in summary


def test_a_page_whose_file_name_is_no_url_path_is_skipped_and_the_rest_indexed(
    site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    from agentskit_web.cli import main
    from agentskit_web.indexing.site import SKIP_NAME_NOT_URL

    for name in (b"caf\xe9.html", b"back\\slash.html", b"tab\there.html"):
        with open(os.path.join(os.fsencode(site), name), "wb") as file:
            file.write(page("<h1>Cafe</h1><p>Odd name.</p>").encode())
    write(site, "with space.html", page("<h1>Space</h1><p>A space is fine.</p>"))
    assert main(["index", str(site), "--out", str(tmp_path / "o")]) == 0
    assert f"3 {SKIP_NAME_NOT_URL}" in capsys.readouterr().out
    written = find_site_index(tmp_path / "o")
    assert written is not None
    assert parse_site_index(written.read_bytes()).value.pages == 4


def _sections(count: int) -> str:
    return "<h1>Many</h1>" + "".join(f"<h2 id='s{i}'>S{i}</h2><p>w{i}</p>" for i in range(count))


def test_the_chunk_bound_at_the_limit_and_past_it_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentskit_web.cli import main
    from agentskit_web.indexing import site as site_module

    root = tmp_path / "site"
    write(root, "index.html", page(_sections(10)))  # one chunk per section
    monkeypatch.setattr(site_module, "SITE_INDEX_MAX_CHUNKS", 10)
    assert len(index_site(root).chunks) == 10
    monkeypatch.setattr(site_module, "SITE_INDEX_MAX_CHUNKS", 9)
    assert main(["index", str(root)]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "more than an index holds (9)" in captured.err


def test_past_200000_chunks_the_command_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentskit_web.answering.site_index import SITE_INDEX_MAX_CHUNKS
    from agentskit_web.cli import main

    root = tmp_path / "site"
    per_page = 20_000
    for number in range(SITE_INDEX_MAX_CHUNKS // per_page):
        write(root, f"p{number}.html", page(_sections(per_page)))
    write(root, "extra.html", page("<h1>Extra</h1><p>One chunk too many.</p>"))
    assert main(["index", str(root)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"agentskit-web index: {root} makes {SITE_INDEX_MAX_CHUNKS + 1} chunks,"
        f" more than an index holds ({SITE_INDEX_MAX_CHUNKS})\n"
    )


def test_the_writer_refuses_what_its_reader_would_refuse_at_the_limit_and_past_it(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentskit_web.cli import main
    from agentskit_web.indexing import site as site_module

    size = len(index_site(site).to_bytes())
    monkeypatch.setattr(site_module, "SITE_INDEX_MAX_BYTES", size)
    assert main(["index", str(site), "--out", str(tmp_path / "at")]) == 0
    assert find_site_index(tmp_path / "at") is not None
    capsys.readouterr()
    monkeypatch.setattr(site_module, "SITE_INDEX_MAX_BYTES", size - 1)
    assert main(["index", str(site), "--out", str(tmp_path / "past")]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1
    assert f"the index would be {size} bytes, more than its readers accept" in captured.err
    assert not (tmp_path / "past").exists()
