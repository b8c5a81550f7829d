"""session/selection.py: which cases --eval-tags, --eval-defends, --eval-changed and
--eval-shard keep."""

from __future__ import annotations

from pathlib import Path

from pytest_evalcases.cases.parsecache import CaseEntry
from pytest_evalcases.results.files import ResultsSettings
from pytest_evalcases.session import shard
from pytest_evalcases.session.changed import ChangedFiles
from pytest_evalcases.session.selection import Selection
from pytest_evalcases.session.state import Settings


def entry(case_id: str, defends: str = "AGENTS.md", tags: tuple[str, ...] = ()) -> CaseEntry:
    return CaseEntry(case_id, 0, "normal", tags, defends)


def test_no_option_keeps_every_case() -> None:
    selection = Selection()

    assert selection.selects(entry("a")) is True
    assert selection.in_shard(entry("a")) is True


def test_normal_tests_are_always_kept() -> None:
    selection = Selection(tags=frozenset({"x"}), defends=("nowhere",), part=(2, 2))

    assert selection.selects(None) is True
    assert selection.in_shard(None) is True


def test_tags_keep_cases_carrying_one_of_them() -> None:
    selection = Selection(tags=frozenset({"deploy", "db"}))

    assert selection.selects(entry("a", tags=("db", "slow"))) is True
    assert selection.selects(entry("b", tags=("slow",))) is False
    assert selection.selects(entry("c")) is False


def test_defends_keeps_the_path_and_what_is_below_it() -> None:
    selection = Selection(defends=("skills/", "AGENTS.md"))

    assert selection.selects(entry("a", defends="AGENTS.md")) is True
    assert selection.selects(entry("b", defends="skills/deploy/SKILL.md")) is True
    assert selection.selects(entry("c", defends="skills")) is True
    assert selection.selects(entry("d", defends="skillset/x.md")) is False
    assert selection.selects(entry("e", defends="CLAUDE.md")) is False


def test_changed_keeps_cases_defending_a_changed_file() -> None:
    changed = ChangedFiles(ref="main", base="abc", paths=("skills/deploy/SKILL.md",))
    selection = Selection(changed=changed)

    assert selection.selects(entry("a", defends="skills")) is True
    assert selection.selects(entry("b", defends="AGENTS.md")) is False
    assert selection.selects(entry("c", defends="")) is False


def test_every_filter_must_hold() -> None:
    selection = Selection(tags=frozenset({"db"}), defends=("AGENTS.md",))

    assert selection.selects(entry("a", "AGENTS.md", ("db",))) is True
    assert selection.selects(entry("b", "AGENTS.md", ("web",))) is False
    assert selection.selects(entry("c", "CLAUDE.md", ("db",))) is False


def test_shards_split_the_cases_by_id_into_disjoint_parts() -> None:
    ids = [f"case-{n}" for n in range(40)]
    parts = [Selection(part=(k, 3)) for k in (1, 2, 3)]

    kept = [[i for i in ids if p.in_shard(entry(i))] for p in parts]

    assert sorted(i for part in kept for i in part) == sorted(ids)
    assert all(kept)
    assert kept[0] == [i for i in ids if shard.shard_of(i, 3) == 1]


def test_of_reads_the_settings() -> None:
    changed = ChangedFiles(ref="HEAD", base=None, paths=())
    settings = Settings(
        rootdir=Path("/r"),
        tags=frozenset({"t"}),
        defends=("d",),
        changed=changed,
        results=ResultsSettings(shard=(1, 4)),
    )

    assert Selection.of(settings) == Selection(frozenset({"t"}), ("d",), changed, (1, 4))


def test_shards_balance_longest_first_to_the_least_loaded_shard() -> None:
    from pytest_evalcases.session.shard import balance

    durations = {"a": 10.0, "b": 6.0, "c": 5.0, "d": 4.0, "e": 1.0}
    # a→1 (10), b→2 (6), c→2 (11), d→1 (14), e→2 (12)
    assert balance("edcba", durations, 2) == {"a": 1, "b": 2, "c": 2, "d": 1, "e": 2}
    # Collection order does not matter; an unknown case counts as the median (5 s), and
    # equal durations go by id.
    assert balance(["x", "a", "b"], {"a": 10.0, "b": 5.0}, 2) == balance(
        ["b", "a", "x"], {"a": 10.0, "b": 5.0}, 2
    )
    assert balance(["x", "a", "b"], {"a": 10.0, "b": 5.0}, 2) == {"a": 1, "b": 2, "x": 2}
    # More shards than cases: some shards are empty, none gets two.
    assert sorted(balance("ab", {}, 4).values()) == [1, 2]
