"""The pytest layer: the only package that imports pytest.

Options and settings, the hooks, the collection and run-time nodes, the terminal and
report integration. Everything of substance is delegated to the plain packages beside it.
"""
