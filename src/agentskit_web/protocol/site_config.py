"""PLACEHOLDER: being written; replace this whole file."""

from typing import Any

SiteConfig: Any = None
parse_site_config: Any = None
