"""The questions file of `agentskit-web eval` (docs/testing.md, "Measure the answers").

YAML (or JSON, which YAML reads too), written by a docs owner:

    questions:
      - question: How do I install it?
        pages: [/getting-started/]
      - question: Which options does the build accept?
        pages: [/reference/#build-options]
      - question: Can it make coffee?
        decline: true

Each question names the pages that answer it (`pages`; a page's top, or a page and one of its
sections as `page#anchor`), or says the docs do not answer it (`decline: true`). `match: all`
says an answer needs every listed page (default `any`: one of them). `id`, `split` and `kind`
are free labels (a benchmark keeps tuning and held-out questions apart with `split`).

The file is parsed strictly: an unknown key, a question with both `pages` and `decline`, or
with neither, is an `EvalFileError` naming the question, so a typo never turns into a silent
miss.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

EVAL_MAX_QUESTIONS: Final = 5_000
"""More questions than an owner writes by hand; bounds a run's time and memory."""
EVAL_QUESTION_MAX_CHARS: Final = 2_000
"""A question longer than this is not one a reader types."""
EVAL_MAX_PAGES: Final = 20
EVAL_FILE_MAX_BYTES: Final = 4 * 1024 * 1024

Match = Literal["any", "all"]


class EvalFileError(ValueError):
    """The questions file cannot be read or is not valid (one message, naming the place)."""


class EvalQuestion(BaseModel):
    """One question and what answers it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    question: Annotated[str, Field(min_length=1, max_length=EVAL_QUESTION_MAX_CHARS)]
    pages: Annotated[
        list[Annotated[str, Field(min_length=1)]], Field(max_length=EVAL_MAX_PAGES)
    ] = []
    decline: bool = False
    match: Match = "any"
    id: str | None = None
    split: str | None = None
    kind: str | None = None

    @model_validator(mode="after")
    def _pages_or_decline(self) -> EvalQuestion:
        if self.question.strip() == "":
            raise ValueError("the question is blank")
        if self.decline and self.pages:
            raise ValueError("a question has either pages or decline: true, not both")
        if not self.decline and not self.pages:
            raise ValueError("a question needs the pages that answer it, or decline: true")
        return self

    @property
    def answerable(self) -> bool:
        return not self.decline


class EvalFile(BaseModel):
    """The whole file: its questions, in order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    questions: Annotated[list[EvalQuestion], Field(min_length=1, max_length=EVAL_MAX_QUESTIONS)]


def parse_eval_document(document: Any, where: str = "questions file") -> EvalFile:
    """A loaded document (mapping) as an `EvalFile`; EvalFileError names the first problem."""
    try:
        return EvalFile.model_validate(document)
    except ValidationError as error:
        first = error.errors()[0]
        place = _place(first["loc"], document)
        raise EvalFileError(f"{where}: {place}: {first['msg']}") from None


def _place(location: tuple[int | str, ...], document: Any) -> str:
    """`question 3 ("How do I...")` rather than a bare field path, when it is a question."""
    if len(location) >= 2 and location[0] == "questions" and isinstance(location[1], int):
        number = location[1]
        text = ""
        with contextlib.suppress(AttributeError, IndexError, KeyError, TypeError):
            text = str(document["questions"][number].get("question", ""))[:60]
        rest = ".".join(str(part) for part in location[2:])
        label = f"question {number + 1}" + (f" ({text!r})" if text else "")
        return f"{label}{', ' + rest if rest else ''}"
    return ".".join(str(part) for part in location) or "(top)"


def load_eval_file(path: Path) -> EvalFile:
    """Read and validate a questions file (YAML or JSON)."""
    import yaml

    try:
        size = path.stat().st_size
        if size > EVAL_FILE_MAX_BYTES:
            raise EvalFileError(f"{path}: larger than {EVAL_FILE_MAX_BYTES:,} bytes")
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise EvalFileError(f"{path} cannot be read: {error.strerror}") from error
    except UnicodeDecodeError as error:
        raise EvalFileError(f"{path} is not UTF-8 text") from error
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise EvalFileError(f"{path} is not valid YAML: {error}") from error
    if not isinstance(document, dict):
        raise EvalFileError(f"{path}: expected a mapping with a `questions` list")
    return parse_eval_document(document, str(path))


def dump_eval_skeleton(questions: list[str]) -> str:
    """Questions with no answer yet, as a file the owner completes (report --export-eval).

    Each question gets `pages: []` to fill in, or `decline: true` to keep; YAML quoting is
    PyYAML's, so any text a reader typed round-trips."""
    import yaml

    entries = [{"question": text, "pages": []} for text in questions]
    header = (
        "# Questions readers asked that the docs did not answer (agentskit-web report).\n"
        "# For each: list the pages (or page#anchor) that should answer it once the docs do,\n"
        "# or replace `pages: []` with `decline: true` if the docs should not answer it.\n"
    )
    body: str = yaml.safe_dump(
        {"questions": entries}, allow_unicode=True, sort_keys=False, default_flow_style=False
    )
    return header + body
