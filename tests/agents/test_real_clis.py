"""The real agent CLIs (Claude Code, Codex, Gemini CLI) run through the plugin against
the scripted model servers of :mod:`tests.helpers.model_server`, on 127.0.0.1 only.

The CLIs come from npm (``.ci/run`` installs the pinned versions into a cache directory
and names its ``.bin`` in ``EVALCASES_AGENT_CLIS``); a CLI that is not installed, or a
machine without node, skips its tests with the reason. Each test runs the CLI's own
agent loop: its tool call is executed in the workspace and graded by the checks, and its
output format and error handling are the real ones.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.recording import format as recording
from tests.helpers.model_server import ModelServer, Reply, Request, Script, model_server
from tests.helpers.results import only_results, results_files
from tests.helpers.sandbox import USER_CACHE, Hostile, hostile_targets, requires_bwrap
from tests.helpers.timeouts import timeout_once

pytestmark = pytest.mark.real_cli

CLIS = Path(os.environ["EVALCASES_AGENT_CLIS"]) if os.environ.get("EVALCASES_AGENT_CLIS") else None


def real_suite(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, agent: str, name: str, case: str
) -> None:
    """A suite of one case file ``evals/NAME`` holding ``case``, run with the installed
    CLI ``agent`` (on the path)."""
    program = cli(agent)
    monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}{os.environ['PATH']}")
    pytester.makefile(".ini", tox=f"[pytest]\neval_agent = {agent}\n")
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / name).write_text(case)


def cli(name: str) -> Path:
    """The installed CLI ``name``, or a skip that says how to install it."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed (the agent CLIs are npm packages)")
    if CLIS is not None:
        if not (CLIS / name).exists():
            # .ci/run installed the pinned CLIs there: a missing one is a broken install,
            # not a reason to skip quietly.
            pytest.fail(f"EVALCASES_AGENT_CLIS={CLIS} holds no {name}")
        return CLIS / name
    path = shutil.which(name)
    if path is None:
        pytest.skip(
            f"the {name} CLI is not installed: set EVALCASES_AGENT_CLIS to a node_modules/.bin "
            "holding it (.ci/run installs the pinned versions)"
        )
    return Path(path)


def acts(request: Request) -> Reply:
    """Run one shell command (write a file), then answer with the markers seen."""
    if request.tool_results == 0:
        return Reply(shell="echo made-by-the-agent > made.txt", input_tokens=120, output_tokens=9)
    return Reply(text="done: " + (" ".join(request.markers) or "no markers"), output_tokens=4)


CASE = """
id: acts
defends: AGENTS.md
prompt: Write made.txt
checks:
  - {type: file_matches, path: made.txt, pattern: made-by-the-agent}
  - {type: output_matches, pattern: "^done:"}
  - {type: tool_called, tool: shell, input: "made\\\\.txt"}
"""


@pytest.fixture
def claude_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[ModelServer]:
    """The real ``claude`` pointed at a scripted Messages API, with a home of its own."""
    program = cli("claude")
    with model_server("anthropic", acts) as server:
        monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}{os.environ['PATH']}")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        # Keys of random letters, as real ones are: any eight characters of a secret are
        # redacted from messages (docs/results.md), words of the scripted errors too.
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-Zq7xK2pW9mR4")
        monkeypatch.setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        # The CLI retries 429/5xx for minutes by default; one attempt says the same.
        monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-home"))
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        yield server


#: No permission arguments: the driver's defaults must let the run edit and run commands.
CLAUDE_INI = "[pytest]\neval_agent = claude\n"


def test_claude_runs_its_tool_call_in_the_workspace_and_reports_usage(
    pytester: pytest.Pytester, claude_env: ModelServer
) -> None:
    pytester.makefile(".ini", tox=CLAUDE_INI)
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "acts.yaml").write_text(CASE)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    record = only_results(pytester.path)["cases"][0]
    assert [c["passed"] for c in record["checks"]] == [True, True, True]
    assert (record["tokens_in"], record["tokens_out"]) == (120 + 100, 9 + 4)
    assert record["cost_usd"] > 0
    assert record["model"]
    assert record["turns"] == 2
    # The CLI's own loop: the second request carried the tool's result.
    assert [r.tool_results for r in claude_env.conversation()] == [0, 1]


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (401, "authentication"),
        (402, "billing"),
        (429, "rate-limit"),
        (500, "server"),
        (529, "server"),
    ],
)
def test_claude_api_errors_are_errors_of_their_kind(
    pytester: pytest.Pytester, claude_env: ModelServer, status: int, kind: str
) -> None:
    claude_env.script = lambda request: Reply(status=status, error=f"scripted {status}")
    pytester.makefile(".ini", tox=CLAUDE_INI)
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "acts.yaml").write_text(CASE)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(errors=1)
    record = only_results(pytester.path)["cases"][0]
    assert record["outcome"] == "error"
    assert record["error_kind"] == kind, record["error"]
    assert f"scripted {status}" in record["error"]


