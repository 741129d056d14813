"""The only layer touching `js`, `pyodide` or `pyscript`: the page bootstrap (later the widget)."""
