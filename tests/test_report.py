"""`agentskit-web report LOG`: the summary, the grouping of unanswered questions, the HTML
page (self-contained: no script, no URL it could fetch) and `--export-eval`.

The log is written with the real `QuestionLog` (SQLite), as `serve-ask` writes it.
"""

import datetime as dt
import re
from pathlib import Path

import pytest

from agentskit_web.cli import main as cli_main
from agentskit_web.insight.eval_questions import EvalFileError, load_eval_file
from agentskit_web.insight.report import group_by_shared_words, summarize
from agentskit_web.insight.report_html import CSP
from agentskit_web.server.question_log import QuestionLog, read_question_log

DAY = dt.date(2026, 11, 30)
HOSTILE = 'Is it <img src="https://evil.example/x.png" onerror="alert(1)"> waterproof?'


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "questions.db"
    log = QuestionLog(path)
    rows = [
        (0, "docs", "How do I pair the lantern?", "answered", ["/pairing/#pair"]),
        (0, "docs", "How long does the lantern charge?", "answered", ["/charging/#charge"]),
        (0, "docs", "Is the lantern waterproof?", "declined", []),
        (1, "docs", "Is the lantern waterproof?", "declined", []),
        (1, "docs", HOSTILE, "declined", []),
        (1, "docs", "How do I update the firmware?", "near miss", ["/care/"]),
        (2, "docs", "Where is the firmware download?", "declined", []),
        (2, "docs", "What is the lantern's weight?", "declined", []),
        (2, "docs", "Can the lantern float?", "declined", []),
        (2, "docs", "Does the lantern glow in the dark?", "declined", []),
        (2, "other", "How do I charge the other product?", "declined", []),
        (3, "docs", "How do I pair the lantern?", "answered", ["/pairing/#pair", "/faq/"]),
    ]
    for n, (age, corpus, question, verdict, cited) in enumerate(rows):
        day = DAY - dt.timedelta(days=3 - age)
        log.record_question(f"a{n}", day, corpus, question, verdict, cited)
    log.record_feedback("a0", DAY - dt.timedelta(days=3), "docs", "x", [], "up", None)
    log.record_feedback(
        "a1", DAY - dt.timedelta(days=3), "docs", "x", [], "down", "It cites <b>the old</b> page"
    )
    log.close()
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    status = cli_main(["report", *argv])
    return status, capsys.readouterr().out.splitlines()


