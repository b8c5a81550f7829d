"""Pins (docs/results.md, "Pins"), redaction of secrets, and the pytest-json-report metadata."""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_evalcases.redact import MARK, redact
from pytest_evalcases.session.pins import permission_args
from tests.helpers.results import only_results, results_files, steer
from tests.helpers.suite import SuiteBuilder

FAKE_KEY = "sk-ant-api03-test-1234567890abcdefABCDEF1234567890"
PLAIN_TOKEN = "plain0value9not8shaped7like6a5key"


@pytest.mark.slow
def test_secrets_never_reach_files_or_the_terminal(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("MY_SERVICE_TOKEN", PLAIN_TOKEN)
    root = make_suite.steered(["leaks", "crashes", "advises"], severities={"advises": "advisory"})
    # Checks quote the answer: a failing output check would print the secret.
    steer(root, "fail", "leaks")
    steer(root, "fail", "advises")
    steer(root, "crash", "crashes")

    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "-rA",
        "--json-report",
        "--json-report-file=report.json",
        "--junitxml=junit.xml",
    )

    result.assert_outcomes(failed=1, errors=1, xfailed=1)
    written = {
        "results": only_results(root),
        "json-report": json.loads((root / "report.json").read_text("utf-8")),
    }
    texts = {
        "terminal": result.stdout.str() + result.stderr.str(),
        "junitxml": (root / "junit.xml").read_text("utf-8"),
        **{name: json.dumps(doc) for name, doc in written.items()},
    }
    for name, text in texts.items():
        assert FAKE_KEY not in text, name
        assert FAKE_KEY[:20] not in text, name
        assert PLAIN_TOKEN not in text, name
    # The runs still report what happened, with the secret masked.
    assert MARK in texts["terminal"]
    assert "wrong answer; I used the key" in texts["results"]
    assert "crashed while using the key" in texts["results"]


#: Quoting escapes its backslash and quotes: redacted after quoting, it got through.
PASSWORD = "p@ss\\w0rd\"Q'zz!9"
#: Forty characters, as an AWS secret key: cut by a quote or a tail, a piece got through.
AWS_SECRET = "q8Zr2LxW0vTn5KpY7bHc+Md3FsJg9AeU/Ro1QiVy"

#: Answers with both secrets, the key where a check's 160-character quote cuts it (28
#: characters before the cut); writes them into notes.txt and, with the key where the
#: 300-character tail of a command's output starts (20 characters after the cut), into
#: out.txt; on the prompt "crash", fails with them on stderr, the key where the
#: 600-character tail of an error starts.
LEAKING_AGENT = r"""
import os, pathlib, sys
pw, key = os.environ["DB_PASSWORD"], os.environ["AWS_SECRET_ACCESS_KEY"]
if sys.argv[1].startswith("crash"):
    sys.stderr.write("connecting with " + pw + " and " + key + "y" * 580 + "\n")
    sys.exit(1)
head = "The password is " + pw + "; "
print(head + "x" * (132 - len(head)) + key + " and that is all.")
pathlib.Path("notes.txt").write_text("password: " + pw + " key: " + key + "\n")
pathlib.Path("out.txt").write_text(pw + " " + key + "y" * 280)
"""


def _decodings(text: str) -> set[str]:
    """``text`` and what undoing XML/HTML escapes and backslash escapes (JSON's and
    ``repr``'s) leaves of it, in any order, up to three times."""
    unescapes = (html.unescape, lambda t: re.sub(r"\\(.)", r"\1", t))
    seen = {text}
    for _ in range(3):
        seen |= {undo(t) for t in seen for undo in unescapes}
    return seen


def _pieces_in(text: str, secret: str) -> set[str]:
    """The pieces of ``secret`` of 8 or more characters found in ``text``, however
    escaped (every longer piece holds one of 8)."""
    pieces = {secret[i : i + 8] for i in range(len(secret) - 7)}
    return {piece for decoded in _decodings(text) for piece in pieces if piece in decoded}


