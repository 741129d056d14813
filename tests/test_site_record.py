"""build/site_record.py: the record of what the runtime's wheels install, by sha256."""

import hashlib
import io
import json
import zipfile

import pytest

from agentskit_web.build.files import BuildError
from agentskit_web.build.site_record import INSTALLER_METADATA, installed_files, site_record


def _wheel(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as wheel:
        for name, data in members.items():
            wheel.writestr(name, data)
        wheel.writestr(zipfile.ZipInfo("p/sub/"), b"")  # a folder entry: not a file
    return buffer.getvalue()


def test_every_member_of_every_wheel_is_recorded_with_its_bytes_sha256() -> None:
    wheels = {
        "p-1-py3-none-any.whl": _wheel({"p/__init__.py": b"x = 1\n", "p-1.dist-info/RECORD": b"r"}),
        "q-2-py3-none-any.whl": _wheel({"q.py": b""}),
    }
    assert installed_files(wheels) == {
        "p/__init__.py": hashlib.sha256(b"x = 1\n").hexdigest(),
        "p-1.dist-info/RECORD": hashlib.sha256(b"r").hexdigest(),
        "q.py": hashlib.sha256(b"").hexdigest(),
    }
    record = json.loads(site_record(wheels))
    assert record["installerMetadata"] == list(INSTALLER_METADATA)
    assert record["files"] == installed_files(wheels)
    assert site_record(dict(reversed(wheels.items()))) == site_record(wheels), "deterministic"


def test_one_path_installed_by_two_wheels_is_the_same_bytes_or_a_build_error() -> None:
    same = {"a.whl": _wheel({"ns/x.py": b"1"}), "b.whl": _wheel({"ns/x.py": b"1"})}
    assert list(installed_files(same)) == ["ns/x.py"]
    with pytest.raises(BuildError, match=r"ns/x\.py is installed by another wheel too"):
        installed_files({"a.whl": _wheel({"ns/x.py": b"1"}), "b.whl": _wheel({"ns/x.py": b"2"})})