def test_terminal_summary(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run(capsys, str(log))
    assert status == 0
    assert out[:3] == [
        "12 questions, 2026-11-27 to 2026-11-30",
        "answered 3 (25%), near miss 1 (8%), declined 8 (67%)",
        "feedback: 1 up, 1 down",
    ]
    assert out[3:6] == ["pages most cited:", "      2  /pairing/", "      1  /charging/"]
    groups = out[out.index("unanswered and near-miss questions, by shared word:") + 1 :]
    # "lantern" is in more unanswered questions than any word, but in answered ones too:
    # it names no gap, so "waterproof" comes first.
    assert groups[0].startswith("      3  waterproof: 'Is the lantern waterproof?'; ")
    assert groups[1] == (
        "      2  firmware: 'How do I update the firmware?'; 'Where is the firmware download?'"
    )
    assert "thumbs down:" in out
    assert out[-1] == (
        "  2026-11-27 'How long does the lantern charge?' -> /charging/#charge "
        "('It cites <b>the old</b> page')"
    )


def test_since_and_corpus_filter(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out = run(capsys, str(log), "--since", "2026-11-29", "--corpus", "docs")
    assert out[0] == "5 questions, 2026-11-29 to 2026-11-30"
    _, out = run(capsys, str(log), "--corpus", "other")
    assert out[:2] == [
        "1 questions, 2026-11-29 to 2026-11-29",
        "answered 0 (0%), near miss 0 (0%), declined 1 (100%)",
    ]
    _, out = run(capsys, str(log), "--since", "2027-01-01")
    assert out == ["no question in the log (for this period and corpus)"]


def test_bad_log_and_bad_date(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["report", str(tmp_path / "nope.db")]) == 2
    assert "does not exist" in capsys.readouterr().err
    other = tmp_path / "other.db"
    other.write_bytes(b"not sqlite at all" * 100)
    assert cli_main(["report", str(other)]) == 2
    assert "question log" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli_main(["report", str(other), "--since", "yesterday"])


def test_grouping_largest_first_each_question_once() -> None:
    questions = ["a widget crash", "widget crash again", "the token expired", "token expired",
                 "token refresh", "alone here"]  # fmt: skip
    groups = group_by_shared_words(questions, questions)
    assert [(g.word, g.count) for g in groups] == [
        ("token", 3), ("crash", 2), ("", 1)
    ]  # fmt: skip
    assert sorted(q for g in groups for q in g.questions) == sorted(questions)
    assert groups[-1].questions == ("alone here",)


def test_html_is_self_contained_and_escapes_what_readers_typed(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "report.html"
    status, out = run(capsys, str(log), "--html", str(out_file))
    assert status == 0 and out[-1] == f"wrote {out_file}"
    html = out_file.read_text(encoding="utf-8")
    assert f'content="{CSP}"' in html and "default-src 'none'" in CSP
    assert "<script" not in html.lower()
    assert html.count("<svg") == 4  # per day, share answered, pages, groups
    # Nothing the page could fetch: every reference is to the page itself; a URL a reader
    # typed is text.
    references = re.findall(r"""\b(?:href|src)\s*=\s*(["'])(.*?)\1""", html, re.IGNORECASE)
    assert all(ref.startswith("#") for _, ref in references), references
    assert re.search(r"url\(|@import", html, re.IGNORECASE) is None
    assert HOSTILE not in html and "&lt;img src=" in html
    assert "It cites &lt;b&gt;the old&lt;/b&gt; page" in html
    assert "waterproof" in html and "asked 3 times, 2 distinct" in html


def test_export_eval_is_a_skeleton_the_owner_completes(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "todo.yaml"
    _, out = run(capsys, str(log), "--corpus", "docs", "--export-eval", str(target))
    assert out[-1] == f"wrote {target} (7 questions to complete)"
    text = target.read_text(encoding="utf-8")
    with pytest.raises(EvalFileError, match=r"question 1 .*needs the pages"):
        load_eval_file(target)
    completed = tmp_path / "done.yaml"
    completed.write_text(text.replace("pages: []", "decline: true"), encoding="utf-8")
    questions = [q.question for q in load_eval_file(completed).questions]
    assert questions == [
        "Is the lantern waterproof?",
        HOSTILE,
        "How do I update the firmware?",
        "Where is the firmware download?",
        "What is the lantern's weight?",
        "Can the lantern float?",
        "Does the lantern glow in the dark?",
    ]


def test_summary_counts_feedback_rows_without_a_verdict(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    log = QuestionLog(path)
    log.record_feedback("static-1", DAY, "docs", "q?", ["/a/"], "down", None)
    log.close()
    summary = summarize(read_question_log(path))
    assert summary.asked == 0 and len(summary.down) == 1
    assert summary.verdicts["in the page"] == 1


def test_suggest_synonyms(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from agentskit_web.protocol.site_config import parse_site_config
    from agentskit_web.server.site_source import derived_site_config

    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(
        "<html><head><title>Lantern</title></head><body><main><h1>Lantern</h1>"
        "<p>The ring glows green when the battery is charged over the cable.</p>"
        "<h2 id='pairing'>Pairing</h2><p>Pair the lantern with the companion app.</p>"
        "</main></body></html>",
        encoding="utf-8",
    )
    path = tmp_path / "q.db"
    log = QuestionLog(path)
    for n, question in enumerate(
        ["Does the rign glow?", "Can a powerbank charge it?", "Is a powerbank charging it?"]
    ):
        log.record_question(f"q{n}", DAY, "docs", question, "declined", [])
    log.record_question("ok", DAY, "docs", "How do I pair the lantern?", "answered", ["/"])
    log.close()
    assert cli_main(["report", str(path), "--suggest-synonyms"]) == 2
    assert "needs --site-dir" in capsys.readouterr().err
    status, out = run(capsys, str(path), "--suggest-synonyms", "--site-dir", str(site))
    assert status == 0
    start = out.index("readers' words the docs never use (asked; closest docs words):")
    assert out[start + 1 : start + 3] == [
        "      2  powerbank: none close in spelling: pair it by hand",
        "      1  rign: ring",
    ]
    snippet = json.loads("\n".join(out[out.index("{") :]))
    assert snippet == {"search": {"synonyms": [["rign", "ring"]]}}
    # The snippet is a valid `search` member of a site config.
    config = {**derived_site_config("Lantern"), **snippet}
    assert parse_site_config(config).ok
