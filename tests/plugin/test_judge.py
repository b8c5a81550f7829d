"""Judge checks (docs/judge.md): a model's yes/no answer about a run, reported and never
blocking until its check id is calibrated against human labels (Cohen's kappa ≥ 0.6 on
at least 30), then blocking like any check; a judge answer out of the fixed format is
an error of kind ``judge``; a replayed or regraded run keeps its stored judgement and
asks nothing.

The judge here is the scripted one (a judge check's ``script:``), or the command agent,
which writes each prompt it is asked to a file: a test sees whether the judge was asked.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_evalcases.recording import format as recording
from pytest_evalcases.results.calibration import Label, append_labels
from tests.agents import test_real_clis
from tests.agents.test_real_clis import CASE as REAL_CASE
from tests.agents.test_real_clis import acts
from tests.helpers import http_agent
from tests.helpers.model_server import ModelServer, Reply, Request, model_server
from tests.helpers.suite import SuiteBuilder
from tests.plugin.test_recording import AGENT as HTTP_AGENT

EVALCASES = Path(sys.executable).parent / "evalcases"
#: The real ``claude`` against a scripted Messages API, as the real-CLI tests have it.
claude_env = test_real_clis.claude_env

#: The agent: answers "done", and writes a file; asked as a judge (its prompt says
#: VERDICT), it appends the prompt to asked.txt and answers what judge.txt says.
AGENT = """
import sys
from pathlib import Path

root = Path(sys.argv[1])
prompt = sys.argv[2]
if "VERDICT:" in prompt:
    with open(root / "asked.txt", "a") as f:
        f.write(prompt + "\\n=====\\n")
    print((root / "judge.txt").read_text())
else:
    Path("made.txt").write_text("made by the agent\\n")
    print("done: made.txt")
"""

COMMAND = "{python} {rootdir}/agent.py {rootdir} {prompt}"


def case(case_id: str, script: list[str] | None = None, *, severity: str = "critical") -> str:
    scripted = f"\n    script: {json.dumps(script)}" if script is not None else ""
    return f"""\
id: {case_id}
defends: AGENTS.md
severity: {severity}
prompt: Make the file
checks:
  - type: file_exists
    path: made.txt
  - id: explains
    type: judge
    question: Does the answer name the file it made?{scripted}
