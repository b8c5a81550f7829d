"""One run of one case: workspace, configuration variants, the runner, the checks."""