def write_case(pytester: pytest.Pytester, ini: str) -> None:
    pytester.makefile(".ini", tox=ini)
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "acts.yaml").write_text(CASE)


@pytest.fixture
def codex_ini(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[ModelServer, str]]:
    """The real ``codex`` with a model provider of its own: a scripted Responses API."""
    program = cli("codex")
    with model_server("openai", acts) as server:
        monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}{os.environ['PATH']}")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-Jt5vN8cQ3hL6")
        monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
        # pytester's HOME is below /tmp, where Codex would not set up its own sandbox
        # (docs/agents.md, "The agent's home"): the agent homes go where they do for users.
        monkeypatch.setenv("XDG_CACHE_HOME", str(USER_CACHE))
        (tmp_path / "codex-home").mkdir()
        provider = (
            f'model_providers.scripted={{name="scripted",base_url="{server.url}/v1",'
            'env_key="OPENAI_API_KEY",wire_api="responses",'
            "request_max_retries=0,stream_max_retries=0}"
        )
        ini = (
            "[pytest]\neval_agent = codex\n"
            f"eval_agent_args = -c model_provider=scripted -c '{provider}'\n"
        )
        yield server, ini


def test_codex_runs_its_shell_command_in_the_workspace(
    pytester: pytest.Pytester, codex_ini: tuple[ModelServer, str]
) -> None:
    server, ini = codex_ini
    write_case(pytester, ini)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    record = only_results(pytester.path)["cases"][0]
    assert [c["passed"] for c in record["checks"]] == [True, True, True]
    assert (record["tokens_in"], record["tokens_out"]) == (120 + 100, 9 + 4)
    assert [r.tool_results for r in server.conversation()] == [0, 1]


@pytest.mark.parametrize(
    ("status", "kind", "said"),
    [
        (401, "authentication", "scripted 401"),
        (402, "billing", "scripted 402"),
        (429, "rate-limit", "429 Too Many Requests"),
        # Codex words a server error its own way, naming no status.
        (500, "server", "high demand"),
    ],
)
def test_codex_api_errors_are_errors_of_their_kind(
    pytester: pytest.Pytester,
    codex_ini: tuple[ModelServer, str],
    status: int,
    kind: str,
    said: str,
) -> None:
    server, ini = codex_ini
    server.script = lambda request: Reply(status=status, error=f"scripted {status}")
    write_case(pytester, ini)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(errors=1)
    record = only_results(pytester.path)["cases"][0]
    assert record["error_kind"] == kind, record["error"]
    assert said in record["error"]


@pytest.fixture
def gemini_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[ModelServer]:
    """The real ``gemini`` pointed at a scripted Gemini API, API-key auth selected in a
    home of its own (its helper calls get answers matching their JSON schema)."""
    program = cli("gemini")
    with model_server("gemini", acts) as server:
        home = tmp_path / "gemini-home"
        (home / ".gemini").mkdir(parents=True)
        settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
        settings["general"] = {"maxAttempts": 1}
        (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
        monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}{os.environ['PATH']}")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
        monkeypatch.setenv("GEMINI_API_KEY", "Wb4yF9dS2kP7")
        monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
        monkeypatch.setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
        # Gemini CLI starts a second node process of itself, with a larger heap (its
        # "relaunch"): these runs need no larger heap, and one start costs half as much.
        # The tests of what a timeout leaves behind keep it.
        monkeypatch.setenv("GEMINI_CLI_NO_RELAUNCH", "true")
        yield server


GEMINI_INI = "[pytest]\neval_agent = gemini\n"


