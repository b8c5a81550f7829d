"""Only used when pytest is pointed at ``example_cases`` as a whole.

Each demo directory has its own ``pytest.ini`` and is meant to be run on its own
(``pytest example_cases/drift-demo``); then this file is not even loaded. Run from
above, the snapshots' own test files (agent output, graded as files, not tests to
run) would be collected as tests; keep them out.
"""

collect_ignore_glob = ["*/snapshots/*"]