# Under xdist the records are made on the workers and the files on the controller.
@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_no_piece_of_a_secret_reaches_any_output_however_quoted_or_cut(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    workers: tuple[str, ...],
) -> None:
    monkeypatch.setenv("DB_PASSWORD", PASSWORD)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
    root = make_suite(
        LEAKING_AGENT,
        answers="""
        id: answers
        defends: AGENTS.md
        prompt: answer
        checks:
          - {type: output_matches, pattern: "^never"}
          - {type: file_not_matches, path: notes.txt, pattern: password}
          - {type: command_succeeds, command: "cat out.txt; exit 1"}
        """,
        crashes="""
        id: crashes
        defends: AGENTS.md
        prompt: crash
        checks:
          - {type: output_matches, pattern: "^never"}
        """,
        fixtures={"AGENTS.md": "Never print a secret.\n"},
    )

    result = pytester.runpytest(
        *workers,
        "-p",
        "no:cacheprovider",
        "-rA",
        "--junitxml=junit.xml",
        "--json-report",
        "--json-report-file=report.json",
        "--eval-html=report.html",
    )

    result.assert_outcomes(failed=1, errors=1)
    (results,) = results_files(root)
    outputs = {
        "terminal": result.stdout.str() + result.stderr.str(),
        "junitxml": (root / "junit.xml").read_text("utf-8"),
        "json-report": (root / "report.json").read_text("utf-8"),
        "results": results.read_text("utf-8"),
        "eval-html": (root / "report.html").read_text("utf-8"),
    }
    leaks = {
        name: _pieces_in(text, PASSWORD) | _pieces_in(text, AWS_SECRET)
        for name, text in outputs.items()
    }
    assert leaks == {name: set() for name in outputs}
    # Every leak was there to be redacted, and the runs still say what happened.
    terminal = outputs["terminal"]
    assert "pattern '^never' not found in the final answer: 'The password is [REDACTED]" in terminal
    assert "notes.txt:1: pattern 'password' must not match: 'password: [REDACTED]" in terminal
    assert "exit 1` failed: exit status 1; output: '…[REDACTED] [REDACTED]yyy" in terminal
    assert "agent command exited with status 1: …[REDACTED] and [REDACTED]yyy" in terminal


@pytest.mark.parametrize(
    "secret",
    [
        "sk-ant-api03-abcdefghijklmnop1234",
        "sk-proj-abcdefghijklmnopqrstuv123456",
        "AIzaSyA1234567890abcdefghijklmnopqrstu",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        "xoxb-123456789012-abcdefghijkl",
        "AKIAIOSFODNN7EXAMPLE",
    ],
)
def test_credential_shapes_are_redacted(secret: str) -> None:
    text = f"the agent said: export TOKEN_THING {secret} and went on"
    cleaned = redact(text, env={})
    assert secret not in cleaned
    assert cleaned.startswith("the agent said: export TOKEN_THING ")
    assert cleaned.endswith(" and went on")


def test_assignments_and_bearer_values_are_redacted_but_words_stay() -> None:
    text = (
        "curl -H 'Authorization: Bearer abcdef0123456789abcdef' "
        "?api_key=QUJDREVGR0hJSktMTU5PUFFSU1RVVg== password: hunter2 token=short"
    )
    cleaned = redact(text, env={})
    assert "abcdef0123456789abcdef" not in cleaned
    assert "QUJDREVGR0hJSktMTU5PUFFSU1RVVg" not in cleaned
    assert "Bearer [REDACTED]" in cleaned
    assert "api_key=[REDACTED]" in cleaned
    # Short values are words, not credentials.
    assert "hunter2" in cleaned
    assert "token=short" in cleaned


def test_values_of_secret_environment_variables_are_redacted() -> None:
    env = {"DB_PASSWORD": "correct horse battery", "HOME": "/home/someone", "API_KEY": "1"}
    cleaned = redact("connect with correct horse battery from /home/someone as 1", env=env)
    assert cleaned == "connect with [REDACTED] from /home/someone as 1"


def test_permission_arguments_are_picked_from_the_agent_args() -> None:
    args = [
        "--model",
        "x",
        "--allowedTools",
        "Bash(git:*)",
        "Edit",
        "--permission-mode",
        "acceptEdits",
        "--verbose",
        "--dangerously-skip-permissions",
        "-s",
        "workspace-write",
        "--approval-mode=yolo",
    ]
    assert permission_args(args) == [
        "--allowedTools",
        "Bash(git:*)",
        "Edit",
        "--permission-mode",
        "acceptEdits",
        "--dangerously-skip-permissions",
        "-s",
        "workspace-write",
        "--approval-mode=yolo",
    ]


