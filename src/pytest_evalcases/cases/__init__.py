"""Case files to validated models: discovery, schema, loading, diagnostics, parse cache."""
