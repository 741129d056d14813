"""The backend both turn benches run (turn.py, turn_worst.py): its site and a retriever
that returns four fixed passages, so the figures measure the turn protocol, not retrieval."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

SITE: Final = {
    "protocol": "agentskit.chat.backend-site",
    "version": 1,
    "siteId": "bench",
    "assistant": {"id": "guide", "name": "Bench", "suggestions": []},
    "corpus": {"id": "docs", "mode": "local"},
    "components": ["source-list"],
    "actions": [],
    "limits": {
        "requestTimeoutMs": 120_000,
        "retrievalTimeoutMs": 10_000,
        "generationTimeoutMs": 120_000,
        "maxSources": 4,
    },
    "persistence": {"mode": "disabled"},
}


class BenchRetriever:
    """Four fixed passages whatever the question."""

    async def retrieve(self, question: str, limit: int) -> Sequence[Any]:
        from ..answering.chunk import Passage

        return [
            Passage(
                path=f"/docs/page-{n}.html",
                anchor="intro",
                page_title=f"Page {n}",
                heading="Intro",
                text="A passage.",
            )
            for n in range(1, 5)
        ][:limit]