def test_pins_record_agent_models_config_fixtures_and_versions(
    make_suite: SuiteBuilder,
    fake_claude: Callable[..., Path],
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_claude(version="2.0.14 (Claude Code)", model="m-1")
    root = make_suite.steered(
        ["alpha", "beta"],
        ini="eval_agent_args = --permission-mode acceptEdits --allowedTools Read Edit\n",
        agent="claude",
    )
    (root / "rules").mkdir()
    (root / "rules" / "style.md").write_text("Use classes.\n", "utf-8")
    (root / "notes.md").write_text("not configuration\n", "utf-8")
    fixture = root / "evals" / "fixtures" / "repo"
    fixture.mkdir(parents=True)
    (fixture / "main.py").write_text("print(1)\n", "utf-8")
    (root / "requirements-dev.txt").write_text("pytest\n", "utf-8")
    (root / "package-lock.json").write_text("{}\n", "utf-8")
    alpha = root / "evals" / "alpha.yaml"
    alpha.write_text(alpha.read_text("utf-8") + "cwd: fixtures/repo\n", "utf-8")
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=2)
    pins = only_results(root)["pins"]
    assert pins["agent"] == "claude"
    assert pins["agent_version"] == "2.0.14 (Claude Code)"
    assert pins["models"] == ["m-1"]
    sha = hashlib.sha256((root / "AGENTS.md").read_bytes()).hexdigest()
    assert pins["config"] == {
        "": {
            "AGENTS.md": sha,
            "rules/style.md": hashlib.sha256(b"Use classes.\n").hexdigest(),
        }
    }
    assert len(pins["config_fingerprint"]) == 64
    assert list(pins["fixtures"]) == ["evals/fixtures/repo"]
    assert pins["case_files"]["evals/alpha.yaml"] == hashlib.sha256(alpha.read_bytes()).hexdigest()
    assert pins["permissions"] == [
        "--permission-mode",
        "acceptEdits",
        "--allowedTools",
        "Read",
        "Edit",
    ]
    assert pins["python"]
    assert set(pins["packages"]) >= {"pytest", "pydantic", "pytest-evalcases", "pytest-xdist"}
    assert pins["packages"]["pytest"] == pytest.__version__
    assert pins["lock_files"] == {
        "package-lock.json": hashlib.sha256(b"{}\n").hexdigest(),
        "requirements-dev.txt": hashlib.sha256(b"pytest\n").hexdigest(),
    }
    # This claude answers without talking HTTP: its recordings hold no request, and
    # no hash stands for what it sent.
    assert pins["sent"] == {
        "": {
            "runs": 0,
            "not_recorded": "the recording of run alpha holds no model request",
            "scripted": False,
        }
    }
    assert FAKE_KEY not in json.dumps(pins)


def test_a_failing_version_command_is_recorded_as_null(
    make_suite: SuiteBuilder,
    fake_claude: Callable[..., Path],
    pytester: pytest.Pytester,
) -> None:
    state = fake_claude()
    state.write_text(json.dumps({"version": None}), "utf-8")
    root = make_suite.steered(["alpha"], agent="claude")
    # The fake prints "None" for a null version: break --version for real instead.
    bindir = pytester.path / "fake-bin"
    script = (bindir / "claude").read_text("utf-8")
    (bindir / "claude").write_text(
        script.replace(
            'if sys.argv[1:] == ["--version"]:',
            'if sys.argv[1:] == ["--version"]:\n    sys.exit(1)',
        ),
        "utf-8",
    )

    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)

    assert only_results(root)["pins"]["agent_version"] is None


def test_json_report_items_carry_case_metadata(
    make_suite: SuiteBuilder,
    fake_claude: Callable[..., Path],
    pytester: pytest.Pytester,
) -> None:
    fake_claude(tokens=1234, cost=0.5, model="m-9")
    root = make_suite.steered(["alpha", "beta"], severities={"beta": "critical"}, agent="claude")
    pytester.makepyfile(test_unit="def test_plain():\n    assert True\n")

    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--json-report", "--json-report-file=r.json"
    )

    result.assert_outcomes(passed=3)
    report = json.loads(Path(root / "r.json").read_text("utf-8"))
    meta = {t["nodeid"]: t.get("metadata", {}).get("evalcases") for t in report["tests"]}
    assert meta["test_unit.py::test_plain"] is None
    beta = meta["evals/beta.yaml::beta"]
    assert beta is not None
    assert (beta["id"], beta["severity"], beta["defends"]) == ("beta", "critical", "AGENTS.md")
    assert (beta["variant"], beta["repetition"]) == ("", 0)
    assert beta["checks"][0]["passed"] is True
    assert beta["usage"] == {"tokens_in": 1234, "tokens_out": 100, "cost_usd": 0.5, "model": "m-9"}
