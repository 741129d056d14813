"""What the Ask backend and the page both run to answer from a docs site: pure Python.

The backend (server/, CPython) and the static in-page answers (chat/ and
browser/, Pyodide) answer a question with the same code, over the same index
format, so the two agree on sources and on declines. This package imports
neither sockets, nor SQLite, nor the page (`js`, `pyodide`): the layer test
enforces it, the same way it does for protocol/ and chat/.

- `chunk`: the indexed unit (`Chunk`) and a retrieved one (`Passage`): what a
  citation needs (page URL as published, anchor, titles) and the text.
- `site_index`: the site index file (all chunks, versioned).
- `porter`, `text_terms`: index tokens (FTS5's porter tokenizer), stopwords,
  light stems.
- `query_terms`: a question's words to groups of alternatives (compounds,
  typo repair, roots, synonyms).
- `inverted_index`: postings with positions; phrases and prefixes.
- `ranking`: `SearchIndex`, the search (BM25 and our rules); `decline`,
  `question_split`, `distinct`: its parts.
- `sentences`, `extractive`: the quoted answer.
- `static_index`: the split index a static site publishes, and `StaticSearch`
  over its parts.

Design and figures: docs/design/answering.md.
"""