"""


def run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = pytester.runpytest("-p", "no:cacheprovider", "-rx", "--eval-save", "out.json", *args)
    saved = pytester.path / "out.json"
    return result, json.loads(saved.read_text("utf-8")) if saved.exists() else {}


def evalcases(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(EVALCASES), *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def judge_of(doc: dict[str, Any], case_id: str) -> dict[str, Any]:
    (entry,) = [c for c in doc["cases"] if c["id"] == case_id]
    (check,) = [c for c in entry["checks"] if c["type"] == "judge"]
    judge: dict[str, Any] = check["judge"]
    return {**judge, "passed": check["passed"], "outcome": entry["outcome"]}


@pytest.mark.parametrize("options", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_an_uncalibrated_judge_saying_no_never_blocks(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, options: list[str]
) -> None:
    make_suite(
        AGENT,
        {"says-no": case("says-no", ["VERDICT: no\nREASON: it names no file"])},
        fixtures={"AGENTS.md": "x\n"},
        command=COMMAND,
    )

    result, doc = run(pytester, "--eval-html", "report.html", *options)

    result.assert_outcomes(xfailed=1)
    assert result.ret == 0, result.stdout.str()
    out = result.stdout.str()
    assert "the judge (script) answered no: it names no file" in out
    assert "only uncalibrated judge checks failed" in out
    uncalibrated = "judge: uncalibrated, reported and never blocking: explains (no calibration)"
    assert uncalibrated in out
    assert "eval gate: PASS" in out
    assert uncalibrated in (pytester.path / "report.html").read_text()
    judge = judge_of(doc, "says-no")
    assert judge["yes"] is False
    assert (judge["blocking"], judge["source"], judge["outcome"]) == (False, "scripted", "xfailed")


def test_a_secret_in_the_judges_reason_is_redacted(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-Zq7xK2pW9mR4")
    make_suite(
        AGENT,
        {"leaks": case("leaks", ["VERDICT: no\nREASON: it printed sk-ant-Zq7xK2pW9mR4"])},
        fixtures={"AGENTS.md": "x\n"},
        command=COMMAND,
    )

    result, doc = run(pytester)

    result.assert_outcomes(xfailed=1)
    assert "Zq7xK2pW9mR4" not in (pytester.path / "out.json").read_text()
    assert "Zq7xK2pW9mR4" not in result.stdout.str()
    assert judge_of(doc, "leaks")["reason"].startswith("it printed ")


def test_a_malformed_judge_answer_is_an_error_of_kind_judge(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    make_suite(
        AGENT,
        {"rambles": case("rambles", ["Yes, I think it does."])},
        fixtures={"AGENTS.md": "x\n"},
        command=COMMAND,
    )

    result, doc = run(pytester)

    result.assert_outcomes(errors=1)
    assert result.ret == 2
    (entry,) = doc["cases"]
    assert entry["error_kind"] == "judge"
    assert "not in the fixed format" in entry["error"]


def test_the_judge_is_asked_about_the_answer_and_the_changes_and_a_regrade_keeps_it(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite(
        AGENT,
        {"asked": case("asked")},
        fixtures={"AGENTS.md": "x\n", "judge.txt": "VERDICT: yes\nREASON: it names made.txt\n"},
        command=COMMAND,
    )

    result, doc = run(pytester)

    result.assert_outcomes(passed=1)
    asked = (root / "asked.txt").read_text()
    assert asked.count("=====") == 1
    assert "QUESTION: Does the answer name the file it made?" in asked
    assert "THE TASK THE AGENT WAS GIVEN:\nMake the file" in asked
    assert "THE AGENT'S FINAL ANSWER:\ndone: made.txt" in asked
    assert "new file: made.txt" in asked
    assert "+made by the agent" in asked
    judge = judge_of(doc, "asked")
    assert (judge["yes"], judge["reason"], judge["judge"]) == (True, "it names made.txt", "command")
    assert (judge["source"], judge["same_provider"]) == ("asked", True)

    (root / "judge.txt").write_text("VERDICT: no\nREASON: changed its mind\n")
    (root / "out.json").rename(root / "live.json")
    result, doc = run(pytester, "--eval-regrade=live.json")

    result.assert_outcomes(passed=1)
    assert (root / "asked.txt").read_text().count("=====") == 1
    judge = judge_of(doc, "asked")
    assert (judge["yes"], judge["source"]) == (True, "stored")

    # Asked again on request: the stored answer and workspace, the current judge.
    result, doc = run(pytester, "--eval-regrade=live.json", "-o", "eval_judge_reask=true")

    result.assert_outcomes(xfailed=1)
    assert (root / "asked.txt").read_text().count("=====") == 2
    judge = judge_of(doc, "asked")
    assert (judge["yes"], judge["source"], judge["reason"]) == (False, "asked", "changed its mind")


def test_the_variants_configuration_is_no_change_of_the_agents_to_the_judge(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    """The judge is shown what the agent changed against what it found: a variant's
    configuration laid over the fixture is not "a new file" of the agent's."""
    root = make_suite(
        AGENT,
        {"asked": case("asked")},
        fixtures={"AGENTS.md": "x\n", "judge.txt": "VERDICT: yes\nREASON: it names made.txt\n"},
        command=COMMAND,
    )
    (root / "variant").mkdir()
    (root / "variant" / "CLAUDE.md").write_text("Prefer functions.\n")

    result, _ = run(pytester, "--eval-config", "pr=variant")

    result.assert_outcomes(passed=1)
    asked = (root / "asked.txt").read_text()
    assert "new file: made.txt" in asked
    assert "CLAUDE.md" not in asked


