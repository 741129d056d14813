"""The `protocol` bench section measures real work and prints every figure it promises."""

from pathlib import Path

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


def test_the_embed_baseline_page_has_no_embed_left() -> None:
    from agentskit_web.bench.embed import LOADER_TAG, without_embed

    home = (Path(__file__).resolve().parents[1] / "index.html").read_text(encoding="utf-8")
    bare = without_embed(home)
    assert LOADER_TAG in home and "<agentskit-ask" in home
    assert "<script" not in bare and "<agentskit-ask " not in bare
    assert "site.css" in bare and "</main>" in bare
