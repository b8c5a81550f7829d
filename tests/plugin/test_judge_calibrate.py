"""``evalcases calibrate`` asks the judge again (docs/judge.md, "`evalcases calibrate`"):
on each labelled run, over the run's stored answer and workspace, the judge as it is
configured now answers the check's question as a live run asks it, and no agent runs;
``--stored`` compares the labels with the judgements the runs stored and asks no one. A
judge that gives no answer on a run (out of format) is reported and that run left out of n.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_evalcases import agents
from pytest_evalcases.cli.main import main
from pytest_evalcases.recording import format as recording
from pytest_evalcases.results.calibration import Label, append_labels
from tests.helpers import http_agent
from tests.helpers.model_server import Reply, Request, model_server
from tests.helpers.suite import SuiteBuilder
from tests.plugin.test_judge import AGENT, COMMAND, SCRIPT, case, evalcases, labelled, run
from tests.plugin.test_recording import AGENT as HTTP_AGENT

#: The agent of test_judge, that also notes each run as the agent in agent-ran.txt.
MARKING = AGENT.replace(
    '    Path("made.txt")',
    '    open(root / "agent-ran.txt", "a").write("ran\\n")\n    Path("made.txt")',
)


def report(root: Path) -> dict[str, object]:
    found: dict[str, object] = json.loads((root / "evals" / "judge-labels.kappa.json").read_text())
    return found


def test_calibrate_asks_the_scripted_judge_again_and_stored_keeps_the_stored_answers(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite(
        MARKING,
        {"judged": case("judged", SCRIPT)},
        fixtures={"AGENTS.md": "x\n"},
        command=COMMAND,
        ini="eval_judge_calibration = evals/judge-labels.yaml\n",
    )
    _, doc = run(pytester, "--eval-repeat", "30")
    assert (root / "agent-ran.txt").read_text().count("ran") == 30
    (root / "agent-ran.txt").unlink()
    (root / "out.json").rename(root / "out-30.json")
    # The person agrees with every stored judgement: no on r0-r14, yes on r15-r29.
    labelled(root, doc, 0)
    # The judge now says the opposite on every run, and nothing it can parse on r29.
    flipped = ["VERDICT: yes\nREASON: it does"] * 15 + ["VERDICT: no\nREASON: it does not"] * 14
    (root / "evals" / "judged.yaml").write_text(case("judged", [*flipped, "Yes."]))

    asked = evalcases(root, "calibrate")

    assert asked.returncode == 0, asked.stderr
    out = asked.stdout
    assert (
        "explains: kappa -1.00 on n=29 (human/judge yes/yes 0, yes/no 14, no/yes 15, no/no 0)"
        " -> uncalibrated: reported only"
    ) in out
    assert "  1 label(s) left out of n: the judge gave no answer on their run" in out
    (left_out,) = [line for line in out.splitlines() if "no answer of the judge" in line]
    assert left_out.startswith("evals/judged.yaml::judged[r29] / explains: no answer of the judge")
    assert "not in the fixed format" in left_out
    explains = report(root)["calibrations"]["explains"]  # type: ignore[index]
    assert (explains["n"], explains["errors"], explains["calibrated"]) == (29, 1, False)

    stored = evalcases(root, "calibrate", "--stored")

    assert stored.returncode == 0, stored.stderr
    assert "explains: kappa 1.00 on n=30 (human/judge yes/yes 15" in stored.stdout
    assert "no answer of the judge" not in stored.stdout
    explains = report(root)["calibrations"]["explains"]  # type: ignore[index]
    assert (explains["n"], explains["errors"], explains["calibrated"]) == (30, 0, True)
    # Neither ran the agent.
    assert not (root / "agent-ran.txt").exists()


def test_calibrate_asks_the_configured_judge_agent_and_records_its_exchange(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    verdict = ["yes"]

    def answers(request: Request) -> Reply:
        asked = request.body["messages"][0]["content"]
        if "VERDICT:" in asked:
            return Reply(text=f"VERDICT: {verdict[0]}\nREASON: the judge said {verdict[0]}")
        return Reply(text="answer to " + asked)

    with model_server("anthropic", answers) as server:
        monkeypatch.setenv("SCRIPTED_API", server.url)
        monkeypatch.setenv("HTTP_AGENT_BASE_URL", "http://the-users-own-base-url.invalid")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-Zq7xK2pW9mR4")
        http_agent.install(pytester, HTTP_AGENT)
        pytester.makeini(
            "[pytest]\neval_agent = http\neval_judge_calibration = judge-labels.yaml\n"
        )
        (pytester.path / "evals").mkdir()
        (pytester.path / "evals" / "alpha.yaml").write_text(
            "id: alpha\ndefends: AGENTS.md\nprompt: MARK-alpha\nchecks:\n"
            "  - {type: output_matches, pattern: answer to MARK-alpha}\n"
            "  - {id: useful, type: judge, question: Is the answer useful?}\n"
        )
        live, doc = run(pytester)
        live.assert_outcomes(passed=1)
        assert len(server.requests) == 2
        (entry,) = doc["cases"]
        labels = pytester.path / "judge-labels.yaml"
        append_labels(labels, [Label("useful", "out.json", entry["nodeid"], False, "ana")])
        verdict[0] = "no"
        # The CLI finds agent `http` as an installed driver would be found.
        monkeypatch.setattr(agents, "_FACTORIES", dict(agents._FACTORIES))
        exec(http_agent.CONFTEST, {"__file__": str(pytester.path / "conftest.py")})
        monkeypatch.chdir(pytester.path)

        assert main(["calibrate"]) == 0
        asked = capsys.readouterr().out

        # One request more, the judge's: the stored answer and the current question.
        assert len(server.requests) == 3
        prompt = server.requests[2].body["messages"][0]["content"]
        assert "QUESTION: Is the answer useful?" in prompt
        assert "THE AGENT'S FINAL ANSWER:\nanswer to MARK-alpha" in prompt
        assert (
            "useful: kappa undefined on n=1 (human/judge yes/yes 0, yes/no 0, no/yes 0, no/no 1)"
            in asked
        )
        # Its exchange is kept beside the labels file.
        (kept,) = (pytester.path / "judge-labels.calibrate").iterdir()
        assert kept.name.endswith(".judge-useful")
        (exchange,) = recording.read(kept / recording.EXCHANGE).exchanges
        assert "VERDICT: no" in (exchange.response.text or "")

        assert main(["calibrate", "--stored"]) == 0
        stored = capsys.readouterr().out

        assert len(server.requests) == 3
        assert (
            "useful: kappa 0.00 on n=1 (human/judge yes/yes 0, yes/no 0, no/yes 1, no/no 0)"
            in stored
        )


def test_calibrate_shows_the_judge_the_stored_answer_and_workspace_changes(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite(
        AGENT,
        {"asked": case("asked")},
        fixtures={"AGENTS.md": "x\n", "judge.txt": "VERDICT: yes\nREASON: it names made.txt\n"},
        command=COMMAND,
        ini="eval_judge_calibration = judge-labels.yaml\n",
    )
    _, doc = run(pytester)
    (root / "asked.txt").unlink()
    (entry,) = doc["cases"]
    append_labels(
        root / "judge-labels.yaml", [Label("explains", "out.json", entry["nodeid"], True, "ana")]
    )

    calibrated = evalcases(root, "calibrate")

    assert calibrated.returncode == 0, calibrated.stderr
    assert "explains: kappa undefined on n=1 (human/judge yes/yes 1, yes/no 0" in calibrated.stdout
    # Asked once, as a live run asks: the stored answer, the changes rebuilt from the run.
    asked = (root / "asked.txt").read_text()
    assert asked.count("=====") == 1
    assert "THE AGENT'S FINAL ANSWER:\ndone: made.txt" in asked
    assert "new file: made.txt" in asked
    assert "+made by the agent" in asked
