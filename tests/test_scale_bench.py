"""A tiny run of `python -m agentskit_web.bench scale` (real processes, a real redis-server)."""

from agentskit_web.bench.balancer import format_throughput, run_balancer_bench
from agentskit_web.bench.scale import format_scale, run_scale_bench


def test_scale_bench_measures_both_limiters_and_all_session_stores_in_one_run() -> None:
    result = run_scale_bench(
        questions=6, warmup=1, limiter_calls=40, spaced_calls=8, turn_questions=6
    )
    answers, limiters = result.answers, result.limiters
    assert [s.name for s in result.turns] == [
        "SQLite + memory limiter (default)",
        "PostgreSQL sessions",
        "PostgreSQL + Redis limiter",
    ]
    assert all(len(s.samples_ms) == 6 and s.failed == 0 for s in result.turns)
    assert [s.name for s in answers] == [
        "in-process limiter (default)",
        "Redis limiter (--rate-limit)",
    ]
    assert all(len(s.samples_ms) == 6 and s.failed == 0 for s in answers)
    assert [len(s.samples_ms) for s in limiters] == [40, 40, 8]
    assert all(min(s.samples_ms) > 0 for s in limiters)
    table = format_scale(answers, "title", "note")
    assert "baseline" in table and "failed: 0" in table


def test_the_paired_delta_is_the_median_of_per_round_differences() -> None:
    from agentskit_web.bench.scale import Series, paired_delta

    baseline = Series("a", [10.0, 50.0, 12.0])
    one = Series("b", [11.0, 52.0, 12.5])
    assert paired_delta(one, baseline) == 1.0
    assert paired_delta(Series("c", [1.0], failed=1), Series("d", [1.0])) is None


def test_balancer_bench_measures_one_and_three_instances_on_the_same_processes() -> None:
    # The failover half runs in tests/test_balancer.py (same code, `kill_mid_answer`).
    throughput, failovers = run_balancer_bench(
        turns=8, clients=2, warmup=2, trials=0, default_lease_trials=0
    )
    assert [(s.instances, len(s.samples_ms), s.failed) for s in throughput] == [
        (1, 8, 0),
        (3, 8, 0),
    ]
    assert failovers == []
    assert all(s.seconds > 0 and s.per_second > 0 for s in throughput)
    table = format_throughput(throughput, 2)
    assert "baseline" in table and "failed: 0" in table and "Not scaling" in table
