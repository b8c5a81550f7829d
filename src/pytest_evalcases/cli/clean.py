"""``evalcases clean [DIR] [--keep-last N]``: remove kept workspaces (docs/agents.md,
"Kept workspaces") and the recordings of runs beside the results files (docs/replay.md,
"How much space it takes")."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from pytest_evalcases import defaults
from pytest_evalcases.cases.rootdir import find_config, results_dir
from pytest_evalcases.run import artifacts, keep
from pytest_evalcases.text import non_negative_int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "directory",
        metavar="DIR",
        nargs="?",
        type=Path,
        default=None,
        help="Where the workspaces are kept, and the recordings (default: the eval_keep_dir "
        "of the pytest configuration here, else its eval_results_dir, else "
        f"{defaults.RESULTS_DIR}; recordings: its eval_results_dir)",
    )
    parser.add_argument(
        "--keep-last",
        metavar="N",
        type=non_negative_int,
        default=0,
        help="Keep the workspaces and recordings of the newest N runs (default: %(default)s, "
        "remove all)",
    )


def default_dir(start: Path) -> Path:
    """Where pytest run at ``start`` keeps workspaces: ``eval_keep_dir`` of its
    configuration file (relative to the rootdir), else the results directory."""
    found = find_config(start)
    if found is not None:
        rootdir, settings = found
        value = str(settings.get("eval_keep_dir") or "").strip()
        if value:
            return rootdir / value
    return results_dir(start)


def run(args: argparse.Namespace) -> int:
    directory = args.directory or default_dir(Path.cwd())
    # Recordings are beside the results files, wherever the workspaces are kept.
    recordings = args.directory or results_dir(Path.cwd())
    _clean_recordings(recordings, args.keep_last)
    removed, freed = keep.clean(directory, args.keep_last)
    for path in removed:
        print(f"removed {_shown(path)}")
    left = len(keep.sessions(directory))
    if removed:
        print(
            f"removed the kept workspaces of {_runs(len(removed))} ({keep.size_text(freed)})"
            f"; {_runs(left)} left"
        )
    elif left:
        print(f"nothing to remove: {_shown(directory)} keeps the workspaces of {_runs(left)}")
    else:
        print(f"no kept workspaces in {_shown(directory)}")
    return 0


def _clean_recordings(directory: Path, keep_last: int) -> None:
    """Remove the ``<stem>.runs`` directories of ``directory`` but the newest
    ``keep_last``, saying what went; nothing is said where there are none."""
    found = artifacts.recording_dirs(directory)
    removed = found[: len(found) - keep_last] if keep_last else found
    freed = 0
    for path in removed:
        freed += keep.tree_size(path)
        keep.remove_tree(path)
        print(f"removed {_shown(path)}")
    if removed:
        print(
            f"removed the recordings of {_runs(len(removed))} ({keep.size_text(freed)})"
            f"; {_runs(len(found) - len(removed))} left"
        )


def _runs(count: int) -> str:
    return f"{count} run" if count == 1 else f"{count} runs"


def _shown(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)
