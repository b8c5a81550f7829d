"""session/selection.py: which cases --eval-tags, --eval-defends, --eval-changed and
--eval-shard keep."""

from __future__ import annotations

from pathlib import Path

from pytest_evalcases.cases.parsecache import CaseEntry
from pytest_evalcases.results.writer import ResultsSettings
from pytest_evalcases.session import shard
from pytest_evalcases.session.changed import ChangedFiles
from pytest_evalcases.session.selection import Selection, selecting_arguments, suite_selection
from pytest_evalcases.session.settings import Settings


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


ROOT = Path("/repo/evals")


def test_suite_selection_counts_cases_and_runs() -> None:
    runs = [("a", True), ("a", False), ("b", False), ("b", False), ("c", True)]

    found = suite_selection(runs, arguments=["-k", "x"], base=Path("/repo"))

    assert (found.collected, found.deselected) == (3, 1)
    assert (found.collected_runs, found.deselected_runs) == (5, 3)
    assert found.whole is False
    assert found.describe() == "2 of 3 cases selected (-k x)"


def test_a_run_is_whole_when_nothing_was_deselected_or_left_uncollected() -> None:
    found = suite_selection([("a", True)], paths=["evals"], base=Path("/repo"), roots=[ROOT])

    assert found.whole is True
    assert found.uncollected == ()
    assert found.describe() == "the whole suite"


def test_paths_below_an_evals_root_leave_part_of_it_uncollected(tmp_path: Path) -> None:
    agent_evals = tmp_path / "agent-evals"
    agent_evals.mkdir()

    def uncollected(*paths: str, ignored: tuple[str, ...] = ()) -> tuple[str, ...]:
        return suite_selection(
            [],
            paths=paths,
            base=tmp_path,
            roots=[tmp_path / "evals"],
            eval_paths=[agent_evals],
            ignored=[Path(p) for p in ignored],
        ).uncollected

    assert uncollected(".") == ()
    assert uncollected(str(tmp_path)) == ()
    assert uncollected("evals/", "agent-evals") == ()
    assert uncollected("evals/db", "evals/a.yaml::a[x]", "agent-evals") == (
        "only evals/db, evals/a.yaml::a[x] of evals/",
    )
    # A node id never covers its root; the directory beside it does.
    assert uncollected("evals", "evals/a.yaml::a", "agent-evals") == ()
    assert uncollected(str(tmp_path / "evals" / "db"), "agent-evals") == (
        "only evals/db of evals/",
    )
    assert uncollected("evals") == ("agent-evals/ (eval_paths) is not among the paths",)
    assert uncollected(".", ignored=("evals/db",)) == ("evals/db ignored (--ignore)",)
    assert uncollected(".", ignored=("tests",)) == ()


def test_an_ignore_glob_matching_a_case_file_leaves_the_suite_partial(tmp_path: Path) -> None:
    (tmp_path / "evals" / "db").mkdir(parents=True)
    (tmp_path / "evals" / "db" / "slow-migration.yaml").write_text("id: x\n")
    (tmp_path / "tests").mkdir()

    def uncollected(*globs: str) -> tuple[str, ...]:
        return suite_selection(
            [], paths=["."], base=tmp_path, roots=[tmp_path / "evals"], ignored_globs=globs
        ).uncollected

    assert uncollected("*slow*") == ("*slow* ignored (--ignore-glob)",)
    assert uncollected("evals/db/*") == ("evals/db/* ignored (--ignore-glob)",)
    assert uncollected("tests/*", "*.py") == ()


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


def test_the_selecting_arguments_are_said_as_given() -> None:
    options: dict[str, object] = {
        "keyword": "deploy",
        "deselect": ["evals/a.yaml::x"],
        "eval_changed": "",
        "eval_shard": (2, 4),
        "stepwise": True,
        "maxfail": 1,
    }

    said = selecting_arguments(["evals"], options.get, last_failed=True)

    assert said == [
        *("evals", "-k", "deploy", "--deselect", "evals/a.yaml::x", "--eval-changed"),
        *("--eval-shard", "2/4", "--lf", "--sw", "-x"),
    ]
