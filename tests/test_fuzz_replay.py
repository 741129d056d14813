"""The fuzz targets hold on every seed and on every input a fuzz run once saved as failing.

`make fuzz` (atheris) explores; this replays what it starts from and what it
found (fixtures/fuzz/<target>/), on plain CPython, so a fixed failure stays
fixed even where atheris is not installed. It also proves the targets can
fail: a target that checked nothing would pass the inputs below.
"""

import pytest

from agentskit_web.protocol.diagnostics import DecodeResult, Diagnostic
from fuzz.seeds import recorded_failures, seeds
from fuzz.targets import MODE_JSON, TARGETS, FuzzFailure, as_value, check_result


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_every_seed_and_every_saved_failure_passes_its_target(name: str) -> None:
    found = list(seeds(name))
    assert len(found) >= 30, "the target is seeded from the fixtures"
    for data in [*found, *recorded_failures(name)]:
        TARGETS[name].run(data)


def test_the_input_forms_reach_the_decoders() -> None:
    assert as_value(b"\x00{}") == b"{}"
    assert as_value(b"\x01\xff") == "\udcff"  # undecodable bytes become lone surrogates
    assert as_value(bytes([MODE_JSON]) + b'{"a": [1]}') == {"a": [1]}
    assert as_value(bytes([MODE_JSON]) + b"{") == "{"


def test_a_diagnostic_that_quotes_the_payload_fails_the_check() -> None:
    long = Diagnostic("TURN_INVALID_EVENT", "x" * 500)
    with pytest.raises(FuzzFailure, match="too long"):
        check_result(DecodeResult(ok=False, diagnostic=long))
    with pytest.raises(FuzzFailure, match="not a code"):
        check_result(DecodeResult(ok=False, diagnostic=Diagnostic("lower case", "m")))
    with pytest.raises(FuzzFailure, match="without a diagnostic"):
        check_result(DecodeResult(ok=False))
