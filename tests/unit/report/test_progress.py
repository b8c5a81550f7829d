"""The progress status line's text and its writing (the pytest side is
tests/plugin/test_progress.py)."""

from __future__ import annotations

import os

from pytest_evalcases.report.progress import SHOW_AFTER, Progress


def _progress(out: int, running: list[tuple[str, float]], total: int = 40) -> Progress:
    return Progress(out, lambda: None, lambda: 80, lambda: running, lambda: total)


def test_status_names_each_run_by_its_item_and_counts_the_finished() -> None:
    running = [("evals/refunds.yaml::refund-logging", 0.0), ("evals/r.yaml::refund-tests", 30.0)]
    progress = _progress(-1, running)
    for _ in range(7):
        progress.finished_one()
    assert progress.status(42.0) == "  [running: refund-logging 42s, refund-tests 12s · 7/40 done]"


def test_status_is_empty_while_every_run_is_young_or_none_runs() -> None:
    assert _progress(-1, [("a::b", 10.0)]).status(10.0 + SHOW_AFTER / 2) == ""
    assert _progress(-1, []).status(100.0) == ""


def test_close_erases_what_the_status_wrote() -> None:
    read, write = os.pipe()
    progress = _progress(write, [])
    progress._write("  [status]")
    progress._shown = len("  [status]")
    progress.close()
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        assert pipe.read() == b"  [status]\x1b[10D\x1b[K"
