"""The demo suites under example_cases/ behave as example_cases/README.md says."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "example_cases"

REGRESSED = [
    ("01-service-architecture", "service-uses-class"),
    ("01-service-architecture", "service-validates-in-service-layer"),
    ("02-discount-codes", "discount-acceptance-tests-marked"),
    ("03-order-refunds", "refund-acceptance-tests-marked"),
]


def copy_example(pytester: pytest.Pytester, name: str) -> Path:
    """Copy ``example_cases/<name>`` into the pytester directory (without run leftovers)."""
    dest = pytester.path / name
    shutil.copytree(
        EXAMPLES / name,
        dest,
        ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", "results"),
    )
    return dest


def tree_digest(root: Path) -> str:
    """A hash of every path, file mode and file content below ``root``."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        digest.update(f"{rel}\0{path.lstat().st_mode:o}\0".encode())
        if path.is_file() and not path.is_symlink():
            digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def test_drift_demo_scores_9_of_9_then_5_of_9(pytester: pytest.Pytester) -> None:
    copy_example(pytester, "drift-demo")

    result = pytester.runpytest("drift-demo", "-p", "no:cacheprovider")

    out = result.stdout.str()
    result.assert_outcomes(passed=3, failed=3)
    assert "eval gate" in out
    assert "Score: 9/9 (100%)" in out
    assert "Score: 5/9 (56%)" in out
    for case_id, check_id in REGRESSED:
        assert f"regressed: {case_id} / {check_id}" in out
    assert len(re.findall(r"regressed: \S+ / \S+", out)) == len(REGRESSED)
    assert "BLOCKED" in out
    assert result.ret == 1
    # Snapshots are graded: no agent ran, so no wall time is printed for either variant.
    assert "  wall " not in out


def test_drift_demo_does_not_collect_snapshot_code(pytester: pytest.Pytester) -> None:
    copy_example(pytester, "drift-demo")

    result = pytester.runpytest("drift-demo", "-p", "no:cacheprovider", "--collect-only", "-q")

    out = result.stdout.str()
    assert "snapshots/" not in out
    assert "test_order_service" not in out
    for task in ("01-service-architecture", "02-discount-codes", "03-order-refunds"):
        assert task in out


def test_seed_suite_shows_every_outcome(pytester: pytest.Pytester) -> None:
    copy_example(pytester, "seed-suite")

    result = pytester.runpytest("seed-suite", "-p", "no:cacheprovider")

    out = result.stdout.str()
    result.assert_outcomes(passed=3, failed=1, xfailed=1, errors=1, skipped=1)
    assert re.search(r"FAILED .*release-commit-no-trailer", out)
    assert re.search(r"ERROR .*changelog-entry", out)
    # The error carries the agent's own message, not a check failure.
    assert "authentication_failed" in out
    assert "set ANTHROPIC_API_KEY" in out
    assert "eval gate: BLOCKED" in out
    assert result.ret == 1


def test_seed_suite_leaves_fixtures_untouched(pytester: pytest.Pytester) -> None:
    suite = copy_example(pytester, "seed-suite")
    fixtures = suite / "evals" / "fixtures"
    before = tree_digest(fixtures)
    assert before == tree_digest(EXAMPLES / "seed-suite" / "evals" / "fixtures")

    result = pytester.runpytest("seed-suite", "-p", "no:cacheprovider")

    result.assert_outcomes(passed=3, failed=1, xfailed=1, errors=1, skipped=1)
    assert tree_digest(fixtures) == before
    assert not (fixtures / "repo-client" / ".git").exists()


def test_drift_is_one_added_line() -> None:
    demo = EXAMPLES / "drift-demo"
    before = (demo / "AGENTS.md").read_text(encoding="utf-8").splitlines()
    after = (demo / "AGENTS.after-drift.md").read_text(encoding="utf-8").splitlines()

    added = [line for line in after if line not in before]
    assert added == ["- Prefer functions over classes for utility code."]
    assert [line for line in after if line not in added] == before
