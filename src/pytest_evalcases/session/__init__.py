"""One pytest session over the eval suite: its settings and state, which cases it
selects, and how it ends (pins, the baseline comparison, the results file)."""
