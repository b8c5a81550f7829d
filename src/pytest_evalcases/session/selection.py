"""Which collected cases run: ``--eval-tags``, ``--eval-defends``, ``--eval-changed`` and
``--eval-shard`` (docs/reference.md). A plain decision per case; the plugin reports the
others deselected, as ``-k`` does.

Items that are not eval cases (normal tests) are passed as ``None`` and always kept:
they run in every shard, as without the options.

:func:`suite_selection` then says what part of the suite a run selected, by any means
(``-k``, ``-m``, paths, these options): the results file's ``selection`` and
``complete_suite`` (docs/results.md, "Runs of part of the suite").
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_evalcases.cases.parsecache import CaseEntry
from pytest_evalcases.results.document import SuiteSelection
from pytest_evalcases.session import shard
from pytest_evalcases.session.settings import Settings

if TYPE_CHECKING:
    from pytest_evalcases.session.changed import ChangedFiles


@dataclass(frozen=True)
class Selection:
    """The selecting options of a run."""

    tags: frozenset[str] = frozenset()
    #: ``--eval-defends`` paths: a case defending one of them, or a path below one, runs.
    defends: tuple[str, ...] = ()
    changed: ChangedFiles | None = None
    #: ``--eval-shard K/N`` as ``(K, N)``.
    part: tuple[int, int] | None = None
    #: The split balanced by durations (:meth:`balanced`); by hash without one.
    plan: shard.Plan | None = None

    @classmethod
    def of(cls, settings: Settings) -> Selection:
        """The selection that ``settings`` asks for."""
        return cls(settings.tags, settings.defends, settings.changed, settings.results.shard)

    def selects(
        self, entry: CaseEntry | None, sources: Callable[[], Iterable[Path]] | None = None
    ) -> bool:
        """Whether the case passes the tag, defends and changed filters (all of them).

        ``sources`` gives the case's own files (its case file, then its fixture): with
        ``--eval-changed`` a change to one of them selects the case as a change to its
        ``defends`` path does. Called only when the defended path did not change, since
        the fixture may need the case file loaded."""
        if entry is None:
            return True
        if self.tags and not self.tags.intersection(entry.tags):
            return False
        wanted = [Path(d).as_posix().rstrip("/") for d in self.defends]
        if wanted:
            defended = Path(entry.defends).as_posix()
            if not any(defended == w or defended.startswith(w + "/") for w in wanted):
                return False
        if self.changed is None or self.changed.selects(entry.defends):
            return True
        return sources is not None and any(self.changed.touches(p) for p in sources())

    def balanced(self, case_ids: Iterable[str], results_dir: Path | None) -> Selection:
        """This selection with its shards balanced over ``case_ids`` (every case the
        filters kept) by the durations of the newest results file in ``results_dir``."""
        if self.part is None:
            return self
        plan = shard.plan(case_ids, self.part[1], results_dir)
        return dataclasses.replace(self, plan=plan)

    def in_shard(self, entry: CaseEntry | None) -> bool:
        """Whether the case belongs to this run's shard (every case without a shard)."""
        if entry is None or self.part is None:
            return True
        k, total = self.part
        if self.plan is not None:
            return self.plan.shard_of(entry.id, total) == k
        return shard.in_shard(entry.id, self.part)


def suite_selection(
    runs: Iterable[tuple[str, bool]],
    *,
    arguments: Sequence[str] = (),
    paths: Sequence[str] = (),
    base: Path,
    roots: Iterable[Path] = (),
    eval_paths: Sequence[Path] = (),
    ignored: Sequence[Path] = (),
    ignored_globs: Sequence[str] = (),
    last_failed: bool = False,
) -> SuiteSelection:
    """What part of the suite a run selected.

    ``runs``: every eval run collected, as (its case, whether it was selected);
    ``paths``: pytest's path arguments (node ids too), relative to ``base``, the
    directory pytest started in; ``roots``: the evals roots the collected case files
    came from; ``eval_paths``: the configured ones, which a whole suite reaches too;
    ``ignored``: ``--ignore`` paths; ``ignored_globs``: ``--ignore-glob`` patterns (as
    pytest matches them: against absolute paths, relative ones made absolute from
    ``base``); ``last_failed``: ``--lf`` narrowed the collection
    to what failed last time.
    """
    selected: dict[str, bool] = {}
    collected_runs = deselected_runs = 0
    for case, chosen in runs:
        collected_runs += 1
        deselected_runs += not chosen
        selected[case] = selected.get(case, False) or chosen
    uncollected = _unreached(paths, base, roots, eval_paths, ignored)
    uncollected += _globbed(ignored_globs, base, roots, eval_paths)
    if last_failed:
        uncollected.append("--lf: only what failed last time")
    return SuiteSelection(
        arguments=tuple(arguments),
        collected=len(selected),
        deselected=sum(1 for chosen in selected.values() if not chosen),
        collected_runs=collected_runs,
        deselected_runs=deselected_runs,
        uncollected=tuple(uncollected),
    )