def test_a_replayed_run_keeps_its_judgement_and_sends_no_request(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    def answers(request: Request) -> Reply:
        asked = request.body["messages"][0]["content"]
        if "VERDICT:" in asked:
            return Reply(text="VERDICT: no\nREASON: the answer is a parrot's")
        return Reply(text="answer to " + asked)

    with model_server("anthropic", answers) as server:
        monkeypatch.setenv("SCRIPTED_API", server.url)
        monkeypatch.setenv("HTTP_AGENT_BASE_URL", "http://the-users-own-base-url.invalid")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-Zq7xK2pW9mR4")
        http_agent.install(pytester, HTTP_AGENT)
        (pytester.path / "evals").mkdir()
        (pytester.path / "evals" / "alpha.yaml").write_text(
            "id: alpha\ndefends: AGENTS.md\nprompt: MARK-alpha\nchecks:\n"
            "  - {type: output_matches, pattern: answer to MARK-alpha}\n"
            "  - {type: judge, question: Is the answer useful?}\n"
        )

        live, doc = run(pytester, "--eval-agent", "http")
        live.assert_outcomes(xfailed=1)
        assert len(server.requests) == 2
        judge = judge_of(doc, "alpha")
        assert (judge["source"], judge["recording"]) == ("asked", "out.runs/alpha.judge-judge-1")
        # The judge's exchange is recorded beside the run's, as a run's is.
        found = recording.read(pytester.path / judge["recording"] / recording.EXCHANGE)
        (exchange,) = found.exchanges
        assert "Is the answer useful?" in (exchange.request.text or "")
        assert "VERDICT: no" in (exchange.response.text or "")
        (pytester.path / "out.json").rename(pytester.path / "live.json")

        replayed, doc = run(pytester, "--eval-agent", "http", "--eval-replay=live.json")

        replayed.assert_outcomes(xfailed=1)
        assert len(server.requests) == 2
        (entry,) = doc["cases"]
        assert entry["replay"] == "full"
        judge = judge_of(doc, "alpha")
        assert (judge["yes"], judge["source"]) == (False, "stored")
        assert judge["reason"] == "the answer is a parrot's"


#: The judge says no on the first 15 repetitions, yes on the last 15.
SCRIPT = ["VERDICT: no\nREASON: it does not"] * 15 + ["VERDICT: yes\nREASON: it does"] * 15


def labelled(root: Path, doc: dict[str, Any], disagree: int) -> Path:
    """The labels file: a person's answer on each of the 30 judged runs, against the
    judge's on ``disagree`` of them."""
    runs = sorted(
        ((c["nodeid"], judge_of({"cases": [c]}, c["id"])["yes"]) for c in doc["cases"]),
        key=lambda run: run[0],
    )
    assert len(runs) == 30
    labels = [
        Label("explains", "../out-30.json", node, yes if i >= disagree else not yes, "ana")
        for i, (node, yes) in enumerate(runs)
    ]
    path = root / "evals" / "judge-labels.yaml"
    append_labels(path, labels)
    return path


@pytest.mark.parametrize(
    ("disagree", "kappa", "blocks"), [(2, "0.87", True), (10, "0.33", False)], ids=["high", "low"]
)
def test_a_judge_blocks_only_when_calibrated_with_kappa_of_at_least_0_6_on_30_labels(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
    disagree: int,
    kappa: str,
    blocks: bool,
) -> None:
    root = make_suite(
        AGENT,
        {"judged": case("judged", SCRIPT)},
        fixtures={"AGENTS.md": "x\n"},
        command=COMMAND,
        ini="eval_judge_calibration = evals/judge-labels.yaml\n",
    )
    result, doc = run(pytester, "--eval-repeat", "30")
    result.assert_outcomes(passed=15, xfailed=15)
    assert "judge: uncalibrated, reported and never blocking: explains (no calibration)" in (
        result.stdout.str()
    )
    assert len(doc["judge"]["spot_checks"]) == 3
    (pytester.path / "out.json").rename(root / "out-30.json")
    labelled(root, doc, disagree)

    calibrated = evalcases(root, "calibrate")

    assert calibrated.returncode == 0, calibrated.stderr
    assert f"explains: kappa {kappa} on n=30" in calibrated.stdout
    report = json.loads((root / "evals" / "judge-labels.kappa.json").read_text())
    assert report["calibrations"]["explains"]["calibrated"] is blocks
    assert report["calibrations"]["explains"]["n"] == 30

    # One run: repetition 0, where the judge says no.
    result, doc = run(pytester)

    out = result.stdout.str()
    judge = judge_of(doc, "judged")
    assert judge["blocking"] is blocks
    assert judge["labels"] == 30
    if blocks:
        result.assert_outcomes(failed=1)
        assert result.ret == 1
        assert "eval gate: BLOCKED" in out
        assert "uncalibrated" not in out
    else:
        result.assert_outcomes(xfailed=1)
        assert result.ret == 0
        assert f"explains (kappa {kappa} on 30 labels)" in out
        assert "eval gate: PASS" in out


def test_calibrate_add_appends_a_persons_labels_for_the_spot_checks(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite(
        AGENT,
        {"judged": case("judged", SCRIPT)},
        fixtures={"AGENTS.md": "x\n"},
        command=COMMAND,
        ini="eval_judge_calibration = evals/judge-labels.yaml\n",
    )
    _, doc = run(pytester, "--eval-repeat", "3")
    (spot,) = doc["judge"]["spot_checks"]

    wrong = evalcases(root, "calibrate", "--add", "out.json", "--label", "nowhere=yes")
    added = evalcases(
        root, "calibrate", "--add", "out.json", "--label", f"{spot['run']}=no", "--labeller", "ana"
    )

    assert wrong.returncode == 2
    assert "not among the spot checks of out.json: nowhere" in wrong.stderr
    assert added.returncode == 0, added.stderr
    assert "added 1 label(s) to" in added.stdout
    labels = yaml.safe_load((root / "evals" / "judge-labels.yaml").read_text())
    assert labels == {
        "labels": [
            {
                "check": "explains",
                "results": "../out.json",
                "run": spot["run"],
                "label": "no",
                "labeller": "ana",
            }
        ]
    }
    calibrated = evalcases(root, "calibrate")
    assert calibrated.returncode == 0, calibrated.stderr
    assert "explains: kappa undefined on n=1" in calibrated.stdout
    assert "uncalibrated: reported only" in calibrated.stdout


#: An agent of the conftest that reports what each run spent: 100 tokens in, 10 out,
#: 0.01 USD, as the agent and as the judge (whose prompt says VERDICT).
PRICED = """
import sys
from pathlib import Path

from pytest_evalcases.agents import register_agent
from pytest_evalcases.agents.base import AgentResult, Invocation, Usage

CODE = (
    "import sys; print('VERDICT: no' + chr(10) + 'REASON: too short' "
    "if 'VERDICT:' in sys.argv[1] else 'done')"
)


class Priced:
    name = "priced"

    def __init__(self, settings):
        self.settings = settings

    def invocation(self, request):
        return Invocation((sys.executable, "-c", CODE, request.prompt))

    def parse(self, result, request):
        return AgentResult(text=result.stdout, usage=Usage(100, 10), cost_usd=0.01)


register_agent("priced", Priced)
"""


def test_the_judges_tokens_and_cost_count_in_the_runs(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(PRICED)
    pytester.makeini("[pytest]\neval_agent = priced\n")
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "priced.yaml").write_text(
        "id: priced\ndefends: AGENTS.md\nprompt: Say done\nchecks:\n"
        "  - {type: output_matches, pattern: done}\n"
        "  - {type: judge, question: Is it enough?}\n"
    )

    result, doc = run(pytester)

    result.assert_outcomes(xfailed=1)
    (entry,) = doc["cases"]
    assert (entry["tokens_in"], entry["tokens_out"]) == (200, 20)
    assert entry["cost_usd"] == pytest.approx(0.02)
    assert judge_of(doc, "priced")["reason"] == "too short"


@pytest.mark.real_cli
def test_the_real_claude_judges_a_real_claude_run(
    pytester: pytest.Pytester, claude_env: ModelServer
) -> None:
    def script(request: Request) -> Reply:
        if "VERDICT:" in request.text:
            return Reply(text="VERDICT: yes\nREASON: made.txt holds the agent's line")
        return acts(request)

    claude_env.script = script
    pytester.makefile(".ini", tox="[pytest]\neval_agent = claude\n")
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "acts.yaml").write_text(
        REAL_CASE + "  - {id: made, type: judge, question: Did the agent write made.txt?}\n"
    )

    result, doc = run(pytester)

    result.assert_outcomes(passed=1)
    judge = judge_of(doc, "acts")
    assert (judge["judge"], judge["source"], judge["same_provider"]) == ("claude", "asked", True)
    assert judge["reason"] == "made.txt holds the agent's line"
    (asked,) = [r for r in claude_env.requests if "VERDICT:" in r.text]
    assert "new file: made.txt" in asked.text
    assert "+made-by-the-agent" in asked.text
    (entry,) = doc["cases"]
    # The agent's two requests and the judge's one.
    assert entry["tokens_in"] == 120 + 100 + 100


def test_a_judge_answering_out_of_format_is_an_error_and_its_spend_counts(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(PRICED.replace("'VERDICT: no' + chr(10) + 'REASON: too short'", "'no'"))
    pytester.makeini("[pytest]\neval_agent = priced\n")
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "priced.yaml").write_text(
        "id: priced\ndefends: AGENTS.md\nprompt: Say done\nchecks:\n"
        "  - {type: judge, question: Is it enough?}\n"
    )

    result, doc = run(pytester, "--eval-retry-errors", "2")

    result.assert_outcomes(errors=1)
    (entry,) = doc["cases"]
    assert (entry["error_kind"], entry["attempts"]) == ("judge", 1)
    assert "it said: 'no'" in entry["error"]
    assert (entry["tokens_in"], entry["tokens_out"]) == (200, 20)


def test_the_judges_cost_counts_in_the_sessions_budget(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(PRICED)
    pytester.makeini("[pytest]\neval_agent = priced\n")
    (pytester.path / "evals").mkdir()
    for name in ("a", "b", "c"):
        (pytester.path / "evals" / f"{name}.yaml").write_text(
            f"id: {name}\ndefends: AGENTS.md\nprompt: Say done\nchecks:\n"
            "  - {type: output_matches, pattern: done}\n"
            "  - {type: judge, question: Is it enough?}\n"
        )

    # $0.02 a run, agent and judge: after two runs $0.04, and the third would pass $0.05
    # (had the judge not counted, $0.02 and an expected $0.01: it would start).
    result, _ = run(pytester, "--eval-budget", "0.05")

    result.assert_outcomes(xfailed=2, errors=1)
    assert "budget: $0.04 of $0.05 spent by 2 runs; 1 run not started" in result.stdout.str()


def test_calibrate_add_asks_on_a_terminal(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite(
        AGENT,
        {"judged": case("judged", SCRIPT)},
        fixtures={"AGENTS.md": "x\n"},
        command=COMMAND,
        ini="eval_judge_calibration = evals/judge-labels.yaml\n",
    )
    _, doc = run(pytester, "--eval-repeat", "3")
    (spot,) = doc["judge"]["spot_checks"]
    terminal, ours = pty.openpty()
    with subprocess.Popen(
        [str(EVALCASES), "calibrate", "--add", "out.json"],
        cwd=root,
        stdin=ours,
        stdout=subprocess.PIPE,
        text=True,
    ) as asked:
        os.write(terminal, b"bo\nyes\n")
        out, _ = asked.communicate(timeout=60)
    os.close(terminal)
    os.close(ours)

    assert asked.returncode == 0, out
    assert f"{spot['run']} / explains: the judge said {spot['judge_said']}" in out
    (label,) = yaml.safe_load((root / "evals" / "judge-labels.yaml").read_text())["labels"]
    assert (label["run"], label["label"], label["labeller"]) == (spot["run"], "yes", "bo")
