"""`agentskit-web eval`: ask each question of a questions file, score the sources, sum up.

Two ways to ask, one score:

- `SiteAsker`: a built site's index, searched in process exactly as `serve-ask --site-dir`
  searches it (the same source reader, site config and synonyms, the same `maxSources`);
- `EndpointAsker`: a running Ask backend over HTTP (`POST` per protocol.md), so an owner
  measures what is deployed, generator and all. A `422 ASK_NO_GROUNDED_SOURCES` is a decline,
  an answer whose text is the near-miss message is a near miss, anything else answered.

A question that names pages is a *hit* when its answer was grounded and an expected page is
among the first `HIT_DEPTH` sources (every expected page, for `match: all`). An expected
`page` matches any section of that page; `page#anchor` matches that section only. A question
marked `decline` is right when the answer was not grounded (declined or near miss).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Protocol

from ..answering.chunk import Chunk
from ..answering.decline import CLOSEST_MESSAGE
from ..answering.outcome import Verdict, section_label, verdict_of
from ..answering.ranking import SearchIndex
from .eval_questions import EvalFile, EvalFileError, EvalQuestion

HIT_DEPTH: Final = 3
"""A hit is an expected page among this many first sources: what a reader looks at."""
ENDPOINT_TIMEOUT_SECONDS: Final = 60.0
ENDPOINT_MAX_RETRIES: Final = 5
"""429s waited out per question (their Retry-After) before the run stops."""
ENDPOINT_MAX_RETRY_WAIT_SECONDS: Final = 30
ENDPOINT_MAX_RESPONSE_BYTES: Final = 1024 * 1024
UNKNOWN_PAGES_SHOWN: Final = 10


class EvalRunError(RuntimeError):
    """The questions cannot be asked (a backend refusing them, a site that cannot be read)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one question got: the verdict and the cited sections, first first."""

    verdict: Verdict
    cited: tuple[str, ...] = ()


class Asker(Protocol):
    def ask(self, question: str) -> Outcome: ...


def normalize(section: str) -> str:
    """`page` or `page#anchor` as compared: a leading `/`, no trailing `index.html`."""
    page, hash_mark, anchor = section.strip().partition("#")
    page = "/" + page.lstrip("/")
    if page.endswith("/index.html"):
        page = page[: -len("index.html")]
    return page + hash_mark + anchor


def matches(expected: str, cited: str) -> bool:
    """Whether a cited section satisfies an expected one (a bare page: any of its sections)."""
    want, got = normalize(expected), normalize(cited)
    if "#" in want:
        return want == got
    return got.partition("#")[0] == want


@dataclass(frozen=True, slots=True)
class QuestionScore:
    question: EvalQuestion
    outcome: Outcome
    right: bool
    """A hit for a question with pages; a decline (or near miss) for a `decline` question."""


def score(question: EvalQuestion, outcome: Outcome) -> QuestionScore:
    if question.decline:
        return QuestionScore(question, outcome, outcome.verdict != "answered")
    if outcome.verdict != "answered":
        return QuestionScore(question, outcome, False)
    first = outcome.cited[:HIT_DEPTH]
    found = [any(matches(page, cited) for cited in first) for page in question.pages]
    right = all(found) if question.match == "all" else any(found)
    return QuestionScore(question, outcome, right)


@dataclass(slots=True)
class EvalReport:
    """Every question's score and the figures an owner reads."""

    scores: list[QuestionScore] = field(default_factory=list)

    @property
    def answerable(self) -> list[QuestionScore]:
        return [s for s in self.scores if s.question.answerable]

    @property
    def to_decline(self) -> list[QuestionScore]:
        return [s for s in self.scores if s.question.decline]

    @property
    def hits(self) -> int:
        return sum(s.right for s in self.answerable)

    @property
    def hit_rate(self) -> float:
        """Hits over answerable questions (1.0 when the file has none)."""
        answerable = self.answerable
        return self.hits / len(answerable) if answerable else 1.0

    @property
    def declined_right(self) -> int:
        return sum(s.right for s in self.to_decline)

    @property
    def declined_wrongly(self) -> int:
        """Answerable questions the box declined (outright or as a near miss)."""
        return sum(s.outcome.verdict != "answered" for s in self.answerable)

    @property
    def misses(self) -> list[QuestionScore]:
        return [s for s in self.scores if not s.right]

    def lines(self) -> list[str]:
        """The terminal summary: figures, then each miss with what was cited."""
        answerable, to_decline = self.answerable, self.to_decline
        out = [
            f"{len(self.scores)} questions: {len(answerable)} with pages, "
            f"{len(to_decline)} to decline",
            f"hit rate {self.hit_rate:.3f} ({self.hits}/{len(answerable)}: an expected page "
            f"among the first {HIT_DEPTH} sources)",
            f"declines {self.declined_right}/{len(to_decline)} declined as they should; "
            f"{self.declined_wrongly}/{len(answerable)} questions with pages declined",
        ]
        misses = self.misses
        if misses:
            out.append(f"misses ({len(misses)}):")
        for miss in misses:
            question = miss.question
            label = f"{question.id}: " if question.id else ""
            expected = "decline" if question.decline else ", ".join(question.pages)
            got = ", ".join(miss.outcome.cited[:HIT_DEPTH]) or "no source"
            out.append(f"  {label}{question.question!r}")
            out.append(f"    expected {expected}; got {miss.outcome.verdict}: {got}")
        return out


def run_eval(questions: EvalFile, asker: Asker) -> EvalReport:
    """Ask every question in order (one at a time: a backend's rate limit is not a race)."""
    report = EvalReport()
    for question in questions.questions:
        report.scores.append(score(question, asker.ask(question.question)))
    return report


