"""The `protocol` bench section measures real work and prints every figure it promises."""

from agentskit_web.bench.stream import format_protocol, run_protocol_bench


def test_protocol_bench_measures_the_three_paths_against_a_peer() -> None:
    result = run_protocol_bench()
    assert result["records"] >= 500  # a near-limit answer, not a toy
    assert set(result["rows"]) == {
        "AskEventDecoder (bytes in 4 KiB chunks)",
        "AssistantContentEncoder.encode",
        "decode_assistant_content",
    }
    for row in result["rows"].values():
        assert row["bytes"] > 100_000
        assert row["mbPerSecond"] > 0 and row["peerMbPerSecond"] > 0
    table = format_protocol(result)
    assert "MB/s" in table and "decode_assistant_content" in table
