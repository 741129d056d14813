"""The turn protocol's client side: the turn adapter and the server-backed memory."""
