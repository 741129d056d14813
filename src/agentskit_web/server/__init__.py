"""The reference Ask backend, the demo server and static serving (CPython only: sockets)."""