def test_gemini_runs_its_shell_command_in_the_workspace(
    pytester: pytest.Pytester, gemini_server: ModelServer
) -> None:
    pytester.makefile(".ini", tox=GEMINI_INI)
    (pytester.path / "evals").mkdir()
    # Gemini's JSON names tool calls but not their inputs: no `input:` on its tool check.
    (pytester.path / "evals" / "acts.yaml").write_text(
        CASE.replace(
            '{type: tool_called, tool: shell, input: "made\\\\.txt"}',
            "{type: tool_called, tool: shell}",
        )
    )

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    record = only_results(pytester.path)["cases"][0]
    assert [c["passed"] for c in record["checks"]] == [True, True, True]
    assert [r.tool_results for r in gemini_server.conversation()] == [0, 1]


# --- what reaches the model -----------------------------------------------------------

#: The configuration under test says one marker, the operator's own home another; the
#: scripted model answers with the markers it was sent.
HERMETIC_CASES = """
id: {id}
defends: {config}
bare: {bare}
prompt: What do your instructions say?
checks:
  - {{type: output_matches, pattern: "MARK-config-under-test"}}
  - {{type: output_not_matches, pattern: "MARK-operator"}}
"""


def says_markers(request: Request) -> Reply:
    return Reply(text="saw: " + (" ".join(request.markers) or "nothing"))


def hermetic_suite(pytester: pytest.Pytester, ini: str, config: str, bares: list[str]) -> None:
    pytester.makefile(".ini", tox=ini)
    (pytester.path / config).write_text("Answer plainly. MARK-config-under-test\n")
    (pytester.path / "evals").mkdir()
    for bare in bares:
        case = HERMETIC_CASES.format(id=f"reaches-{bare}", config=config, bare=bare)
        (pytester.path / "evals" / f"reaches-{bare}.yaml").write_text(case)


@pytest.mark.parametrize(
    ("home", "outcome"),
    [("isolated", {"passed": 2}), ("inherit", {"failed": 2})],
    ids=["isolated", "inherit"],
)
def test_claude_sees_the_workspace_claude_md_and_never_the_operators(
    pytester: pytest.Pytester,
    claude_env: ModelServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    home: str,
    outcome: dict[str, int],
) -> None:
    claude_env.script = says_markers
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    operator = tmp_path / "home" / ".claude"
    operator.mkdir(parents=True)
    (operator / "CLAUDE.md").write_text("MARK-operator: a personal rule\n")
    hermetic_suite(
        pytester, CLAUDE_INI + f"eval_agent_home = {home}\n", "CLAUDE.md", ["true", "false"]
    )

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(**outcome)
    if home == "inherit":
        result.stdout.fnmatch_lines(["*agent home: inherited*"])
        assert only_results(pytester.path)["pins"]["agent_home"] == "inherit"


