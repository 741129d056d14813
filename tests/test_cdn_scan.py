"""The build's served-file scan catches every host of web/cdn-hosts.txt, in any URL form."""

from pathlib import Path

from agentskit_web.build.cdn_scan import CDN_HOSTS_FILE, scan_for_cdn
from agentskit_web.build.files import find_root

WEB = find_root() / "web"
HOSTS = [
    line.strip()
    for line in (WEB / CDN_HOSTS_FILE).read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.startswith("#")
]


def test_every_listed_host_is_caught_in_each_url_form(tmp_path: Path) -> None:
    assert len(HOSTS) >= 10
    for index, host in enumerate(HOSTS):
        for form in (f"https://{host}/x.js", f"http://{host}/x.js", f"//{host}/x.js"):
            (tmp_path / f"page{index}.html").write_text(f'<script src="{form}"></script>')
            hits = scan_for_cdn(tmp_path, WEB)
            assert hits == [f"page{index}.html: {form.removesuffix('/x.js')}"], (host, hits)
            (tmp_path / f"page{index}.html").unlink()


def test_a_clean_site_and_binary_files_pass(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text('<a href="/docs/x.html">docs</a>')
    (tmp_path / "runtime.wasm").write_bytes(b"\0https://" + HOSTS[0].encode())
    assert scan_for_cdn(tmp_path, WEB) == []