def selecting_arguments(
    paths: Sequence[str], option: Callable[[str], Any], *, last_failed: bool
) -> list[str]:
    """The selecting arguments of a run, as given on the command line (or in
    ``addopts``): ``paths``, ``-k``, ``-m`` and the others that leave cases out, each
    read by its ``dest`` with ``option``; ``last_failed``: ``--lf`` narrows the run."""
    out: list[str] = [*paths]
    for flag, dest in (("-k", "keyword"), ("-m", "markexpr")):
        value = option(dest)
        if value:
            out += [flag, str(value)]
    for flag, dest in (
        ("--deselect", "deselect"),
        ("--ignore", "ignore"),
        ("--ignore-glob", "ignore_glob"),
        ("--eval-tags", "eval_tags"),
        ("--eval-defends", "eval_defends"),
    ):
        for value in option(dest) or []:
            out += [flag, str(value)]
    changed = option("eval_changed")
    if changed is not None:
        out.append(f"--eval-changed={changed}" if changed else "--eval-changed")
    part = option("eval_shard")
    if part is not None:
        out += ["--eval-shard", f"{part[0]}/{part[1]}"]
    if last_failed:
        out.append("--lf")
    if option("stepwise"):
        out.append("--sw")
    maxfail = option("maxfail") or 0
    if maxfail:
        out.append("-x" if maxfail == 1 else f"--maxfail={maxfail}")
    return out


def _unreached(
    paths: Sequence[str],
    base: Path,
    roots: Iterable[Path],
    eval_paths: Sequence[Path],
    ignored: Sequence[Path],
) -> list[str]:
    """Phrases for what the paths leave out of the evals roots: a root that only a
    file, a subdirectory or a node id below it reached; an ``eval_paths`` directory
    that none reached; an ``--ignore`` path in or above a root."""
    given = [_target(text, base) for text in paths]
    configured = {_absolute(base, p) for p in eval_paths if p.is_dir()}
    every = sorted({_absolute(base, r) for r in roots} | configured)
    out: list[str] = []
    for root in every:
        if any(not node and _within(root, path) for path, node, _ in given):
            continue
        inside = [text for path, _, text in given if _within(path, root)]
        if inside:
            out.append(f"only {', '.join(inside)} of {_show(root, base)}/")
        elif root in configured:
            out.append(f"{_show(root, base)}/ (eval_paths) is not among the paths")
    for path in (_absolute(base, p) for p in ignored):
        if any(_within(path, root) or _within(root, path) for root in every):
            out.append(f"{_show(path, base)} ignored (--ignore)")
    return out


def _globbed(
    globs: Sequence[str], base: Path, roots: Iterable[Path], eval_paths: Sequence[Path]
) -> list[str]:
    """Phrases for the ``--ignore-glob`` patterns that match a file or directory in an
    evals root: pytest left it out, so the run is not the whole suite."""
    if not globs:
        return []
    every = sorted({_absolute(base, r) for r in roots} | {_absolute(base, p) for p in eval_paths})
    out: list[str] = []
    for glob in globs:
        pattern = _absolute(base, glob)
        if any(_matches_below(root, pattern) for root in every):
            out.append(f"{glob} ignored (--ignore-glob)")
    return out


def _matches_below(root: str, pattern: str) -> bool:
    """Whether ``pattern`` matches ``root`` or a path below it."""
    if fnmatch.fnmatch(root, pattern):
        return True
    for directory, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            if fnmatch.fnmatch(os.path.join(directory, name), pattern):
                return True
    return False


def _target(text: str, base: Path) -> tuple[str, bool, str]:
    """A path argument as (absolute path, whether it names tests in a file, as shown:
    as given, or relative to ``base`` when given absolute)."""
    path, *names = text.partition("[")[0].split("::")
    absolute = _absolute(base, Path(path))
    if os.path.isabs(path):
        text = _show(absolute, base) + text[len(path) :]
    return absolute, bool(names), text


def _absolute(base: Path, path: Path | str) -> str:
    # As pytest makes them absolute: normalised, symbolic links left as they are.
    return os.path.normpath(os.path.join(base, path))


def _within(path: str, directory: str) -> bool:
    """Whether ``path`` is ``directory`` or below it."""
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _show(path: str, base: Path) -> str:
    try:
        shown = os.path.relpath(path, base)
    except ValueError:
        return path
    return Path(shown).as_posix()


@dataclass(frozen=True)
class WorkerOutput:
    """What an xdist worker hands back to the controller, which collects nothing itself,
    as one JSON text (:meth:`to_json`): what part of the suite it selected, the broken
    case files it set aside, and the perturbation classes that made no item of a
    selected case. Every worker collects the same, so any one that finishes will do."""

    selection: dict[str, Any]
    set_aside: tuple[str, ...] = ()
    perturb_gaps: tuple[tuple[str, str, str], ...] = ()

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> WorkerOutput:
        data: dict[str, Any] = json.loads(text)
        return cls(
            selection=data["selection"],
            set_aside=tuple(data["set_aside"]),
            perturb_gaps=tuple((c, k, w) for c, k, w in data["perturb_gaps"]),
        )
