"""``--eval-perturb`` (docs/perturbation.md): each case also runs with seeded
perturbations of its prompt, as items of their own, advisory unless
``eval_perturb_blocking``; ``perturb: false`` opts a case out.

The fake ``claude`` of tests/fake_agents records the prompt of every call; a command
agent that answers with its prompt (``cat``) makes the checks depend on the wording."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.run.perturb import perturb
from tests.docs.test_results_docs import schema
from tests.helpers.agents import FAKES, SAMPLES, fake_credentials, recorded_calls

PROMPT = 'Fix the bug in src/app.py. Use the message "fix: off by one". Then run the tests.'


def write_case(root: Path, case_id: str, extra: str = "", pattern: str = "Fix the bug") -> None:
    path = root / "evals" / f"{case_id}.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(
        f"id: {case_id}\ndefends: AGENTS.md\nprompt: {json.dumps(PROMPT)}\n{extra}"
        f"checks:\n  - type: output_matches\n    pattern: {pattern}\n",
        "utf-8",
    )


def collected(result: pytest.RunResult) -> list[str]:
    return sorted(
        line.split("::", 1)[1] for line in result.stdout.lines if line.startswith("evals/")
    )


def results_file(root: Path) -> dict[str, Any]:
    (path,) = (root / "evals" / "results").glob("*.json")
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return data


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly", *args)


@pytest.fixture
def fake_claude(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fake ``claude`` on PATH, recording each call's prompt; its record file."""
    record = pytester.path / "record.jsonl"
    fake_credentials(monkeypatch)
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ.get('PATH', os.defpath)}")
    # Copied into the rootdir, which the sandbox shows the agent (the repository's tests
    # may be hidden: a checkout below /tmp is).
    sample = shutil.copy(SAMPLES / "claude-json-success.json", pytester.path / "sample.json")
    monkeypatch.setenv("FAKE_AGENT_SAMPLE", str(sample))
    monkeypatch.setenv("FAKE_AGENT_RECORD", str(record))
    for name in ("FAKE_AGENT_MODEL_SAMPLES", "FAKE_AGENT_SAMPLE_CLAUDE"):
        monkeypatch.delenv(name, raising=False)
    return record


def prompt_of(call: dict[str, Any]) -> str:
    # claude -p PROMPT; a prompt starting with "-" goes to standard input.
    return str(call["stdin"] or call["argv"][1])


def test_each_case_runs_n_perturbations_per_class_as_items_of_their_own(
    pytester: pytest.Pytester,
) -> None:
    write_case(pytester.path, "fix")
    write_case(pytester.path, "exact", "perturb: false\n")
    pytester.makeini("[pytest]\neval_perturb_n = 2\n")

    result = run(pytester, "--eval-perturb", "typo,case", "--collect-only", "-q")

    assert collected(result) == [
        "exact",
        "fix",
        "fix[perturb-case-0]",
        "fix[perturb-case-1]",
        "fix[perturb-typo-0]",
        "fix[perturb-typo-1]",
    ]


def test_the_ini_option_names_the_classes_and_the_default_n_is_five(
    pytester: pytest.Pytester,
) -> None:
    write_case(pytester.path, "fix")
    pytester.makeini("[pytest]\neval_perturb = filler\n")

    result = run(pytester, "--collect-only", "-q")

    assert collected(result) == ["fix", *(f"fix[perturb-filler-{k}]" for k in range(5))]


def test_variants_and_repeats_compose_the_parameter(pytester: pytest.Pytester) -> None:
    write_case(pytester.path, "fix")
    pytester.makeini("[pytest]\neval_perturb_n = 1\n")

    result = run(
        pytester,
        *("--eval-config", "a=.", "--eval-config", "b=."),
        *("--eval-repeat", "2", "--eval-perturb", "format", "--collect-only", "-q"),
    )

    assert collected(result) == sorted(
        f"fix[{variant}-{perturbed}r{rep}]"
        for variant in ("a", "b")
        for perturbed in ("", "perturb-format-0-")
        for rep in (0, 1)
    )


def test_the_agent_gets_the_perturbed_prompt_under_the_seed(
    pytester: pytest.Pytester, fake_claude: Path
) -> None:
    write_case(pytester.path, "fix", pattern="Committed")
    pytester.makeini(
        f"[pytest]\neval_agent = claude\neval_sandbox_rw = {pytester.path}\n"
        "eval_perturb_n = 3\neval_perturb_seed = 7\n"
    )

    result = run(pytester, "--eval-perturb", "typo,format")

    result.assert_outcomes(passed=7)
    prompts = sorted(prompt_of(call) for call in recorded_calls(fake_claude))
    expected = [PROMPT] + [
        perturb(PROMPT, cls, k, 7) for cls in ("typo", "format") for k in (0, 1, 2)
    ]
    assert prompts == sorted(expected)
    # The seed is recorded, and the runs name their perturbation.
    data = results_file(pytester.path)
    assert data["pins"]["perturbation"] == {
        "classes": ["typo", "format"],
        "n": 3,
        "seed": 7,
        "blocking": False,
    }
    assert sorted(str(c["perturbation"]) for c in data["cases"]) == sorted(
        ["None"] + [f"{cls}-{k}" for cls in ("typo", "format") for k in (0, 1, 2)]
    )