@pytest.mark.parametrize(
    ("home", "outcome"),
    [("isolated", {"passed": 1}), ("inherit", {"failed": 1})],
    ids=["isolated", "inherit"],
)
def test_codex_sees_the_workspace_agents_md_and_never_the_operators(
    pytester: pytest.Pytester,
    codex_ini: tuple[ModelServer, str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    home: str,
    outcome: dict[str, int],
) -> None:
    server, ini = codex_ini
    server.script = says_markers
    operator = tmp_path / "codex-home"
    (operator / "AGENTS.md").write_text("MARK-operator: a personal rule\n")
    hermetic_suite(pytester, ini + f"eval_agent_home = {home}\n", "AGENTS.md", ["true"])

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(**outcome)


@pytest.mark.parametrize(
    ("home", "outcome"),
    [("isolated", {"passed": 1}), ("inherit", {"failed": 1})],
    ids=["isolated", "inherit"],
)
def test_gemini_sees_the_workspace_gemini_md_and_never_the_operators(
    pytester: pytest.Pytester,
    gemini_server: ModelServer,
    tmp_path: Path,
    home: str,
    outcome: dict[str, int],
) -> None:
    gemini_server.script = says_markers
    (tmp_path / "gemini-home" / ".gemini" / "GEMINI.md").write_text("MARK-operator: mine\n")
    hermetic_suite(pytester, GEMINI_INI + f"eval_agent_home = {home}\n", "GEMINI.md", ["true"])

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(**outcome)


# --- permissions and runaway models -------------------------------------------------


def processes_in(directory: Path) -> list[int]:
    """The processes whose working directory is ``directory`` or below it."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cwd = (proc / "cwd").resolve(strict=True)
        except OSError:
            continue
        if proc.name.isdigit() and cwd.is_relative_to(directory):
            found.append(int(proc.name))
    return found


#: The runaway's timeout, counted from its second model request on (timeout_once): the
#: CLI's start-up and two requests, however long they take on a loaded machine, come first.
RUNAWAY_TIMEOUT = 2


@pytest.mark.parametrize(
    ("extra", "kind"),
    [
        ("eval_agent_args = --max-turns 3\n", "max-turns"),
        (f"eval_timeout = {RUNAWAY_TIMEOUT}\n", "timeout"),
    ],
    ids=["max-turns", "timeout"],
)
def test_a_model_that_never_stops_calling_tools_is_an_error_and_leaves_no_process(
    pytester: pytest.Pytester,
    claude_env: ModelServer,
    monkeypatch: pytest.MonkeyPatch,
    extra: str,
    kind: str,
) -> None:
    claude_env.script = lambda request: Reply(shell="sleep 0.3; echo again >> log.txt")
    timeout_once(monkeypatch, lambda pid: len(claude_env.conversation()) >= 2)
    write_case(pytester, CLAUDE_INI + extra)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(errors=1)
    record = only_results(pytester.path)["cases"][0]
    assert record["error_kind"] == kind, record["error"]
    # Each request answered with another tool call: the loop went on until stopped.
    assert len(claude_env.conversation()) >= 2
    assert processes_in(Path(record["workspace"])) == []
    if kind == "max-turns":
        # Stopped at its limit, the run was paid for up to there: the CLI says so and
        # the record keeps it (docs/budget.md).
        assert record["tokens_in"] > 0, record
        assert record["tokens_out"] > 0, record
        assert record["cost_usd"] > 0, record


def test_a_runaway_over_its_cost_limit_fails_the_limit_with_the_real_claude(
    pytester: pytest.Pytester, claude_env: ModelServer
) -> None:
    """The turn limit stops the loop; what it cost by then is over the case's max_cost:
    a failed check with the figures, not an error (docs/budget.md)."""
    claude_env.script = lambda request: Reply(shell="echo again >> log.txt")
    write_case(pytester, CLAUDE_INI + "eval_agent_args = --max-turns 2\n")
    case = pytester.path / "evals" / "acts.yaml"
    case.write_text(case.read_text() + "max_cost: 0.000001\n")

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-retry-errors", "1")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["  FAILED max_cost: the run cost $*; the limit is $0.0000 (and then it"
         " ended without a verdict: max-turns)"]
    )  # fmt: skip
    record = only_results(pytester.path)["cases"][0]
    assert (record["outcome"], record["attempts"]) == ("failed", 1)
    assert record["cost_usd"] > 0.000001


def test_gemini_bad_credentials_are_an_authentication_error(
    pytester: pytest.Pytester, gemini_server: ModelServer
) -> None:
    gemini_server.script = lambda request: Reply(status=401, error="scripted bad key")
    write_case(pytester, GEMINI_INI)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(errors=1)
    record = only_results(pytester.path)["cases"][0]
    assert record["error_kind"] == "authentication", record["error"]
    assert "scripted bad key" in record["error"]


def test_gemini_retrying_a_rate_limit_past_the_timeout_is_an_error_not_a_failure(
    pytester: pytest.Pytester, gemini_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Gemini CLI retries 429s for minutes (its settings' general.maxAttempts, which a
    # fresh home leaves at the default): the run's timeout ends it, as an error. It
    # counts from the first 429 on, after the CLI's start-up, however long that takes.
    gemini_server.script = lambda request: Reply(status=429, error="scripted quota")
    monkeypatch.delenv("GEMINI_CLI_NO_RELAUNCH")
    timeout_once(monkeypatch, lambda pid: len(gemini_server.conversation()) >= 1)
    write_case(pytester, GEMINI_INI + "eval_timeout = 3\n")

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(errors=1)
    record = only_results(pytester.path)["cases"][0]
    assert record["error_kind"] == "timeout", record["error"]
    assert processes_in(Path(record["workspace"])) == []


HOOK_CASE = """
id: hooks-{bare}
defends: .claude/settings.json
bare: {bare}
prompt: Go
checks:
  - {{type: file_exists, path: session-hook-ran}}
  - {{type: output_matches, pattern: MARK-hook-context}}
"""


@pytest.mark.parametrize(("bare", "outcome"), [("false", "passed"), ("true", "failed")])
def test_claude_runs_the_workspace_hooks_in_discovery_only(
    pytester: pytest.Pytester, claude_env: ModelServer, bare: str, outcome: str
) -> None:
    claude_env.script = says_markers
    pytester.makefile(".ini", tox=CLAUDE_INI)
    hooks = {
        "hooks": {
            "SessionStart": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": "touch session-hook-ran; echo MARK-hook-context",
                        }
                    ]
                }
            ]
        }
    }
    (pytester.path / ".claude").mkdir()
    (pytester.path / ".claude" / "settings.json").write_text(json.dumps(hooks))
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "hooks.yaml").write_text(HOOK_CASE.format(bare=bare))

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(**{outcome: 1})


SANDBOXED_CASES = {
    # The first to run: its workspace is the one the hostile run goes after.
    "a-neighbour": "prompt: MARK-neighbour work\n",
    "b-hostile": "prompt: MARK-hostile work, and nothing else\n",
}


@requires_bwrap
def test_claude_in_the_sandbox_changes_its_workspace_and_nothing_else(
    pytester: pytest.Pytester, claude_env: ModelServer, tmp_path: Path
) -> None:
    """The real CLI's Bash tool, told by the model to write to a home directory and the
    repository, to delete a file in /tmp, to plant a file in another run's workspace and
    to kill a process outside: none of it lands, and the runs are graded as usual."""
    with hostile_targets(pytester.path, tmp_path) as hostile:
        result = claude_hostile_session(pytester, claude_env, hostile)
        assert hostile.landed() == []
    result.assert_outcomes(passed=2)
    records = {r["id"]: r for r in only_results(pytester.path)["cases"]}
    # Read from the transcript: the tool's output reached the CLI's stream.
    assert records["b-hostile"]["refused_writes"] == [
        f"{hostile.home}/owned-by-eval",
        f"{pytester.path}/ROGUE.md",
    ]
    assert records["a-neighbour"]["refused_writes"] == []


def claude_hostile_session(
    pytester: pytest.Pytester, claude_env: ModelServer, hostile: Hostile
) -> pytest.RunResult:
    """The two cases, the model telling the CLI's Bash tool what to do in each."""

    def script(request: Request) -> Reply:
        if request.tool_results:
            return Reply(text="done: ok")
        work = "echo made-by-the-agent > made.txt"
        if "MARK-neighbour" in request.text:
            return Reply(shell=f"{work}; pwd > {hostile.shared}/neighbour-workspace")
        return Reply(
            shell=f"{work}; echo x > {hostile.home}/owned-by-eval; "
            f"echo y > {hostile.repo}/ROGUE.md; rm -f {hostile.keep}; "
            f"echo z > {hostile.neighbour()}/planted.txt; kill -9 {hostile.sleeper.pid}; true"
        )

    claude_env.script = script
    ini = CLAUDE_INI + f"eval_sandbox = bwrap\neval_sandbox_rw = {hostile.shared}\n"
    pytester.makefile(".ini", tox=ini)
    for name, prompt in SANDBOXED_CASES.items():
        case = CASE.replace("id: acts", f"id: {name}").replace("prompt: Write made.txt\n", prompt)
        (pytester.path / "evals").mkdir(exist_ok=True)
        (pytester.path / "evals" / f"{name}.yaml").write_text(case)
    return pytester.runpytest("-p", "no:cacheprovider")


# --- recording ------------------------------------------------------------------------


def stored_text(runs: Path) -> str:
    """Every file below a ``.runs`` directory as text, compressed ones decompressed."""
    texts = []
    for path in sorted(runs.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            texts.append((gzip.decompress(data) if path.suffix == ".gz" else data).decode())
    return "\n".join(texts)


def test_claude_runs_through_the_recording_proxy_and_its_exchange_is_stored(
    pytester: pytest.Pytester, claude_env: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "Vd8nR3tK6yQ1")
    write_case(pytester, CLAUDE_INI)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    [results] = results_files(pytester.path)
    record = json.loads(results.read_text())["cases"][0]
    assert record["recording"] == f"{results.stem}.runs/acts"
    found = recording.read(_exchange(results, record))
    header, exchanges = found.header, list(found.exchanges)
    assert (header["agent"], header["case"], header["upstream"]) == (
        "claude",
        "acts",
        claude_env.url,
    )
    # The scripted API got every request through the proxy, below its own path, with
    # the key; the recording holds each of them and each streamed answer, in order.
    turns = claude_env.conversation()
    assert [r.tool_results for r in turns] == [0, 1]
    assert all(not r.path.startswith("/r/") and r.headers.get("x-api-key") for r in turns)
    messages = [e for e in exchanges if e.path.startswith("/v1/messages?")]
    assert len(messages) == len(turns)
    assert [json.loads(e.request.text) for e in messages] == [r.body for r in turns]
    assert all(e.status == 200 for e in messages)
    streamed = [e.response.text for e in messages]
    assert "event: message_start" in streamed[0]
    assert '"name": "Bash"' in streamed[0]
    assert "done: " in streamed[1]
    assert streamed[1].rstrip().endswith('{"type": "message_stop"}')
    names = {name for e in exchanges for name, _ in e.request.headers}
    assert "anthropic-version" in names
    assert "x-api-key" not in names
    everything = stored_text(results.parent / f"{results.stem}.runs")
    assert "Zq7xK2pW9mR4" not in everything


def test_claude_is_not_proxied_with_recording_off(
    pytester: pytest.Pytester, claude_env: ModelServer
) -> None:
    write_case(pytester, CLAUDE_INI + "eval_record = false\n")

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    [results] = results_files(pytester.path)
    assert json.loads(results.read_text())["cases"][0]["recording"] is None
    assert not list(results.parent.glob("*.runs"))


def recorded_exchanges(pytester: pytest.Pytester, key: str) -> tuple[dict[str, Any], list[Any]]:
    """The one run's recording header and exchanges; no file of the session's recordings
    holds ``key``."""
    [results] = results_files(pytester.path)
    record = json.loads(results.read_text())["cases"][0]
    assert record["recording"] == f"{results.stem}.runs/acts"
    found = recording.read(_exchange(results, record))
    header, exchanges = found.header, list(found.exchanges)
    assert key not in stored_text(results.parent / f"{results.stem}.runs")
    return header, exchanges


def test_gemini_runs_through_the_recording_proxy(
    pytester: pytest.Pytester, gemini_server: ModelServer
) -> None:
    write_case(pytester, GEMINI_INI)
    (pytester.path / "evals" / "acts.yaml").write_text(CASE.replace('input: "made\\\\.txt"', ""))

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    header, exchanges = recorded_exchanges(pytester, "Wb4yF9dS2kP7")
    assert (header["agent"], header["upstream"]) == ("gemini", gemini_server.url)
    streamed = [e for e in exchanges if ":streamGenerateContent" in e.path]
    assert len(streamed) == len(gemini_server.conversation()) == 2
    assert "run_shell_command" in streamed[0].response.text
    assert all(not r.path.startswith("/r/") for r in gemini_server.requests)


@contextlib.contextmanager
def codex_at_openai(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, script: Script
) -> Iterator[tuple[ModelServer, str]]:
    """The real ``codex`` with the built-in OpenAI provider at a scripted Responses API,
    which the plugin's proxy can stand between (docs/replay.md, "Recording"): the
    server, and the ini that runs the CLI."""
    program = cli("codex")
    with model_server("openai", script) as server:
        monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}{os.environ['PATH']}")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-Jt5vN8cQ3hL6")
        monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
        monkeypatch.setenv("XDG_CACHE_HOME", str(USER_CACHE))
        (tmp_path / "codex-home").mkdir()
        args = f"-c 'openai_base_url=\"{server.url}/v1\"'"
        yield server, f"[pytest]\neval_agent = codex\neval_agent_args = {args}\n"


def test_codex_runs_through_the_recording_proxy(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with codex_at_openai(monkeypatch, tmp_path, acts) as (server, ini):
        write_case(pytester, ini)

        result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    header, exchanges = recorded_exchanges(pytester, "Jt5vN8cQ3hL6")
    assert (header["agent"], header["upstream"]) == ("codex", f"{server.url}/v1")
    # Its WebSocket is refused (recorded as such) with the status on which Codex falls
    # back to HTTPS at once, not after five retries.
    upgrades = [e for e in exchanges if e.method == "GET"]
    assert [e.status for e in upgrades] == [426]
    responses = [e for e in exchanges if e.method == "POST"]
    assert [e.path for e in responses] == ["/responses", "/responses"]
    assert len(server.conversation()) == 2
    assert "response.completed" in responses[1].response.text


def _exchange(results: Path, record: dict[str, Any]) -> Path:
    """The stored exchange of a run's entry in ``results``."""
    found = recording.exchange_file(results.parent / record["recording"])
    assert found is not None, record["recording"]
    return found
