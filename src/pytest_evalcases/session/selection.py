"""Which collected cases run: ``--eval-tags``, ``--eval-defends``, ``--eval-changed`` and
``--eval-shard`` (docs/reference.md). A plain decision per case; the plugin reports the
others deselected, as ``-k`` does.

Items that are not eval cases (normal tests) are passed as ``None`` and always kept:
they run in every shard, as without the options.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_evalcases.cases.parsecache import CaseEntry
from pytest_evalcases.session import shard
from pytest_evalcases.session.state import Settings

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

    def in_shard(self, entry: CaseEntry | None) -> bool:
        """Whether the case belongs to this run's shard (every case without a shard)."""
        return entry is None or self.part is None or shard.in_shard(entry.id, self.part)
