"""The only layer touching `js` or `pyodide`: the loader's entry point, the widget, Web Storage."""