@pytest.mark.slow
def test_a_rerun_perturbs_alike(pytester: pytest.Pytester, fake_claude: Path) -> None:
    write_case(pytester.path, "fix", pattern="Committed")
    pytester.makeini(f"[pytest]\neval_agent = claude\neval_sandbox_rw = {pytester.path}\n")

    run(pytester, "--eval-perturb", "typo,whitespace")
    first = [prompt_of(call) for call in recorded_calls(fake_claude)]
    fake_claude.unlink()
    run(pytester, "--eval-perturb", "typo,whitespace")

    assert [prompt_of(call) for call in recorded_calls(fake_claude)] == first


def test_a_case_that_opts_out_is_never_perturbed(
    pytester: pytest.Pytester, fake_claude: Path
) -> None:
    write_case(pytester.path, "exact", "perturb: false\n", pattern="Committed")
    pytester.makeini(f"[pytest]\neval_agent = claude\neval_sandbox_rw = {pytester.path}\n")

    result = run(pytester, "--eval-perturb", "typo,case,whitespace,filler,format")

    result.assert_outcomes(passed=1)
    assert [prompt_of(call) for call in recorded_calls(fake_claude)] == [PROMPT]


def echo_suite(pytester: pytest.Pytester, extra_ini: str = "") -> None:
    """A case whose check needs the prompt's capital F: the agent answers its prompt."""
    write_case(pytester.path, "fix")
    pytester.makeini("[pytest]\neval_agent_command = cat\neval_perturb_n = 2\n" + extra_ini)


def test_perturbed_failures_are_advisory(pytester: pytest.Pytester) -> None:
    echo_suite(pytester)

    # case 0 lowers the prompt, case 1 upper-cases it: both lose "Fix the bug".
    result = run(pytester, "--eval-perturb", "case,filler", "-rx")

    assert result.ret == 0
    result.assert_outcomes(passed=3, xfailed=2)
    result.stdout.fnmatch_lines(
        ["XFAIL evals/fix.yaml::fix[[]perturb-case-0[]]*perturbed prompt case-0 failed (advisory)*"]
    )
    data = results_file(pytester.path)
    assert data["verdict"] == "PASS"
    outcomes = {c["perturbation"]: c["outcome"] for c in data["cases"]}
    assert outcomes == {
        None: "passed",
        "case-0": "xfailed",
        "case-1": "xfailed",
        "filler-0": "passed",
        "filler-1": "passed",
    }


def test_perturbed_failures_block_with_eval_perturb_blocking(pytester: pytest.Pytester) -> None:
    echo_suite(pytester, "eval_perturb_blocking = true\n")

    result = run(pytester, "--eval-perturb", "case")

    assert result.ret == 1
    result.assert_outcomes(passed=1, failed=2)
    assert results_file(pytester.path)["verdict"] == "BLOCKED"


@pytest.mark.parametrize(
    ("args", "ini", "message"),
    [
        (
            ("--eval-perturb", "typo,typos"),
            "",
            "--eval-perturb: unknown perturbation class 'typos'; known: typo, case, "
            "whitespace, filler, format, paraphrase",
        ),
        (
            (),
            "eval_perturb = cases",
            "ini option eval_perturb: unknown perturbation class 'cases'*",
        ),
        (
            ("--eval-perturb", "typo"),
            "eval_perturb_n = 0",
            "*eval_perturb_n expects a whole number >= 1, got '0'",
        ),
        (
            ("--eval-perturb", "typo"),
            "eval_perturb_seed = x",
            "*eval_perturb_seed expects a whole number >= 0, got 'x'",
        ),
    ],
)
def test_bad_values_are_usage_errors(
    pytester: pytest.Pytester, args: tuple[str, ...], ini: str, message: str
) -> None:
    write_case(pytester.path, "fix")
    pytester.makeini(f"[pytest]\n{ini}\n")

    result = run(pytester, *args, "--collect-only")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}"])


@pytest.mark.parametrize("stored", ["--eval-regrade", "--eval-replay", "--eval-reuse"])
def test_perturbed_runs_are_never_graded_or_replayed_from_stored_runs(
    pytester: pytest.Pytester, stored: str
) -> None:
    write_case(pytester.path, "fix")

    result = run(pytester, "evals", "--eval-perturb", "typo", "--collect-only", stored)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--eval-perturb and {stored} cannot be combined"])