# --------------------------------------------------------------------------- a built site


class SiteAsker:
    """A built site's index searched in process, as `serve-ask --site-dir` searches it."""

    def __init__(
        self, site_dir: Path, *, site_config: Path | None = None, base_path: str | None = None
    ) -> None:
        from ..server.ask_serve import AskServeConfig, StartupError, answer_source, site_settings
        from ..server.site_source import SiteSourceError

        config = AskServeConfig(site=site_config, site_dir=site_dir, base_path=base_path)
        try:
            source = answer_source(config)
            site, _notes = site_settings(config, source)
        except (StartupError, SiteSourceError, ValueError) as error:
            raise EvalRunError(str(error)) from error
        self.chunks: list[Chunk] = source.chunks
        self.max_sources = site.max_sources
        self.index = SearchIndex.from_chunks(source.chunks, synonyms=site.synonyms)

    def ask(self, question: str) -> Outcome:
        found = self.index.find(question, self.max_sources)
        cited = tuple(section_label(p.path, p.anchor) for p in found.passages)
        return Outcome(verdict_of(found), cited)

    def check_pages(self, questions: EvalFile) -> None:
        """Refuse expected pages or sections the site does not have (a typo is not a miss)."""
        known = {section_label(c.path, c.anchor) for c in self.chunks}
        unknown = sorted(
            {
                page
                for q in questions.questions
                for page in q.pages
                if not any(matches(page, section) for section in known)
            }
        )
        if unknown:
            shown = ", ".join(unknown[:UNKNOWN_PAGES_SHOWN])
            more = len(unknown) - UNKNOWN_PAGES_SHOWN
            raise EvalFileError(
                f"{len(unknown)} expected page(s) the site does not have: {shown}"
                + (f" and {more} more" if more > 0 else "")
            )


# --------------------------------------------------------------------------- a running backend


class EndpointAsker:
    """A running Ask backend, one question per request (protocol.md)."""

    def __init__(self, url: str, *, token: str | None = None) -> None:
        import httpx

        headers = {"content-type": "application/json"}
        if token:
            headers["authorization"] = f"Bearer {token}"
        self.url = url
        self.client = httpx.Client(timeout=ENDPOINT_TIMEOUT_SECONDS, headers=headers)

    def close(self) -> None:
        self.client.close()

    def ask(self, question: str) -> Outcome:
        import httpx

        body = json.dumps({"messages": [{"role": "user", "content": question}]})
        for _attempt in range(ENDPOINT_MAX_RETRIES + 1):
            try:
                with self.client.stream("POST", self.url, content=body) as response:
                    if response.status_code == 429:
                        wait = _retry_after(response.headers.get("retry-after"))
                        response.close()
                        time.sleep(wait)
                        continue
                    data = _read_bounded(response.iter_bytes())
                    status = response.status_code
            except httpx.HTTPError as error:
                raise EvalRunError(f"{self.url}: {error}") from error
            return _outcome_of(status, data, self.url)
        raise EvalRunError(f"{self.url} kept answering 429 (rate limited); raise its rate limit")


def _retry_after(value: str | None) -> float:
    try:
        seconds = float(value) if value is not None else 1.0
    except ValueError:
        seconds = 1.0
    return min(max(seconds, 0.0), ENDPOINT_MAX_RETRY_WAIT_SECONDS)


def _read_bounded(pieces: Iterable[bytes]) -> bytes:
    data = bytearray()
    for piece in pieces:
        data += piece
        if len(data) > ENDPOINT_MAX_RESPONSE_BYTES:
            raise EvalRunError(f"an answer larger than {ENDPOINT_MAX_RESPONSE_BYTES:,} bytes")
    return bytes(data)


def _outcome_of(status: int, data: bytes, url: str) -> Outcome:
    """A backend's response as an outcome; a refusal other than a decline stops the run."""
    if status == 422:
        return Outcome("declined")
    if status != 200:
        code = _error_code(data)
        raise EvalRunError(f"{url} answered {status} {code}".rstrip())
    text: list[str] = []
    cited: list[str] = []
    for line in data.decode("utf-8", "replace").splitlines():
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError as error:
            raise EvalRunError(f"{url} sent a line that is not JSON") from error
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "text":
            text.append(str(event.get("delta", "")))
        elif kind == "tool" and event.get("name") == "cite":
            cited = [_cited(source) for source in event.get("args", {}).get("sources", [])]
        elif kind == "error":
            raise EvalRunError(f"{url} failed mid-answer: {event.get('code', 'error')}")
    verdict: Verdict = "near miss" if "".join(text).strip() == CLOSEST_MESSAGE else "answered"
    return Outcome(verdict, tuple(cited))


def _cited(source: object) -> str:
    if not isinstance(source, dict):
        return ""
    path = str(source.get("path") or source.get("url") or "")
    anchor = source.get("anchor")
    return section_label(path, str(anchor) if anchor else None)


def _error_code(data: bytes) -> str:
    try:
        return str(json.loads(data)["error"]["code"])
    except (ValueError, KeyError, TypeError):
        return ""


def eval_lines(report: EvalReport, min_hit_rate: float | None) -> Sequence[str]:
    """The summary and, with a threshold, whether the run passes it."""
    lines = report.lines()
    if min_hit_rate is not None:
        verdict = "below" if report.hit_rate < min_hit_rate else "at or above"
        lines.append(f"hit rate {report.hit_rate:.3f} is {verdict} --min-hit-rate {min_hit_rate}")
    return lines
