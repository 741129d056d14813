"""Writing a static (split) index into a built site's folder (answering/ does no file IO)."""

from pathlib import Path

from ..answering.static_index import STATIC_FILE_PREFIX, StaticIndexFiles


def write_static_index(files: StaticIndexFiles, out_dir: Path) -> Path:
    """Write the manifest and every part into `out_dir`; remove the static-index files of
    earlier builds there (content-hashed names never collide, so old ones would pile up);
    return the manifest's path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = files.all_files()
    for old in out_dir.glob(f"{STATIC_FILE_PREFIX}*.json"):
        if old.name not in written:
            old.unlink()
    for name, data in written.items():
        target = out_dir / name
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)
    return out_dir / files.manifest_name