def test_with_concurrency_the_runs_made_ahead_get_the_perturbed_prompt(
    pytester: pytest.Pytester, fake_claude: Path
) -> None:
    write_case(pytester.path, "fix", pattern="Committed")
    pytester.makeini(
        f"[pytest]\neval_agent = claude\neval_sandbox_rw = {pytester.path}\neval_perturb_n = 2\n"
    )

    result = run(pytester, "--eval-perturb", "case", "--eval-concurrency", "3")

    result.assert_outcomes(passed=3)
    prompts = sorted(prompt_of(call) for call in recorded_calls(fake_claude))
    assert prompts == sorted([PROMPT, perturb(PROMPT, "case", 0, 0), perturb(PROMPT, "case", 1, 0)])


def test_the_summary_sets_each_class_against_the_originals_and_flags_a_drop(
    pytester: pytest.Pytester,
) -> None:
    echo_suite(pytester)

    result = run(pytester, "--eval-perturb", "case,filler")

    result.stdout.fnmatch_lines(
        [
            "suite: 1/1 cases passed*",
            "perturbation (flagged above 15 points):",
            "  case: originals 1/1 (100%, 95% CI 21%–100%) · perturbed 0/2 (0%, 95% CI 0%–66%)"
            " · -100.0 points BRITTLE",
            "  filler: originals 1/1 (100%, 95% CI 21%–100%) · perturbed 2/2 (100%, 95% CI "
            "34%–100%) · +0.0 points",
            "eval gate: PASS",
        ]
    )
    recorded = results_file(pytester.path)["perturbation"]
    assert recorded["max_delta"] == 15.0
    assert [(c["class"], c["delta"], c["flagged"]) for c in recorded["classes"]] == [
        ("case", 100.0, True),
        ("filler", 0.0, False),
    ]
    assert recorded["classes"][0]["perturbed"] == {
        "passed": 0,
        "runs": 2,
        "pass_rate": 0.0,
        "interval": [0.0, 0.6576],
    }


def test_eval_perturb_max_delta_moves_the_threshold(pytester: pytest.Pytester) -> None:
    echo_suite(pytester, "eval_perturb_max_delta = 100\n")

    result = run(pytester, "--eval-perturb", "case")

    result.stdout.fnmatch_lines(["perturbation (flagged above 100 points):"])
    assert "BRITTLE" not in result.stdout.str()
    assert results_file(pytester.path)["perturbation"]["classes"][0]["flagged"] is False


def test_a_run_without_perturbation_says_nothing_of_it(pytester: pytest.Pytester) -> None:
    echo_suite(pytester)

    result = run(pytester)

    assert "perturbation (" not in result.stdout.str()
    assert "perturbation" not in results_file(pytester.path)


def test_the_documented_schema_names_every_key_of_a_real_file(pytester: pytest.Pytester) -> None:
    echo_suite(pytester)
    run(pytester, "--eval-perturb", "case")
    real = results_file(pytester.path)
    documented = schema()
    top = documented["properties"]

    assert set(real["perturbation"]) == set(top["perturbation"]["properties"])
    item = top["perturbation"]["properties"]["classes"]["items"]
    rate = documented["$defs"]["rate"]["properties"]
    for entry in real["perturbation"]["classes"]:
        assert set(item["required"]) == set(entry) == set(item["properties"])
        assert set(entry["original"]) == set(entry["perturbed"]) == set(rate)
    assert set(real["pins"]["perturbation"]) == set(
        top["pins"]["properties"]["perturbation"]["properties"]
    )
    for case in real["cases"]:
        assert set(case) <= set(top["cases"]["items"]["properties"])


def test_k_selects_the_perturbed_runs_or_the_originals(pytester: pytest.Pytester) -> None:
    write_case(pytester.path, "fix")
    pytester.makeini("[pytest]\neval_perturb = typo\neval_perturb_n = 2\n")

    perturbed = run(pytester, "-k", "perturb", "--collect-only", "-q")
    originals = run(pytester, "-k", "not perturb", "--collect-only", "-q")

    assert collected(perturbed) == ["fix[perturb-typo-0]", "fix[perturb-typo-1]"]
    assert collected(originals) == ["fix"]


@pytest.mark.xdist
def test_under_xdist_the_summary_counts_every_workers_runs(pytester: pytest.Pytester) -> None:
    echo_suite(pytester)

    result = run(pytester, "-n", "2", "--eval-perturb", "case,filler")

    assert result.ret == 0
    result.stdout.fnmatch_lines(["  case: originals 1/1 * · perturbed 0/2 * BRITTLE"])
    data = results_file(pytester.path)
    assert sorted(str(c["perturbation"]) for c in data["cases"]) == [
        "None",
        "case-0",
        "case-1",
        "filler-0",
        "filler-1",
    ]
    assert data["verdict"] == "PASS"


