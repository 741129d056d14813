"""What the Ask backend and the page both run to answer from a docs site: pure Python.

The backend (server/, CPython) and the static in-page answers (chat/ and
browser/, Pyodide) answer a question with the same code, over the same index
format, so the two agree on sources and on declines. This package imports
neither sockets, nor SQLite, nor the page (`js`, `pyodide`): the layer test
enforces it, the same way it does for protocol/ and chat/.

- `chunk`: the indexed unit (`Chunk`) and a retrieved one (`Passage`): what a
  citation needs (page URL as published, anchor, titles) and the text.
"""
