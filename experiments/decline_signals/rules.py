"""Decline rules over the signals `features.py` wrote, scored on the tuning halves.

Each rule maps a question's signals to a verdict (answered, closest, declined); the
ranking is unchanged by the verdict, so page@3 is the undeclined search's for an
answered question and 0 otherwise. Per corpus: page@3, wrongly declined, unanswerable
declined outright, unanswerable answered. Round nine, tuning halves only:
`.venv/bin/python experiments/decline_signals/rules.py FEATURES.json`
"""

import json
import sys
from collections.abc import Callable
from pathlib import Path

CORPORA = ["ours", "pydantic", "starlette", "click"]
Rule = Callable[[dict], str]


def shipped(r: dict) -> str:
    return r["shipped"]


def figures(rows: list[dict], rule: Rule) -> tuple[float, float, float, float]:
    a = [r for r in rows if r["answerable"]]
    u = [r for r in rows if not r["answerable"]]
    va = [rule(r) for r in a]
    vu = [rule(r) for r in u]
    page = sum(v == "answered" and r["page_ok"] for v, r in zip(va, a, strict=False)) / len(a)
    wrong = sum(v != "answered" for v in va) / len(a)
    outright = sum(v == "declined" for v in vu) / len(u)
    u_answered = sum(v == "answered" for v in vu) / len(u)
    return page, wrong, outright, u_answered


def table(data: list[dict], rule: Rule, label: str) -> None:
    cells = []
    for c in CORPORA:
        p, w, o, ua = figures([r for r in data if r["corpus"] == c], rule)
        cells.append(f"{c[:4]} p{p:.3f} w{w:.3f} o{o:.3f} ua{ua:.3f}")
    print(f"{label:<34}", " | ".join(cells))


def utility(rows: list[dict], rule: Rule) -> float:
    p, w, o, ua = figures(rows, rule)
    return p + (1 - w) + o - ua


if __name__ == "__main__":
    data = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    table(data, shipped, "shipped")
