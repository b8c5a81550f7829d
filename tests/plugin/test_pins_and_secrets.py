"""Pins (docs/results.md, "Pins"), redaction of secrets, and the pytest-json-report metadata."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_evalcases.redact import MARK, redact
from pytest_evalcases.session.pins import permission_args
from tests.helpers.results import only_results, steer
from tests.helpers.suite import SuiteBuilder

FAKE_KEY = "sk-ant-api03-test-1234567890abcdefABCDEF1234567890"
PLAIN_TOKEN = "plain0value9not8shaped7like6a5key"


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
    assert "authentication failed with key" in texts["results"]


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
