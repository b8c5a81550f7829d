"""The ``gemini`` agent: Gemini CLI in headless mode (``gemini -p``)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from pytest_evalcases import process
from pytest_evalcases.agents import base, home, output
from pytest_evalcases.agents.requirements import SCRIPTED_KEY, Credentials, Requirements
from pytest_evalcases.errors import AgentError
from pytest_evalcases.kinds import ErrorKind

#: What an eval run may do: every tool call, shell commands included, without asking.
#: ``eval_agent_args`` adds to it (``--policy``) and replaces it where it sets an approval
#: mode itself (docs/agents.md, "Permissions").
PERMISSIONS = (output.Default(("--approval-mode", "yolo"), ("--approval-mode", "--yolo", "-y")),)

#: How Gemini CLI 0.61 says on stderr that it refused a call: a policy rule's ``deny``
#: ("denied by policy"), or a BeforeTool hook ("blocked: REASON").
_REFUSED = re.compile(
    r"^Error executing tool (?P<tool>\S+): Tool execution (?P<how>denied by policy|blocked\b)",
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

    The JSON gives the final text (``response``), token counts per model
    (``stats.models``) and tool call *counts* per tool name (``stats.tools.byName``),
    but not the tool inputs: each call becomes a :class:`ToolCall` with an empty
    ``input``, so ``tool_called`` / ``tool_not_called`` work on names and kinds only
    (``tool_inputs`` is False; a tool check with ``input:`` cannot be graded).
    """

    name = "gemini"
    #: The JSON output counts tool calls by name; it has no inputs.
    tool_inputs = False
    requirements = REQUIREMENTS
    has_home = True

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
        argv += ["--output-format", "json"]
        if self.settings.model:
            argv += ["-m", self.settings.model]
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

    def parse(self, result: process.ProcessResult, request: base.RunRequest) -> base.AgentResult:
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
        if status in EXIT_KINDS:
            kind = EXIT_KINDS[status]
            said = result.said()
            raise output.agent_error(
                self.name, kind, f"exit status {status}: {said}", hint=_hint(kind, said)
            )
        if doc is None:
            said = f"{result.stderr}\n{result.stdout}"
            hint = _TRUST_HINT if "trust" in said.lower() else ""
            raise output.no_result_error(self.name, result, "JSON result", hint=hint)

        stats = output.as_object(doc.get("stats"))
        models = output.as_object(stats.get("models"))
        response = doc.get("response")
        return base.AgentResult(
            text=response if isinstance(response, str) else "",
            tool_calls=_tool_calls(stats) if "tools" in stats else None,
            usage=_usage(models),
            models=tuple(models),
            duration_ms=output.measured_ms(result),
            exit_code=status,
            truncated=result.truncated,
            denials=_denials(result.stderr),
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


def _usage(models: output.JSONObject) -> base.Usage:
    if not models:
        return base.Usage()
    totals = [0, 0, 0]
    for stats in models.values():
        tokens = output.as_object(output.as_object(stats).get("tokens"))
        # `input` is the newer name of `prompt`; both may be present with one value.
        sent = tokens.get("input", tokens.get("prompt"))
        for i, value in enumerate((sent, tokens.get("candidates"), tokens.get("cached"))):
            totals[i] += output.as_int(value) or 0
    return base.Usage(input_tokens=totals[0], output_tokens=totals[1], cache_read_tokens=totals[2])
