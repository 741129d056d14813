"""`report --html OUT.html`: the question log as one page an owner would rather look at.

The charts are drawn by pygal (https://www.pygal.org), a maintained pure-Python library that
renders charts as SVG on the machine that runs the report. Chosen over a JavaScript library
(Chart.js, ECharts, uPlot) inlined in the page because the page then needs no script at all:
it is opened from a disk, mailed or attached to a ticket, and its Content-Security-Policy
(`default-src 'none'`) forbids every request and every script, so nothing in a question a
reader typed can run or fetch anything, and there is no library file to vendor and keep
current. pygal's own inline config script (for its optional tooltips) is removed from each
SVG; values are still shown on hover by the SVG's own `<title>`/`<desc>`.

Everything a reader typed (questions, comments, cited paths from feedback) reaches the page
only through `html.escape` or, inside charts, through pygal's XML serializer.
"""

from __future__ import annotations

import datetime as dt
import re
from html import escape
from typing import Any, Final

from ..answering.outcome import VERDICTS
from .report import GROUP_EXAMPLES, MAX_DOWN_SHOWN, STATIC_VERDICT, Summary

CSP: Final = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
COLORS: Final = {
    "answered": "#2e7d32",
    "near miss": "#f9a825",
    "declined": "#c62828",
    STATIC_VERDICT: "#78909c",
}
CHART_WIDTH: Final = 900
CHART_HEIGHT: Final = 360
MAX_X_LABELS: Final = 16
_COMMENT: Final = re.compile(r"<!--.*?-->", re.DOTALL)
PAGE_STYLE: Final = """
:root { color-scheme: light dark; --fg: #1d2125; --bg: #ffffff; --muted: #5f6b76;
  --line: #d9dee3; --card: #f6f8fa; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e9ec; --bg: #15191d; --muted: #9aa6b2; --line: #2c343c; --card: #1d2329; }
}
body { margin: 0; font: 15px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 960px; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
h1 { font-size: 1.5rem; margin: 0 0 0.25rem; }
h2 { font-size: 1.15rem; margin: 2rem 0 0.5rem; }
.muted { color: var(--muted); }
.tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 0.75rem;
  margin: 1rem 0; }
.tile { background: var(--card); border: 1px solid var(--line); border-radius: 8px;
  padding: 0.6rem 0.8rem; }
.tile b { display: block; font-size: 1.4rem; }
.chart { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 0.25rem; }
.chart svg { width: 100%; height: auto; display: block; }
.group { border-top: 1px solid var(--line); padding: 0.5rem 0; }
.group b { font-size: 1.05rem; }
.count { display: inline-block; min-width: 2.2rem; font-weight: 600; }
ul { margin: 0.25rem 0 0; padding-left: 1.25rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 0.4rem 0.5rem;
  border-top: 1px solid var(--line); }
code { font-size: 0.9em; overflow-wrap: anywhere; }
td:first-child { white-space: nowrap; }
.scroll { overflow-x: auto; }
.scroll table { min-width: 640px; }
"""


def _style(*colors: str) -> Any:
    import pygal.style

    return pygal.style.Style(
        background="white",
        plot_background="white",
        foreground="#1d2125",
        foreground_strong="#1d2125",
        foreground_subtle="#5f6b76",
        font_family="system-ui, sans-serif",
        colors=colors or tuple(COLORS.values()),
        value_font_size=12,
        label_font_size=12,
        legend_font_size=13,
    )


def _no_script(tree: Any) -> Any:
    """pygal's inline config script would be refused by the page's CSP (a console error)."""
    for parent in tree.iter():
        for child in list(parent):
            if isinstance(child.tag, str) and child.tag.rsplit("}", 1)[-1] == "script":
                parent.remove(child)
    return tree


def _svg(chart: Any) -> str:
    chart.add_xml_filter(_no_script)
    rendered: str = chart.render(is_unicode=True)
    return _COMMENT.sub("", rendered)


def _options(*colors: str, **extra: Any) -> dict[str, Any]:
    return {
        "style": _style(*colors),
        "js": [],
        "disable_xml_declaration": True,
        "width": CHART_WIDTH,
        "height": CHART_HEIGHT,
        "legend_at_bottom": True,
        "print_values": False,
        "truncate_label": 60,
        "x_label_rotation": 0,
        **extra,
    }


