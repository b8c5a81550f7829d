"""Writing cases: the linter, the case template, the JSON Schema of the case format."""
