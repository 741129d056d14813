"""One header policy for every server of the project (server/static.py), over real HTTP."""

import gzip
from pathlib import Path

import brotli
import httpx
import pytest

from agentskit_web.server.static import (
    IMMUTABLE,
    REVALIDATE,
    StaticSite,
    is_content_hashed,
    media_type,
    static_headers,
)


@pytest.mark.parametrize(
    ("name", "hashed"),
    [
        ("runtime/pyodide.asm.0123456789ab.wasm", True),  # 12 hex digits: the shortest hash
        ("runtime/pyodide.asm.0123456789a.wasm", False),  # 11: one short
        ("agentskit-ask.js", False),
        ("wheels/pydantic.ABCDEF012345.whl", False),  # upper case is not our hash form
        ("a." + "f" * 64 + ".css", True),  # a full sha256
        ("a." + "f" * 65 + ".css", False),  # one past it
    ],
)
def test_content_hashed_names(name: str, hashed: bool) -> None:
    assert is_content_hashed(name) is hashed
    expected = IMMUTABLE if hashed else REVALIDATE
    assert static_headers(name)["Cache-Control"] == expected


def test_types_the_page_needs() -> None:
    assert media_type("x.wasm") == "application/wasm"
    assert media_type("x.mjs") == "text/javascript; charset=utf-8"
    assert media_type("x.json") == "application/json; charset=utf-8"
    assert media_type("x.unknown") is None
    assert static_headers("x.css")["X-Content-Type-Options"] == "nosniff"


def test_a_served_site_sends_the_policy(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<!doctype html><title>x</title>", encoding="utf-8")
    (tmp_path / "app.0123456789abcdef.js").write_text("export {};", encoding="utf-8")
    with StaticSite(tmp_path) as site:
        page = httpx.get(site.url + "/")
        script = httpx.get(site.url + "/app.0123456789abcdef.js")
        again = httpx.get(site.url + "/", headers={"if-none-match": page.headers["etag"]})
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert page.headers["cache-control"] == REVALIDATE
    assert script.headers["cache-control"] == IMMUTABLE
    assert script.headers["content-type"] == "text/javascript; charset=utf-8"
    assert again.status_code == 304


def test_a_folder_without_a_site_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="agentskit-web build"):
        StaticSite(tmp_path)


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        ("br, gzip", "br"),
        ("gzip", "gzip"),
        ("gzip;q=0, br;q=0", None),
        ("identity", None),
        ("", None),
        ("*", "gzip"),
        ("br;q=0.5", "br"),
    ],
)
def test_pre_compressed_copies_are_negotiated(tmp_path: Path, accept: str, expected: str) -> None:
    (tmp_path / "index.html").write_text("<!doctype html>", encoding="utf-8")
    body = b"export const a = 1;\n" * 200
    (tmp_path / "app.js").write_bytes(body)
    (tmp_path / "app.js.br").write_bytes(brotli.compress(body))
    (tmp_path / "app.js.gz").write_bytes(gzip.compress(body))
    with StaticSite(tmp_path) as site:
        response = httpx.get(site.url + "/app.js", headers={"accept-encoding": accept})
    assert response.headers["vary"] == "Accept-Encoding"
    assert response.headers["content-type"] == "text/javascript; charset=utf-8"
    assert response.headers.get("content-encoding") == expected
    assert response.content == body  # decoded by httpx when compressed


def test_a_file_without_copies_is_sent_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<!doctype html>", encoding="utf-8")
    with StaticSite(tmp_path) as site:
        response = httpx.get(site.url + "/index.html", headers={"accept-encoding": "br"})
    assert "content-encoding" not in response.headers and "vary" not in response.headers


def test_only_the_offline_worker_may_control_pages_outside_its_folder(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<!doctype html><title>x</title>", encoding="utf-8")
    (tmp_path / "agentskit").mkdir()
    (tmp_path / "agentskit" / "agentskit-ask-sw.js").write_text("// sw", encoding="utf-8")
    (tmp_path / "agentskit" / "agentskit-ask.js").write_text("// loader", encoding="utf-8")
    with StaticSite(tmp_path) as site:
        worker = httpx.get(site.url + "/agentskit/agentskit-ask-sw.js")
        loader = httpx.get(site.url + "/agentskit/agentskit-ask.js")
    assert worker.headers["service-worker-allowed"] == "/"
    assert worker.headers["cache-control"] == REVALIDATE, "a new build's worker is seen at once"
    assert worker.headers["content-type"] == "text/javascript; charset=utf-8"
    assert "service-worker-allowed" not in loader.headers
    assert "Service-Worker-Allowed" not in static_headers("agentskit/not-agentskit-ask-sw.js")


@pytest.mark.parametrize("suffix", [".gz", ".br"])
def test_a_compressed_copy_leading_outside_the_site_is_not_sent(
    tmp_path: Path, suffix: str
) -> None:
    """Issue 36: `ln -s /etc/passwd site/index.html.gz` sent the target to gzip clients."""
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    (site_dir / "index.html").write_text("<!doctype html><title>home</title>", encoding="utf-8")
    secret = b"root:x:0:0:secret outside the site\n"
    outside = tmp_path / ("outside" + suffix)
    outside.write_bytes(gzip.compress(secret) if suffix == ".gz" else brotli.compress(secret))
    (site_dir / ("index.html" + suffix)).symlink_to(outside)
    coding = "gzip" if suffix == ".gz" else "br"
    with StaticSite(site_dir) as site:
        home = httpx.get(site.url + "/", headers={"accept-encoding": coding})
        direct = httpx.get(site.url + "/index.html" + suffix)
    assert home.status_code == 200
    assert b"secret" not in home.content
    assert home.content == b"<!doctype html><title>home</title>"
    assert "content-encoding" not in home.headers
    assert direct.status_code == 404  # Starlette's own check on the file asked for


def test_a_compressed_copy_linked_inside_the_site_is_still_sent(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<!doctype html>", encoding="utf-8")
    body = b"export const a = 1;\n" * 200
    (tmp_path / "app.js").write_bytes(body)
    (tmp_path / "copies").mkdir()
    (tmp_path / "copies" / "app.js.gz").write_bytes(gzip.compress(body))
    (tmp_path / "app.js.gz").symlink_to(tmp_path / "copies" / "app.js.gz")
    with StaticSite(tmp_path) as site:
        response = httpx.get(site.url + "/app.js", headers={"accept-encoding": "gzip"})
    assert response.headers.get("content-encoding") == "gzip"
    assert response.content == body
