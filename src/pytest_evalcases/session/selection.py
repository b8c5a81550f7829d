"""Which collected cases run: ``--eval-tags``, ``--eval-defends``, ``--eval-changed`` and
``--eval-shard`` (docs/reference.md). A plain decision per case; the plugin reports the
others deselected, as ``-k`` does.

Items that are not eval cases (normal tests) are passed as ``None`` and always kept:
they run in every shard, as without the options.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from pytest_evalcases.cases.parsecache import CaseEntry
from pytest_evalcases.session import shard
from pytest_evalcases.session.changed import ChangedFiles
from pytest_evalcases.session.state import Settings


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
