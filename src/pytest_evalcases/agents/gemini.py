"""The ``gemini`` agent: Gemini CLI in headless mode (``gemini -p``)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from pytest_evalcases import process
from pytest_evalcases.agents import base, home, output
from pytest_evalcases.agents.mcp import McpServer
from pytest_evalcases.agents.requirements import SCRIPTED_KEY, Credentials, Requirements
from pytest_evalcases.errors import AgentError
from pytest_evalcases.kinds import ErrorKind

#: What an eval run may do: every tool call, shell commands included, without asking.
#: ``eval_agent_args`` adds to it (``--policy``) and replaces it where it sets an approval
#: mode itself (docs/agents.md, "Permissions").
PERMISSIONS = (output.Default(("--approval-mode", "yolo"), ("--approval-mode", "--yolo", "-y")),)

#: How Gemini CLI 0.61 says that it refused a call, on stderr after the tool's name and
#: in the ``tool_result`` of ``-o stream-json``: a policy rule's ``deny`` ("denied by
#: policy"), or a BeforeTool hook ("blocked: REASON").
_HOW = r"Tool execution (?P<how>denied by policy|blocked\b)"
_REFUSED = re.compile(rf"^Error executing tool (?P<tool>\S+): {_HOW}", re.MULTILINE)

#: What ``--debug`` prints on stderr of the hooks it runs (0.61): the event's plan, one
#: line per hook's command, then the event's outcome, naming the hooks that failed.
_HOOK_LINES = re.compile(
    r"^(?:Created execution plan for (?P<plan>\w+): \d+ hook"
    r"|Expanding hook command: (?P<command>.*) \(cwd: [^\n]*\)$"
    r"|Hook execution for (?P<done>\w+): (?P<outcome>.*)$"
    r"|Error executing tool \S+: Tool execution (?P<blocked>blocked)\b)",
    re.MULTILINE,
)

#: Gemini CLI's user-level directory is ``$GEMINI_CLI_HOME/.gemini`` (default ``~``);
#: its OAuth login is in these two files.
HOME = home.Home(
    "GEMINI_CLI_HOME", ".gemini", ("oauth_creds.json", "google_accounts.json"), subdir=".gemini"
)

#: Variables that send the CLI's requests to another cloud than the model API's own.
PROVIDERS = ("GOOGLE_GENAI_USE_VERTEXAI",)

#: What the session checks before the first run (docs/agents.md, "Before the first run").
#: Vertex AI (GOOGLE_GENAI_USE_VERTEXAI) may log in with gcloud's own credentials.
REQUIREMENTS = Requirements(
    install="npm install -g @google/gemini-cli",
    credentials=Credentials(
        variables=("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS"),
        home=HOME,
        # google_accounts.json only names the account: the login is the OAuth file.
        login_files=("oauth_creds.json",),
        providers=PROVIDERS,
        # API-key authentication is the one that goes to GOOGLE_GEMINI_BASE_URL (tried
        # with 0.61).
        scripted=(("GEMINI_API_KEY", SCRIPTED_KEY),),
    ),
    # The system settings override the user's and the workspace's (their model is the one
    # every request asks for, tried with 0.61); the system defaults come under them.
    machine_config=(
        ("GEMINI_CLI_SYSTEM_SETTINGS_PATH", "/etc/gemini-cli/settings.json"),
        ("GEMINI_CLI_SYSTEM_DEFAULTS_PATH", "/etc/gemini-cli/system-defaults.json"),
    ),
)

#: Gemini CLI's built-in tool names and their canonical kinds.
TOOL_KINDS = {
    "run_shell_command": "shell",
    "read_file": "read",
    "read_many_files": "read",
    "write_file": "write",
    "replace": "edit",
    "edit": "edit",
    "glob": "search",
    "search_file_content": "search",
    "grep": "search",
    "list_directory": "search",
    "web_fetch": "web",
    "google_web_search": "web",
}

#: Exit statuses the CLI documents for failures that prevent a verdict.
EXIT_KINDS: dict[int, ErrorKind] = {
    41: "authentication",
    42: "input",
    52: "config",
    53: "max-turns",
}

#: The variable by which Gemini CLI trusts the folder it runs in, set on every run.
TRUST_WORKSPACE = "GEMINI_CLI_TRUST_WORKSPACE"

_TRUST_HINT = (
    "Gemini CLI does not trust the workspace folder in headless mode, although every run "
    f"sets {TRUST_WORKSPACE}=true; a system setting (security.folderTrust) may overrule it: "
    "add --skip-trust to eval_agent_args"
)


#: Where Gemini CLI sends its requests, and the variable that moves it.
BASE_URL = "GOOGLE_GEMINI_BASE_URL"
API_URL = "https://generativelanguage.googleapis.com"


class GeminiAgent(base.AgentBase):
    """Runs ``gemini -p PROMPT --output-format json`` in the workspace.

    The JSON gives the final text (``response``) and token counts per model
    (``stats.models``). A run that needs a transcript (a tool, skill or hook check, or
    ``--eval-transcript``) asks for ``--output-format stream-json`` instead, whose
    ``tool_use`` events carry each call's arguments and whose ``tool_result`` events
    say which calls were refused; a run that checks hooks adds ``--debug``, whose
    stderr names each hook the CLI runs (docs/config-contract.md).
    """

    name = "gemini"
    #: A transcript (``-o stream-json``) has each call's arguments.
    tool_inputs = True
    requirements = REQUIREMENTS
    has_home = True
    #: ``--session-id`` starts a conversation, ``--resume`` continues it.
    continues = True
    mcp_config: base.McpConfig = "home"

    def __init__(self, settings: base.AgentSettings) -> None:
        super().__init__(settings)
        #: The extra arguments and the default permissions they do not set themselves.
        self.args = output.with_permissions(settings.args, PERMISSIONS)

    def invocation(self, request: base.RunRequest) -> base.Invocation:
        if request.prompt.startswith("-"):
            # "-p -x" would read -x as an option; the = form keeps it a value.
            argv = ["gemini", f"--prompt={request.prompt}"]
        else:
            argv = ["gemini", "-p", request.prompt]
        stream = request.needs_transcript or self.settings.transcript or request.hook_events
        argv += ["--output-format", "stream-json" if stream else "json"]
        if request.hook_events:
            # The only place Gemini CLI 0.61 names the hooks it runs (_hooks).
            argv.append("--debug")
        if self.settings.model:
            argv += ["-m", self.settings.model]
        if request.session is not None:
            # The session lives in the run's home, under the workspace's project: a
            # follow-up needs both as the first turn had them (docs/conversations.md).
            argv += ["--resume" if request.follow_up else "--session-id", request.session]
        argv += self.args
        # The workspace is the plugin's own fresh copy of the configuration under test:
        # trusted for this run only, in its environment (no trustedFolders.json is
        # written); untrusted, Gemini CLI 0.61 refuses to run headless (exit 55).
        return base.Invocation(tuple(argv), env=((TRUST_WORKSPACE, "true"),))

    def model_api(self, env: Mapping[str, str]) -> base.ModelAPI | None:
        """The Gemini API at ``GOOGLE_GEMINI_BASE_URL`` (default Google's); ``None``
        with Vertex AI, which has endpoints of its own."""
        if any(env.get(name) for name in PROVIDERS):
            return None
        return base.ModelAPI(env.get(BASE_URL) or API_URL, BASE_URL, "gemini")

    def home_paths(self, env: Mapping[str, str]) -> tuple[Path, ...]:
        """The operator's own home that the CLI writes to (``eval_agent_home = inherit``)."""
        return home.own_paths(HOME, env)

    def isolate(self, root: Path, env: Mapping[str, str]) -> Mapping[str, str]:
        """A fresh ``GEMINI_CLI_HOME`` in ``root``: the OAuth files, and settings that
        keep only the operator's choice of authentication (API-key auth when there is a
        ``GEMINI_API_KEY`` and no choice)."""
        variables, config = home.make(HOME, root, env)
        chosen = home.read_json(home.source_dir(HOME, env) / "settings.json").get("security")
        auth = chosen.get("auth") if isinstance(chosen, dict) else None
        if not isinstance(auth, dict) and env.get("GEMINI_API_KEY"):
            auth = {"selectedType": "gemini-api-key"}
        settings: dict[str, object] = {"security": {"auth": auth}} if isinstance(auth, dict) else {}
        if env.get("GEMINI_API_KEY") == SCRIPTED_KEY:
            # A scripted run (docs/config-contract.md): its usage statistics would go to
            # a proxy that is not there, retried for seconds at the end of the run.
            settings["privacy"] = {"usageStatisticsEnabled": False}
        (config / "settings.json").write_text(json.dumps(settings), "utf-8")
        return variables

    def write_mcp(self, home_env: Mapping[str, str], servers: Sequence[McpServer]) -> None:
        """The servers in ``mcpServers`` of the run's own settings.json, which Gemini CLI
        merges with the workspace's (docs/mcp.md); it has no flag that takes them."""
        settings_file = home.source_dir(HOME, home_env) / "settings.json"
        settings = home.read_json(settings_file)
        settings["mcpServers"] = {server.name: server.as_json() for server in servers}
        settings_file.write_text(json.dumps(settings), "utf-8")

    def parse(self, result: process.ProcessResult, request: base.RunRequest) -> base.AgentResult:
        events = output.json_objects(result.stdout)
        if any(event.get("type") == "init" for event in events):
            return self._parse_stream(events, result, request)
        # The result is on stdout; Gemini CLI 0.61 writes the JSON of an error (no
        # credentials, exit 41) to stderr instead.
        doc = next(
            (
                obj
                for stream in (result.stdout, result.stderr)
                for obj in reversed(output.json_objects(stream))
                if {"response", "error", "stats"} & obj.keys()
            ),
            None,
        )
        status = result.returncode
        if doc is not None and doc.get("error") is not None:
            raise self._error(doc["error"], status)
        self._failed(result)
        if doc is None:
            raise self._no_result(result, "JSON result")

        stats = output.as_object(doc.get("stats"))
        models = output.as_object(stats.get("models"))
        asked = request.needs_transcript or self.settings.transcript
        response = doc.get("response")
        return base.AgentResult(
            text=response if isinstance(response, str) else "",
            # Counts without inputs: no transcript for a run that asked for one.
            tool_calls=_tool_calls(stats) if "tools" in stats and not asked else None,
            usage=_usage(models),
            models=tuple(models),
            duration_ms=output.measured_ms(result),
            exit_code=status,
            truncated=result.truncated,
            denials=_denials(result.stderr),
            session=output.as_str(doc.get("session_id")) or request.session,
        )

    def _no_result(self, result: process.ProcessResult, missing: str) -> AgentError:
        said = f"{result.stderr}\n{result.stdout}"
        hint = _TRUST_HINT if "trust" in said.lower() else ""
        return output.no_result_error(self.name, result, missing, hint=hint)

    def _failed(self, result: process.ProcessResult) -> None:
        """Raise the error of an exit status that Gemini CLI documents as a failure."""
        status = result.returncode
        if status in EXIT_KINDS:
            kind = EXIT_KINDS[status]
            said = result.said()
            raise output.agent_error(
                self.name, kind, f"exit status {status}: {said}", hint=_hint(kind, said)
            )

    def _parse_stream(
        self,
        events: list[output.JSONObject],
        result: process.ProcessResult,
        request: base.RunRequest,
    ) -> base.AgentResult:
        """Read ``-o stream-json``: ``message`` events (the answer in ``assistant``
        deltas), ``tool_use`` / ``tool_result`` and the closing ``result`` (``status``,
        ``error``, ``stats``)."""
        final = next((e for e in reversed(events) if e.get("type") == "result"), None)
        if final is not None and final.get("error") is not None:
            raise self._error(final["error"], result.returncode)
        self._failed(result)
        if final is None:
            raise self._no_result(result, "result event")
        models = output.as_object(output.as_object(final.get("stats")).get("models"))
        used = [event for event in events if event.get("type") == "tool_use"]
        calls = [_stream_call(event) for event in used]
        # A refusal names the call by its id.
        by_id = {str(event.get("tool_id")): call for event, call in zip(used, calls, strict=True)}
        return base.AgentResult(
            text="".join(
                str(event.get("content") or "")
                for event in events
                if event.get("type") == "message" and event.get("role") == "assistant"
            ),
            tool_calls=tuple(calls),
            usage=_stream_usage(models),
            models=tuple(models),
            duration_ms=output.measured_ms(result),
            exit_code=result.returncode,
            truncated=result.truncated,
            denials=_stream_denials(events, by_id),
            hooks=_hooks(result.stderr) if request.hook_events else None,
            session=next(
                (output.as_str(e.get("session_id")) for e in events if e.get("type") == "init"),
                request.session,
            ),
        )

    def _error(self, error: object, status: int | None) -> AgentError:
        fields = output.as_object(error)
        message = str(fields.get("message") or error)
        err_type = fields.get("type")
        code = output.as_int(fields.get("code"))
        kind = (
            EXIT_KINDS.get(code or 0)
            or EXIT_KINDS.get(status or 0)
            or output.classify(message, err_type)
        )
        details = [str(err_type)] if err_type else []
        details.append(f"exit status {status}")
        hint = _hint(kind, f"{err_type} {message}")
        if hint == _TRUST_HINT and kind == "agent":
            kind = "config"
        return output.agent_error(self.name, kind, f"{message} ({', '.join(details)})", hint=hint)


def _hint(kind: str, said: str) -> str:
    if "trust" in said.lower():
        return _TRUST_HINT
    if kind == "max-turns":
        return "the session hit Gemini CLI's turn limit (maxSessionTurns in its settings.json)"
    return ""


def _tool_calls(stats: output.JSONObject) -> tuple[base.ToolCall, ...]:
    by_name = output.as_object(output.as_object(stats.get("tools")).get("byName"))
    calls: list[base.ToolCall] = []
    for name, counts in by_name.items():
        # Only counts are known, not order or inputs: one input-less call per count.
        count = output.as_int(output.as_object(counts).get("count")) or 0
        calls.extend(
            base.ToolCall(name, output.tool_kind(name, TOOL_KINDS), "") for _ in range(count)
        )
    return tuple(calls)


def _denials(stderr: str) -> tuple[base.Denial, ...]:
    """The calls the CLI refused, as its stderr names them: the tool, without its input
    (the JSON output has none), and whether a policy rule or a hook refused it."""
    return tuple(
        base.Denial(
            match["tool"],
            output.tool_kind(match["tool"], TOOL_KINDS),
            "",
            "permission" if match["how"] == "denied by policy" else "hook",
        )
        for match in _REFUSED.finditer(stderr)
    )


def _stream_call(event: output.JSONObject) -> base.ToolCall:
    name = str(event.get("tool_name") or "")
    kind = output.tool_kind(name, TOOL_KINDS)
    keys = ("command",) if kind == "shell" else ()
    return base.ToolCall(name, kind, output.tool_input(event.get("parameters", {}), *keys))


def _stream_denials(
    events: list[output.JSONObject], calls: Mapping[str, base.ToolCall]
) -> tuple[base.Denial, ...]:
    """The calls the CLI refused, with their inputs: the ``tool_result`` events of a
    ``policy_violation`` whose words say a policy rule or a hook refused the call."""
    denied = []
    for event in events:
        error = output.as_object(event.get("error"))
        if event.get("type") != "tool_result" or error.get("type") != "policy_violation":
            continue
        how = re.match(_HOW, str(error.get("message") or event.get("output") or ""))
        call = calls.get(str(event.get("tool_id")))
        if how is None or call is None:
            continue
        by: base.Blocker = "permission" if how["how"] == "denied by policy" else "hook"
        denied.append(base.Denial(call.name, call.kind, call.input, by))
    return tuple(denied)


def _hooks(stderr: str) -> tuple[base.HookRun, ...]:
    """The hooks the CLI ran, as ``--debug`` names them on stderr: each command under
    its event's plan, failed where the event's outcome lists it, and refusing where it
    failed and the next line of a refused call says a hook blocked it."""
    runs: list[base.HookRun] = []
    event = ""
    pending: list[int] = []
    failed: list[int] = []
    for match in _HOOK_LINES.finditer(stderr):
        if match["plan"]:
            event, pending, failed = match["plan"], [], []
        elif match["command"] is not None:
            pending.append(len(runs))
            runs.append(base.HookRun(event, match["command"]))
        elif match["done"]:
            outcome = match["outcome"]
            failed = [i for i in pending if " failed (" in outcome and runs[i].command in outcome]
            pending = []
        elif match["blocked"] and failed:
            for i in failed:
                runs[i] = dataclasses.replace(runs[i], blocked=True)
            failed = []
    return tuple(runs)


def _stream_usage(models: output.JSONObject) -> base.Usage:
    """Tokens summed over ``stats.models`` of a stream's ``result``: ``input_tokens``,
    ``output_tokens`` and ``cached``."""
    return _summed(
        models,
        lambda stats: (stats.get("input_tokens"), stats.get("output_tokens"), stats.get("cached")),
    )


def _usage(models: output.JSONObject) -> base.Usage:
    """Tokens summed over ``stats.models`` of the JSON output: each model's ``tokens``."""

    def counts(stats: output.JSONObject) -> tuple[object, object, object]:
        tokens = output.as_object(stats.get("tokens"))
        # `input` is the newer name of `prompt`; both may be present with one value.
        sent = tokens.get("input", tokens.get("prompt"))
        return sent, tokens.get("candidates"), tokens.get("cached")

    return _summed(models, counts)


def _summed(
    models: output.JSONObject,
    counts: Callable[[output.JSONObject], tuple[object, object, object]],
) -> base.Usage:
    """Input, output and cached tokens, each model's ``counts``, summed over ``models``."""
    if not models:
        return base.Usage()
    totals = [0, 0, 0]
    for stats in models.values():
        for i, value in enumerate(counts(output.as_object(stats))):
            totals[i] += output.as_int(value) or 0
    return base.Usage(input_tokens=totals[0], output_tokens=totals[1], cache_read_tokens=totals[2])