def _day_options(days: list[dt.date]) -> dict[str, Any]:
    """One label per day, at most MAX_X_LABELS of them written (the others are ticks)."""
    return {
        "x_labels_major_every": max(1, -(-len(days) // MAX_X_LABELS)),
        "show_minor_x_labels": False,
    }


def _count_axis(largest: int) -> dict[str, Any]:
    """Whole numbers on a count axis (pygal would write 0.2, 0.4... for a small count)."""
    step = max(1, -(-largest // 8))
    top = max(1, -(-largest // step) * step)
    return {"range": (0, top), "y_labels": list(range(0, top + 1, step))}


def _day_labels(days: list[dt.date]) -> list[str]:
    return [day.strftime("%b %d") for day in days]


def per_day_chart(summary: Summary) -> str:
    import pygal

    shown = [*VERDICTS, *([STATIC_VERDICT] if summary.verdicts[STATIC_VERDICT] else [])]
    chart = pygal.StackedBar(
        **_options(
            *(COLORS[v] for v in shown),
            title="Questions per day, by verdict",
            **_day_options(summary.days),
            **_count_axis(max(sum(c.values()) for c in summary.per_day.values())),
        )
    )
    chart.x_labels = _day_labels(summary.days)
    for verdict in shown:
        chart.add(verdict, [summary.per_day[day][verdict] if day in summary.per_day else 0
                            for day in summary.days])  # fmt: skip
    return _svg(chart)


def answered_share_chart(summary: Summary) -> str:
    import pygal

    chart = pygal.Line(
        **_options(
            COLORS["answered"],
            title="Share of questions answered, per day",
            range=(0, 100),
            value_formatter=lambda value: f"{value:.0f}%",
            fill=True,
            dots_size=3,
            show_legend=False,
            **_day_options(summary.days),
        )
    )
    chart.x_labels = _day_labels(summary.days)
    shares = [summary.answered_share(day) for day in summary.days]
    chart.add("answered", [None if s is None else round(s * 100, 1) for s in shares])  # fmt: skip
    return _svg(chart)


def pages_chart(summary: Summary) -> str:
    import pygal

    height = max(160, 60 + 32 * len(summary.pages))
    chart = pygal.HorizontalBar(
        **_options(
            "#1565c0",
            title="Pages most cited in answers",
            height=height,
            show_legend=False,
            **_count_axis(max(count for _, count in summary.pages)),
        )
    )
    pages = list(reversed(summary.pages))  # pygal draws the first value at the bottom
    chart.x_labels = [page for page, _ in pages]
    chart.add("answers citing it", [count for _, count in pages])
    return _svg(chart)


def groups_chart(summary: Summary) -> str:
    import pygal

    groups = [g for g in summary.groups if g.word][:12]
    height = max(160, 60 + 32 * len(groups))
    chart = pygal.HorizontalBar(
        **_options(
            COLORS["declined"],
            title="Unanswered and near-miss questions, by shared word",
            height=height,
            show_legend=False,
            **_count_axis(max(group.count for group in groups)),
        )
    )
    groups = list(reversed(groups))
    chart.x_labels = [group.word for group in groups]
    chart.add("questions", [group.count for group in groups])
    return _svg(chart)


def render_report(summary: Summary, *, title: str, period: str) -> str:
    """The whole page (UTF-8 HTML, no script, no request)."""
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{PAGE_STYLE}</style></head><body><main>",
        f"<h1>{escape(title)}</h1><p class=muted>{escape(period)}</p>",
    ]
    if not summary.rows:
        parts.append("<p>No question in the log for this period and corpus.</p>")
        parts.append("</main></body></html>")
        return "\n".join(parts)
    tiles = [("questions", str(summary.asked))]
    tiles += [(v, f"{summary.share(v):.0%}") for v in VERDICTS]
    tiles += [("helpful / not helpful", f"{summary.up_votes} / {len(summary.down)}")]
    parts.append("<div class=tiles>")
    parts += [f"<div class=tile><b>{escape(v)}</b>{escape(k)}</div>" for k, v in tiles]
    parts.append("</div>")
    parts += [
        "<h2>Questions per day</h2>",
        f"<div class=chart>{per_day_chart(summary)}</div>",
        "<h2>Share answered</h2>",
        f"<div class=chart>{answered_share_chart(summary)}</div>",
    ]
    if summary.pages:
        parts += ["<h2>Pages most cited</h2>", f"<div class=chart>{pages_chart(summary)}</div>"]
    parts.append("<h2>What the docs did not answer</h2>")
    if not summary.groups:
        parts.append("<p class=muted>Every question was answered.</p>")
    else:
        parts.append(
            "<p class=muted>Declined and near-miss questions, grouped by the word they share; "
            "the largest group first.</p>"
        )
        if any(g.word for g in summary.groups):
            parts.append(f"<div class=chart>{groups_chart(summary)}</div>")
        for group in summary.groups:
            label = escape(group.word) if group.word else "(no shared word)"
            distinct = group.examples
            examples = "".join(f"<li>{escape(q)}</li>" for q in distinct[:GROUP_EXAMPLES])
            more = len(distinct) - min(len(distinct), GROUP_EXAMPLES)
            tail = f"<li class=muted>and {more} more questions</li>" if more else ""
            asked = f"asked {group.count} time{'s' if group.count != 1 else ''}"
            parts.append(
                f"<div class=group><span class=count>{group.count}</span><b>{label}</b> "
                f"<span class=muted>{asked}, {len(distinct)} distinct</span>"
                f"<ul>{examples}{tail}</ul></div>"
            )
    parts.append("<h2>Answers marked not helpful</h2>")
    if not summary.down:
        parts.append("<p class=muted>None.</p>")
    else:
        parts.append(
            "<table><tr><th>day</th><th>question</th><th>sources</th><th>comment</th></tr>"
        )
        for row in summary.down[:MAX_DOWN_SHOWN]:
            sources = "<br>".join(f"<code>{escape(s)}</code>" for s in row.cited[:4]) or "none"
            parts.append(
                f"<tr><td>{row.day}</td><td>{escape(row.question)}</td><td>{sources}</td>"
                f"<td>{escape(row.comment or '')}</td></tr>"
            )
        parts.append("</table></div>")
    parts.append("</main></body></html>")
    return "\n".join(parts)
