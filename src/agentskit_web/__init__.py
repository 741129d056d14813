"""agentskit-web: the AgentsKit Chat wire contracts and a docs Ask widget for Pyodide."""

__version__ = "0.1.0"