def test_the_html_report_shows_each_class_against_the_originals(
    pytester: pytest.Pytester,
) -> None:
    echo_suite(pytester)

    result = run(pytester, "--eval-perturb", "case", "--eval-html", "report.html")

    page = (pytester.path / "report.html").read_text("utf-8")
    section = page.split('<ul class="notes" id="perturbation">', 1)[1].split("</ul>", 1)[0]
    assert "<li>perturbation (flagged above 15 points):</li>" in section
    assert "<li>case: originals 1/1 (100%, 95% CI 21%–100%) · perturbed 0/2" in section
    assert "BRITTLE</li>" in section
    assert result.ret == 0


def paraphrased_suite(pytester: pytest.Pytester, extra_ini: str = "") -> None:
    """``fix`` with two paraphrases, one of which loses "Fix the bug"; ``plain`` with
    none; ``code``, whose prompt typo cannot change. The agent answers its prompt."""
    paraphrases = ["Fix the bug in src/app.py, please.", "src/app.py has a bug; repair it."]
    write_case(pytester.path, "fix", f"paraphrases: {json.dumps(paraphrases)}\n")
    write_case(pytester.path, "plain")
    (pytester.path / "evals" / "code.yaml").write_text(
        'id: code\ndefends: AGENTS.md\nprompt: "`make fix` src/app.py"\n'
        "checks:\n  - type: output_matches\n    pattern: make\n",
        "utf-8",
    )
    pytester.makeini("[pytest]\neval_agent_command = cat\n" + extra_ini)


def test_paraphrase_runs_the_cases_own_paraphrases_and_says_which_cases_have_none(
    pytester: pytest.Pytester,
) -> None:
    paraphrased_suite(pytester)

    result = run(pytester, "--eval-perturb", "paraphrase,typo", "-rx")

    # The originals, five typos of each case with a word to misspell, `fix`'s paraphrases.
    result.assert_outcomes(passed=14, xfailed=1)
    result.stdout.fnmatch_lines(
        [
            "perturbation (flagged above 15 points):",
            "  typo: originals 2/2 * · perturbed 10/10 *",
            "  paraphrase: originals 1/1 * · perturbed 1/2 * BRITTLE",
            "perturbation: no typo runs of 1 case (no word of 4 letters outside the "
            "protected spans): code",
            "perturbation: no paraphrase runs of 2 cases (no paraphrases): code, plain",
            "eval gate: PASS",
            "XFAIL evals/fix.yaml::fix[[]perturb-paraphrase-1[]]*perturbed prompt "
            "paraphrase-1 failed (advisory)*",
        ]
    )
    data = results_file(pytester.path)
    runs = {(c["id"], c["perturbation"]): c["outcome"] for c in data["cases"]}
    assert {key: v for key, v in runs.items() if key[1] and "paraphrase" in key[1]} == {
        ("fix", "paraphrase-0"): "passed",
        ("fix", "paraphrase-1"): "xfailed",
    }
    assert not [key for key in runs if key[0] == "code" and key[1] is not None]


def test_paraphrase_items_stop_at_eval_perturb_n(pytester: pytest.Pytester) -> None:
    paraphrased_suite(pytester, "eval_perturb_n = 1\n")

    result = run(pytester, "--eval-perturb", "paraphrase", "--collect-only", "-q")

    assert collected(result) == ["code", "fix", "fix[perturb-paraphrase-0]", "plain"]


def test_a_deselected_case_is_not_named_for_its_missing_paraphrases(
    pytester: pytest.Pytester,
) -> None:
    paraphrased_suite(pytester)

    result = run(pytester, "--eval-perturb", "paraphrase", "-k", "fix or code")

    result.stdout.fnmatch_lines(
        ["perturbation: no paraphrase runs of 1 case (no paraphrases): code"]
    )
    assert "plain" not in result.stdout.str()


@pytest.mark.xdist
def test_under_xdist_the_summary_says_which_cases_have_no_paraphrases(
    pytester: pytest.Pytester,
) -> None:
    paraphrased_suite(pytester)

    result = run(pytester, "-n", "2", "--eval-perturb", "paraphrase")

    result.assert_outcomes(passed=4, xfailed=1)
    result.stdout.fnmatch_lines(
        ["perturbation: no paraphrase runs of 2 cases (no paraphrases): code, plain"]
    )


def test_the_html_report_says_which_cases_have_no_paraphrases(pytester: pytest.Pytester) -> None:
    paraphrased_suite(pytester)

    run(pytester, "--eval-perturb", "paraphrase", "--eval-html", "report.html")

    page = (pytester.path / "report.html").read_text("utf-8")
    assert "<li>perturbation: no paraphrase runs of 2 cases (no paraphrases): code, plain</li>" in (
        page
    )
