"""Typed run records and results documents: the gate, statistics, baseline, merge, trend."""
