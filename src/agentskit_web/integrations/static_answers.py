"""The generators' last step for static answers: the split index beside the assets.

After the MkDocs plugin or the Sphinx extension has published the assets folder,
`publish_static_answers` takes the built site's index (the one the build step just
made, else the `agentskit-index.*.json` the build wrote, else the built HTML
itself), splits it for the
page (`answering.split_index`) and writes the parts into the assets folder with
the manifest's path in the loader (build/static_index.py). Every site gets it:
without an `endpoint` the page answers from it; with one, it answers when the
backend cannot be reached.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ..answering.site_index import SiteIndex
from ..build.files import BuildError
from ..build.static_index import StaticIndexReport, publish_static_index, site_index_of


def publish_static_answers(
    site_dir: Path,
    assets_path: str,
    *,
    base_path: str = "/",
    synonyms: Sequence[Sequence[str]] = (),
    required: bool = True,
    index: SiteIndex | None = None,
    say: Callable[[str], None] = print,
    warn: Callable[[str], None] = print,
) -> StaticIndexReport | None:
    """Split the site's index into `site_dir/assets_path/index/` and point the loader at it.

    Raises BuildError with a one-line message when the site cannot be indexed and the
    pages need the index (`required`: no endpoint); with an endpoint the index is only
    the backend's fallback, so the build goes on without it (one warning, None). `index`:
    the site's index when the caller has it already (not read or made again).
    """
    from ..answering.static_index import split_index
    from ..indexing.site import SiteIndexError

    assets_dir = site_dir / assets_path
    try:
        if index is None:
            index = site_index_of(site_dir, assets_dir, base_path)
    except (SiteIndexError, BuildError) as error:
        if required:
            raise BuildError(f"static answers: {error}") from error
        warn(f"static answers: no fallback index ({error})")
        return None
    files = split_index(index, synonyms=tuple(tuple(group) for group in synonyms))
    report = publish_static_index(assets_dir, files.manifest_name, files.all_files())
    say(
        f"static answers: {len(report.files)} index files ({report.bytes_written:,} bytes) "
        f"in {assets_dir / 'index'}"
    )
    return report
