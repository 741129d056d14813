"""`POST /api/feedback`: a reader's thumbs up or down on one answer (docs/protocol.md).

The endpoint sits beside the Ask endpoint (`feedback` in the same folder as `ask`, so the
widget finds it from its `endpoint` alone) and admits a request with the Ask endpoint's own
steps, not a copy of them (`AskEndpoint.admit_head`, `take_rate_token`, `read_body`): the
same CORS answer for the same listed origins, the same authentication and failed-guess
limiter, the same hints check, one token of the same rate-limit bucket per request. Then:

6. the body, at most `FEEDBACK_MAX_BODY_BYTES` (413) and within the body timeout (408),
   parsed strictly (`protocol/feedback.py`, 400 ASK_INVALID_REQUEST);
7. recorded in the question log when the owner turned one on (its masking and retention
   apply), else dropped; `204` either way, so a reader's click never shows an error for a
   choice the owner made.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ..answering.outcome import section_label
from ..protocol.feedback import FeedbackRequest, parse_feedback
from ..protocol.limits import FEEDBACK_MAX_BODY_BYTES
from .ask_app import AskEndpoint, _ClientGone, _raw, _Reject, _security_headers
from .question_log import QuestionRecorder

FEEDBACK_NAME = "feedback"


def feedback_path_for(ask_path: str) -> str:
    """`/api/ask` -> `/api/feedback`: the sibling the widget resolves from its endpoint."""
    return ask_path.rsplit("/", 1)[0] + "/" + FEEDBACK_NAME


class FeedbackEndpoint:
    """The raw ASGI endpoint; admission is the Ask endpoint's."""

    def __init__(self, ask: AskEndpoint, question_log: QuestionRecorder | None) -> None:
        self.ask = ask
        self.question_log = question_log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        ask = self.ask
        headers = Headers(scope=scope)
        cors = ask._cors_headers(headers)
        if ask._is_preflight(scope, headers, cors):
            await ask._send_preflight(send, cors)
            return
        body_read = False
        try:
            principal = await ask.admit_head(scope, headers)
            await ask.take_rate_token(principal)
            body = await ask.read_body(
                receive, headers, FEEDBACK_MAX_BODY_BYTES, "feedback_too_large"
            )
            body_read = True
            result = parse_feedback(body)
            feedback = result.value
            if not result.ok or not isinstance(feedback, FeedbackRequest):
                raise _Reject(400, "ASK_INVALID_REQUEST", "feedback_invalid")
        except _Reject as reject:
            if not body_read:
                reject.headers.setdefault("connection", "close")
            await ask.send_error(send, reject, cors)
            return
        except _ClientGone:  # the reader left mid-body: nobody to answer
            return
        response = {**_security_headers(), **cors}
        await send({"type": "http.response.start", "status": 204, "headers": _raw(response)})
        await send({"type": "http.response.body", "body": b""})
        self._record(feedback)  # after the reply, as the Ask endpoint logs

    def _record(self, feedback: FeedbackRequest) -> None:
        log = self.question_log
        if log is None:
            return
        cited = [section_label(s.path, s.anchor) for s in feedback.sources]
        log.record_feedback(
            feedback.answer_id,
            self.ask.today(),
            self.ask.site.corpus_id,
            feedback.question,
            cited,
            feedback.vote,
            feedback.comment,
        )


def feedback_route(ask: AskEndpoint, ask_path: str) -> Route:
    """The feedback route beside an Ask route (every method reaches it: 405 is its own)."""
    return Route(feedback_path_for(ask_path), endpoint=FeedbackEndpoint(ask, ask.question_log))
