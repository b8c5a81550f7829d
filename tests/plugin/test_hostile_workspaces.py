"""What an agent can leave for the checks: a pattern that never ends, symlink cycles and
links out of the workspace, an answer that points outside, a deleted workspace, files it
cannot read (docs/case-format.md, "Time limits" and "Paths, globs and symlinks").

Each ends as one clear error or check failure in the report and the results file, with
no traceback, and the neighbour case still passes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.results import only_results
from tests.helpers.suite import SuiteBuilder, write

#: The deadline of checks in these suites, set by their conftest (the default is 30 s).
CHECK_TIMEOUT = 2

#: Every process of the session, the xdist workers' included, reads the conftest.
SHORT_DEADLINE = f"""
from pytest_evalcases import defaults

defaults.CHECK_TIMEOUT = {CHECK_TIMEOUT}.0
"""

#: Answers 32 ``a`` and a ``!`` (minutes of work for ``(a+)+$``), leaves symlink cycles
#: and links out of the workspace, or says ok, by the case it runs.
HOSTILE_AGENT = """
import os, pathlib, sys
case = os.environ["EVALCASES_CASE_ID"]
if case == "backtracks":
    print("a" * 32 + "!")
elif case == "links":
    pathlib.Path("src").mkdir()
    pathlib.Path("src/app.py").write_text("print('hello')\\n")
    for name, target in [("a", "."), ("b", "."), ("src/up", ".."), ("r", "/"),
                         ("etc", sys.argv[1] + "/outside")]:
        os.symlink(target, name)
    print("linked")
else:
    print("ok")
