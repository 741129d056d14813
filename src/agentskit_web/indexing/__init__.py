"""Reading a docs site into `answering.chunk.Chunk`s: the host side of the search index.

Runs on CPython at build time and when the backend starts (the MkDocs
plugin, the Sphinx extension, `agentskit-web index`, `serve-ask`); it reads
files but opens no socket, and the page never loads it. The chunks it makes
are searched by `answering/`, which the page and the backend share.
"""
