"""The `protocol` bench section measures real work and prints every figure it promises."""

from pathlib import Path

import pytest

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


def test_a_window_the_clock_cannot_resolve_is_reported_unresolved_not_flat() -> None:
    from agentskit_web.bench.page.ask_stream import (
        measure_flatness,
        measure_throughput,
        recorded_long_stream,
    )
    from agentskit_web.bench.stream import format_ask

    body = recorded_long_stream(40)
    frozen = lambda: 0.0  # noqa: E731 - a clock that never advances
    flat = measure_flatness(body, frozen, repeats=1)
    assert flat["endToStartRatio"] is None
    rate = measure_throughput(body, frozen, repeats=1)
    assert rate["mbPerSecond"] is None
    text = format_ask({"throughput": rate, "flatness": flat}, {"throughput": rate})
    assert "unresolved" in text and "1.00" not in text


def test_timed_windows_keep_the_garbage_collector_on() -> None:
    import gc

    from agentskit_web.bench.page.ask_stream import measure_flatness, recorded_long_stream

    seen: list[bool] = []
    ticks = iter(range(1_000_000))

    def clock() -> float:
        seen.append(gc.isenabled())
        return float(next(ticks))

    flat = measure_flatness(recorded_long_stream(40), clock, repeats=2)
    assert seen and all(seen)
    assert flat["endToStartRatio"] == 1.0  # each window spans exactly one tick here


def test_figures_refuse_to_invent_a_ratio_or_a_rate() -> None:
    from agentskit_web.bench.page.figures import per_second, ratio, shown

    assert ratio(3.0, 2.0) == 1.5
    assert ratio(3.0, 0.0) is None and ratio(0.0, 2.0) is None
    assert per_second(10, 2) == 5 and per_second(10, 0) is None
    assert shown(None, ".2f").startswith("unresolved") and shown(1.5, ".2f") == "1.50"


def test_the_page_median_keeps_every_sample() -> None:
    from agentskit_web.bench.page.figures import median

    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert median([7.0]) == 7.0
    with pytest.raises(ValueError):
        median([])


def test_the_bench_pages_import_only_what_the_trimmed_stdlib_ships() -> None:
    """The pages run on the product's trimmed stdlib: `statistics` is not in it."""
    pages = Path(__file__).resolve().parents[1] / "src/agentskit_web/bench/page"
    for page in pages.glob("*.py"):
        assert "import statistics" not in page.read_text(encoding="utf-8"), page.name


def test_the_embed_baseline_page_has_no_embed_left() -> None:
    from agentskit_web.bench.embed import LOADER_TAG, without_embed

    home = (Path(__file__).resolve().parents[1] / "index.html").read_text(encoding="utf-8")
    bare = without_embed(home)
    assert LOADER_TAG in home and "<agentskit-ask" in home
    assert "<script" not in bare and "<agentskit-ask " not in bare
    assert "site.css" in bare and "</main>" in bare
