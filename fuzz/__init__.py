"""Coverage-guided fuzzing of every decoder and the markdown-to-view path (`make fuzz`).

Kept outside the package: nothing here ships in a wheel or a page. `targets`
holds what each target runs and the invariants it checks, `seeds` turns the
conformance fixtures into a starting corpus, `__main__` runs atheris
(libFuzzer) once per target in its own process and prints count and time.
"""