"""

HOSTILE_CASES = {
    "backtracks": """
        id: backtracks
        defends: AGENTS.md
        prompt: answer
        checks:
          - type: output_matches
            pattern: "(a+)+$"
        """,
    "links": """
        id: links
        defends: AGENTS.md
        prompt: link
        checks:
          - type: file_absent
            path: "**/*.conf"
          - type: file_exists
            path: "**/*.py"
          - type: file_not_matches
            path: "**/*"
            pattern: hunter2
        """,
    "ok": """
        id: ok
        defends: AGENTS.md
        prompt: answer
        checks: [{type: output_matches, pattern: ok}]
        """,
}


@pytest.fixture
def make_suite(make_suite: SuiteBuilder) -> SuiteBuilder:
    return make_suite.with_ini("eval_agent = command\neval_timeout = 60\n")


@pytest.mark.slow
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_runaway_pattern_and_symlink_cycles_end(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, workers: list[str]
) -> None:
    root = make_suite(
        HOSTILE_AGENT,
        HOSTILE_CASES,
        fixtures={
            "conftest.py": SHORT_DEADLINE,
            "outside/secret.conf": "password = hunter2\n",
        },
        command="{python} {rootdir}/agent.py {rootdir} {prompt}",
    )

    # Without the deadline and the walk that never enters a symlinked directory, this
    # session runs for hours.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *workers, timeout=300)

    result.assert_outcomes(passed=2, errors=1)
    out = result.stdout.str()
    assert "case backtracks (normal) defends AGENTS.md: no verdict (check-timeout)" in out
    assert (
        f"the output_matches check did not finish within {CHECK_TIMEOUT} s while searching "
        "'(a+)+$' in the final answer"
    ) in out
    assert "Traceback" not in out
    assert "hunter2" not in out
    records = {record["id"]: record for record in only_results(root)["cases"]}
    runaway = records["backtracks"]
    assert runaway["error_kind"] == "check-timeout"
    assert runaway["error"].startswith("the output_matches check did not finish within 2 s")
    assert Path(runaway["workspace"]).is_dir()
    assert [check["message"] for check in records["links"]["checks"]] == [
        "**/*.conf: absent",
        "**/*.py: 1 file(s) found",
        "**/*: pattern 'hunter2' absent",
    ]
    assert records["ok"]["outcome"] == "passed"


def test_a_graded_answer_linked_outside_is_an_error_and_not_read(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\n")
    write(pytester.path / "outside.txt", "token SECRET-4242\n")
    answer = pytester.path / "graded" / "leaks" / ".evalcases" / "output.txt"
    answer.parent.mkdir(parents=True)
    answer.symlink_to(pytester.path / "outside.txt")
    write(pytester.path / "graded" / "fine" / ".evalcases" / "output.txt", "all done\n")
    for case_id in ("leaks", "fine"):
        write(
            pytester.path / "evals" / f"{case_id}.yaml",
            f"id: {case_id}\ndefends: AGENTS.md\nchecks:\n"
            "  - type: output_matches\n    pattern: '(?s).+'\n",
        )

    result = pytester.runpytest_subprocess(
        "--eval-workspace", "graded", "-p", "no:cacheprovider", timeout=120
    )

    result.assert_outcomes(passed=1, errors=1)
    out = result.stdout.str()
    assert "case leaks (normal) defends AGENTS.md: no verdict (path)" in out
    assert (
        "the graded final answer '.evalcases/output.txt' resolves outside the workspace "
        f"(to {pytester.path / 'outside.txt'}); not read"
    ) in out
    assert "SECRET-4242" not in out
    assert "Traceback" not in out
    leaks = {r["id"]: r for r in only_results(pytester.path)["cases"]}["leaks"]
    assert leaks["error_kind"] == "path"
    assert "SECRET-4242" not in json.dumps(leaks)


def test_an_agent_that_deletes_its_workspace(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite(
        """
        import os, shutil, sys
        if sys.argv[1] == "vanish":
            shutil.rmtree(os.getcwd())
        print("done")
        """,
        gone="""
        id: gone
        defends: AGENTS.md
        prompt: vanish
        checks:
          - type: file_matches
            path: answer.txt
            pattern: done
          - type: command_succeeds
            command: test -d .
        """,
        ok="""
        id: ok
        defends: AGENTS.md
        prompt: stay
        checks: [{type: command_succeeds, command: test -d .}]
        """,
        # In the sandbox the workspace is a mount point, which no agent can remove.
        ini="eval_sandbox = none\n",
    )

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=120)

    result.assert_outcomes(passed=1, errors=1)
    out = result.stdout.str()
    assert "case gone (normal) defends AGENTS.md: no verdict (workspace)" in out
    assert "Traceback" not in out
    gone = {r["id"]: r for r in only_results(root)["cases"]}["gone"]
    assert gone["error_kind"] == "workspace"
    assert gone["error"] == (
        f"`test -d .` has no workspace to run in: {gone['workspace']} no longer exists "
        "(the agent deleted it?), so no command check can reach a verdict"
    )
    assert gone["error"] in out
    assert not Path(gone["workspace"]).exists()


#: An agent that leaves a file it wrote unreadable (a mode of 000).
LOCKING_AGENT = "sh -c 'echo \"class App: pass\" > app.py; chmod 000 app.py; echo done'"


def as_unprivileged_user(root: Path) -> list[str]:
    """The command prefix that runs pytest as ``nobody`` when the tests run as root (for
    whom a mode of 000 stops no read), else as the user running the tests; ``root``
    becomes theirs."""
    if os.geteuid() != 0:
        return []
    for path in [root, *root.rglob("*")]:
        os.chown(path, 65534, 65534, follow_symlinks=False)
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def test_files_the_agent_made_unreadable_fail_their_checks() -> None:
    # Not in pytester's directory: the unprivileged user could not reach it.
    root = Path(tempfile.mkdtemp(prefix="evalcases-unreadable-"))
    try:
        root.chmod(0o755)
        write(
            root / "pytest.ini",
            f"[pytest]\neval_agent = command\neval_agent_command = {LOCKING_AGENT}\n"
            "eval_sandbox = none\n",
        )
        write(
            root / "evals" / "locked.yaml",
            "id: locked\ndefends: AGENTS.md\nprompt: go\nchecks:\n"
            "  - type: file_matches\n    path: app.py\n    pattern: App\n",
        )
        write(
            root / "evals" / "fine.yaml",
            "id: fine\ndefends: AGENTS.md\nprompt: go\nchecks: [{type: output_matches, "
            "pattern: done}]\n",
        )
        prefix = as_unprivileged_user(root)
        env = {**os.environ, "HOME": str(root), "XDG_CACHE_HOME": str(root / ".cache")}
        env.pop("PYTEST_ADDOPTS", None)
        result = subprocess.run(
            [
                *prefix,
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "-p",
                "no:randomly",
                "--basetemp",
                str(root / "tmp"),
            ],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        out = result.stdout
        assert "1 failed, 1 passed" in out, out + result.stderr
        assert (
            "app.py: cannot be read (Permission denied); what a check cannot read fails it"
        ) in out
        assert "Traceback" not in out
        records = only_results(root)["cases"]
        locked: dict[str, Any] = {r["id"]: r for r in records}["locked"]
        assert locked["outcome"] == "failed"
        assert locked["workspace"]
        assert locked["checks"][0]["passed"] is False
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_link_the_agent_made_out_of_the_workspace_fails_the_check_that_meets_it(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    outside = pytester.path / "outside"
    root = make_suite(
        """
        import os, pathlib, sys
        outside = pathlib.Path(sys.argv[1]) / "outside"
        pathlib.Path("done.txt").write_text("done\\n")
        os.symlink(outside / "creds.txt", "report.txt")
        os.symlink(outside, "etc")
        print("blocked the deploy")
        """,
        blocked="""
        id: blocked
        defends: AGENTS.md
        prompt: deploy
        checks:
          - {id: reported, type: file_matches, path: report.txt, pattern: blocked}
          - {id: no-conf, type: file_absent, path: "etc/*.conf"}
          - {id: done, type: file_exists, path: done.txt}
          - {id: answered, type: output_matches, pattern: blocked}
        """,
        fixtures={"outside/creds.txt": "blocked hunter2\n", "outside/a.conf": "x = 1\n"},
        command="{python} {rootdir}/agent.py {rootdir} {prompt}",
    )

    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--eval-retry-errors", "1", timeout=120
    )

    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "hunter2" not in out
    assert "Traceback" not in out
    (record,) = only_results(root)["cases"]
    assert record["outcome"] == "failed"
    assert record["attempts"] == 1
    leaving = "is a symlink leaving the workspace"
    assert [(c["id"], c["passed"], c["message"]) for c in record["checks"]] == [
        ("reported", False, f"report.txt {leaving} (to {outside / 'creds.txt'}): not read"),
        ("no-conf", False, f"etc {leaving} (to {outside}): not read"),
        ("done", True, "done.txt: 1 file(s) found"),
        ("answered", True, "pattern 'blocked' found: 'blocked'"),
    ]
    assert "FAILED reported [file_matches]: report.txt is a symlink leaving the workspace" in out
