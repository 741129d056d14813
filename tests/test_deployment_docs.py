"""docs/deployment.md shows the haproxy configuration the balancer tests run, verbatim.

The page's `haproxy` block must be what `haproxy_config` renders for the
page's example addresses (the tests and `bench scale` render the same
template for loopback), Debian's haproxy must accept it (`haproxy -c`), and
the `serve-ask` command shown beside it must parse with the real options.
"""

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from agentskit_web.bench.cluster import haproxy_binary
from agentskit_web.server.ask_serve import _parser, config_from_args
from agentskit_web.server.haproxy_config import Upstream, haproxy_config

PAGE = Path(__file__).resolve().parents[1] / "docs" / "deployment.md"


def _block(language: str, containing: str = "") -> str:
    """The page's one fenced block in `language` (holding `containing`)."""
    text = PAGE.read_text(encoding="utf-8")
    blocks = re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)
    (found,) = [block for block in blocks if containing in block]
    return str(found)


def _documented() -> str:
    instances = [Upstream(f"ask{n}", f"10.0.0.1{n}", 8001) for n in (1, 2, 3)]
    return haproxy_config(
        "*:8080",
        instances,
        site=Upstream("site", "10.0.0.10", 8000),
        stats_socket="/run/haproxy/admin.sock",
    )


def test_the_page_shows_the_rendered_template_verbatim() -> None:
    assert _block("haproxy") == _documented()


def test_haproxy_accepts_the_documented_configuration(tmp_path: Path) -> None:
    config = tmp_path / "haproxy.cfg"
    config.write_text(_block("haproxy"), encoding="utf-8")
    done = subprocess.run(
        [haproxy_binary(), "-c", "-f", str(config)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_documented_instance_command_parses_with_the_real_options() -> None:
    words = shlex.split(_block("sh", "serve-ask").replace("\\\n", " "))
    assert words[:2] == ["agentskit-web", "serve-ask"]
    args = _parser().parse_args(words[2:])
    config = config_from_args(args)
    assert config.sessions.startswith("postgresql://")
    assert str(config.question_log).startswith("postgresql://")  # one log for every instance
    assert config.rate_limit.startswith("redis://")
    assert config.trusted_proxies == ["10.0.0.2"]


def test_the_template_refuses_what_haproxy_would_misread() -> None:
    one = Upstream("ask1", "127.0.0.1", 8001)
    with pytest.raises(ValueError, match="at least one instance"):
        haproxy_config("127.0.0.1:8080", [])
    with pytest.raises(ValueError, match="names must differ"):
        haproxy_config("127.0.0.1:8080", [one, Upstream("ask1", "127.0.0.1", 8002)])
    with pytest.raises(ValueError, match="names must differ"):
        haproxy_config("127.0.0.1:8080", [one], site=Upstream("ask1", "127.0.0.1", 8000))


def test_without_a_site_every_path_goes_to_the_instances_and_ipv6_is_bracketed(
    tmp_path: Path,
) -> None:
    text = haproxy_config("[::1]:8080", [Upstream("ask1", "::1", 8001)])
    assert "    default_backend ask\n" in text and "backend site" not in text
    assert "    server ask1 [::1]:8001\n" in text
    config = tmp_path / "haproxy.cfg"
    config.write_text(text, encoding="utf-8")
    done = subprocess.run(
        [haproxy_binary(), "-c", "-f", str(config)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
