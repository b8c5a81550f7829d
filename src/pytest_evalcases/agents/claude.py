"""The ``claude`` agent: Claude Code in print mode (``claude -p``)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from pytest_evalcases import process
from pytest_evalcases.agents import base, home, mcp, output
from pytest_evalcases.agents.requirements import SCRIPTED_KEY, Credentials, Requirements
from pytest_evalcases.errors import AgentError
from pytest_evalcases.kinds import ErrorKind

#: Claude Code's tool names and their canonical kinds (anything else, MCP tools
#: included, is ``other``).
TOOL_KINDS = {
    "Bash": "shell",
    "Read": "read",
    "Write": "write",
    "Edit": "edit",
    "MultiEdit": "edit",
    "NotebookEdit": "edit",
    "Grep": "search",
    "Glob": "search",
    "WebFetch": "web",
    "WebSearch": "web",
}

# A failed result whose words name no known cause is classified by the API status.
_STATUS_KINDS: dict[int, ErrorKind] = {
    401: "authentication",
    402: "billing",
    429: "rate-limit",
    500: "server",
    502: "server",
    503: "server",
    504: "server",
    529: "server",
}

_SUBTYPE_KINDS: dict[str, ErrorKind] = {
    "error_max_turns": "max-turns",
    "error_max_budget_usd": "budget",
}

_SKIP_PERMISSIONS = "--dangerously-skip-permissions"

#: What an eval run may do without asking: edit files and run commands in its throwaway
#: workspace. ``eval_agent_args`` adds to these and replaces one only where it sets the
#: same thing (docs/agents.md, "Permissions"): its own permission mode keeps the tools.
PERMISSIONS = (
    output.Default(("--permission-mode", "acceptEdits"), ("--permission-mode", _SKIP_PERMISSIONS)),
    output.Default(("--allowedTools", "Bash"), ("--allowedTools", "--allowed-tools")),
)

#: Claude Code's user-level directory; ``.credentials.json`` holds a ``claude login``.
HOME = home.Home("CLAUDE_CONFIG_DIR", ".claude", (".credentials.json",), beside=(".claude.json",))

#: Variables that send the CLI's requests to another cloud than the model API's own.
PROVIDERS = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")

#: The credentials a bare run reads: an API key, or a gateway's bearer token.
BARE_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")

#: What the session checks before the first run (docs/agents.md, "Before the first run").
#: ``--bare`` skips the login and the keychain: a bare run reads ANTHROPIC_API_KEY or
#: ANTHROPIC_AUTH_TOKEN (sent as ``Authorization: Bearer``, as an LLM gateway takes it;
#: tried with 2.1.197).
REQUIREMENTS = Requirements(
    install="npm install -g @anthropic-ai/claude-code",
    credentials=Credentials(
        variables=("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"),
        home=HOME,
        providers=PROVIDERS,
        bare_variables=BARE_VARIABLES,
        keychain=True,
        # A bare run insists on a key; no telemetry, update check or other request of
        # its own (tried with 2.1.197).
        scripted=(
            ("ANTHROPIC_API_KEY", SCRIPTED_KEY),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        ),
    ),
    # Managed settings and policy memory (CLAUDE.md, managed-settings.json,
    # managed-settings.d/, managed-mcp.json): CLAUDE.md reaches every request of a run
    # that is not bare (tried with 2.1.197).
    machine_config=(("", "/etc/claude-code"),),
)


#: Where Claude Code sends its requests, and the variable that moves it.
BASE_URL = "ANTHROPIC_BASE_URL"
API_URL = "https://api.anthropic.com"


class ClaudeAgent(base.AgentBase):
    """Runs ``claude -p PROMPT --output-format json`` in the workspace.

    With a transcript requested (a tool check in the case, or ``--eval-transcript``) it
    asks for ``--output-format stream-json --verbose`` instead and reads the tool calls
    from the ``tool_use`` blocks of the ``assistant`` events. A bare case adds
    ``--bare`` (no discovery of CLAUDE.md, hooks, skills, plugins, MCP servers or the
    keychain: the credential comes from ``ANTHROPIC_API_KEY`` or ``ANTHROPIC_AUTH_TOKEN``)
    and ``--add-dir WORKSPACE``, which loads the workspace's instructions explicitly
    (``CLAUDE.md``, its imports, ``CLAUDE.local.md``, ``.claude/CLAUDE.md``,
    ``.claude/rules/``).
    """

    name = "claude"
    #: Tool calls carry their inputs (the shell command of a ``Bash`` call, ...).
    tool_inputs = True
    requirements = REQUIREMENTS
    has_home = True
    #: ``--session-id`` starts a conversation, ``--resume`` continues it.
    continues = True
    mcp_config: base.McpConfig = "flags"

    def __init__(self, settings: base.AgentSettings) -> None:
        super().__init__(settings)
        #: The extra arguments and the default permissions they do not set themselves.
        self.args = output.with_permissions(settings.args, PERMISSIONS)

    def invocation(self, request: base.RunRequest) -> base.Invocation:
        argv = ["claude", "-p"]
        stdin = None
        if request.prompt.startswith("-"):
            # A positional argument starting with "-" would be read as an option;
            # print mode takes the prompt from standard input instead.
            stdin = request.prompt
        else:
            argv.append(request.prompt)
        if self._wants_transcript(request):
            # Print mode refuses stream-json without --verbose.
            argv += ["--output-format", "stream-json", "--verbose"]
            if request.hook_events:
                # What tells a hook's refusal from a permission rule's (_denials).
                argv.append("--include-hook-events")
        else:
            argv += ["--output-format", "json"]
        if request.bare:
            # --bare alone reads no CLAUDE.md at all: the configuration under test must
            # be handed in (docs/agents.md, "What reaches the model").
            argv += ["--bare", "--add-dir", str(request.workspace)]
        if self.settings.model:
            argv += ["--model", self.settings.model]
        if request.session is not None:
            # The plugin names the session up front; every other flag is repeated on a
            # follow-up, which keeps none of them (docs/conversations.md).
            argv += ["--resume" if request.follow_up else "--session-id", request.session]
        argv += self.args
        argv += _mcp_args(request)
        return base.Invocation(tuple(argv), stdin=stdin)

    def model_api(self, env: Mapping[str, str]) -> base.ModelAPI | None:
        """The Messages API at ``ANTHROPIC_BASE_URL`` (default Anthropic's); ``None``
        when the CLI is told to use Bedrock, Vertex AI or Foundry instead."""
        if any(env.get(name) for name in PROVIDERS):
            return None
        return base.ModelAPI(env.get(BASE_URL) or API_URL, BASE_URL, "anthropic")

    def home_paths(self, env: Mapping[str, str]) -> tuple[Path, ...]:
        """The operator's own home that the CLI writes to (``eval_agent_home = inherit``)."""
        return home.own_paths(HOME, env)

    def isolate(self, root: Path, env: Mapping[str, str]) -> Mapping[str, str]:
        """A fresh ``CLAUDE_CONFIG_DIR`` in ``root`` holding only the login's credentials."""
        variables, _ = home.make(HOME, root, env)
        return variables

    def parse(self, result: process.ProcessResult, request: base.RunRequest) -> base.AgentResult:
        events = output.json_objects(result.stdout)
        final = next((e for e in reversed(events) if e.get("type") == "result"), None)
        if final is None:
            failed = [e for e in events if e.get("type") == "assistant" and e.get("error")]
            if failed:
                # The stream stopped after the CLI's synthetic error message.
                words = _assistant_text(failed[-1])
                code = str(failed[-1]["error"])
                raise output.agent_error(
                    self.name, output.classify(code, words), f"{words} ({code})"
                )
            raise output.no_result_error(
                self.name, result, "result event", hint=self._root_hint(request)
            )
        if final.get("is_error") is True:
            # `subtype` may still say "success" on a failed run: is_error decides.
            raise self._result_error(final, events, request)
        return base.AgentResult(
            text=final["result"] if isinstance(final.get("result"), str) else "",
            tool_calls=_tool_calls(events) if len(events) > 1 else None,
            usage=_usage(output.as_object(final.get("usage"))),
            cost_usd=output.as_float(final.get("total_cost_usd")),
            models=_models(final, events),
            duration_ms=output.as_int(final.get("duration_ms")) or output.measured_ms(result),
            num_turns=output.as_int(final.get("num_turns")),
            exit_code=result.returncode,
            truncated=result.truncated,
            denials=_denials(final.get("permission_denials"), events, request.hook_events),
            hooks=_hooks(events) if request.hook_events else None,
            session=output.as_str(final.get("session_id")) or request.session,
            mcp_connected=_mcp_connected(events),
        )

    def _wants_transcript(self, request: base.RunRequest) -> bool:
        return request.needs_transcript or self.settings.transcript

    def _result_error(
        self, final: output.JSONObject, events: list[output.JSONObject], request: base.RunRequest
    ) -> AgentError:
        said: list[str] = []
        if isinstance(final.get("result"), str):
            said.append(final["result"])
        errors = final.get("errors")
        if isinstance(errors, list):
            said.extend(str(e) for e in errors)
        codes = [str(e["error"]) for e in events if e.get("type") == "assistant" and e.get("error")]
        status = output.as_int(final.get("api_error_status"))
        subtype = final.get("subtype")

        found = _SUBTYPE_KINDS.get(subtype) if isinstance(subtype, str) else None
        kind = found or output.classify(*said, *codes)
        if kind == "agent" and status is not None:
            kind = _STATUS_KINDS.get(status, "agent")

        words = "; ".join(said) or f"is_error with subtype {subtype!r}"
        details = [f"API status {status}"] if status is not None else []
        details += [f"error: {c}" for c in codes]
        if subtype and subtype != "success":
            details.append(f"subtype: {subtype}")
        if details:
            words += f" ({', '.join(details)})"
        # A run stopped at its turn or budget limit was paid for up to there.
        usage = _usage(output.as_object(final.get("usage")))
        spent = usage.spent(output.as_float(final.get("total_cost_usd")))
        return output.agent_error(
            self.name, kind, words, hint=self._hint(kind, request), spent=spent
        )

    def _hint(self, kind: str, request: base.RunRequest) -> str:
        keyless = not any(request.env.get(name) for name in BARE_VARIABLES)
        if kind == "authentication" and request.bare and keyless:
            return (
                "bare cases run `claude --bare`, which authenticates with ANTHROPIC_API_KEY "
                "or ANTHROPIC_AUTH_TOKEN only (no keychain or login); set one, or "
                "`bare: false` on the case"
            )
        if kind == "max-turns":
            return "raise --max-turns in eval_agent_args, or make the task smaller"
        return ""

    def _root_hint(self, request: base.RunRequest) -> str:
        # Claude Code refuses --dangerously-skip-permissions as root outside a sandbox,
        # which is exactly how CI containers run it.
        args = self.args
        bypass = (
            _SKIP_PERMISSIONS in args
            or output.option_value(args, "--permission-mode") == "bypassPermissions"
        )
        if bypass and os.geteuid() == 0 and "IS_SANDBOX" not in request.env:
            return (
                "claude refuses to skip permission prompts "
                f"({_SKIP_PERMISSIONS}) when run as root; "
                "set IS_SANDBOX=1 in the environment of pytest (in a container or VM only)"
            )
        return ""


def _mcp_args(request: base.RunRequest) -> list[str]:
    """The MCP servers of the run and only those (docs/mcp.md): ``--strict-mcp-config``
    on every run, so that no server of the operator's ``.claude.json`` starts; the
    case's servers inline and, with ``bare`` false, the workspace's ``.mcp.json``, which
    the strict flag ignores unless it is named; each server's tools allowed, which
    print mode refuses otherwise (tried with 2.1.197)."""
    args = ["--strict-mcp-config"]
    configs = []
    names = [server.name for server in request.mcp_servers]
    if request.mcp_servers:
        servers = {server.name: server.as_json() for server in request.mcp_servers}
        configs.append(json.dumps({"mcpServers": servers}))
    workspace_config = request.workspace / ".mcp.json"
    if not request.bare and workspace_config.is_file():
        configs.append(str(workspace_config))
        names += list(mcp.workspace_servers(workspace_config))
    if configs:
        args += ["--mcp-config", *configs]
    if names:
        args += ["--allowedTools", *(f"mcp__{name}" for name in names)]
    return args


def _assistant_text(event: output.JSONObject) -> str:
    content = output.as_object(event.get("message")).get("content")
    if not isinstance(content, list):
        return ""
    return " ".join(
        str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
    )


def _tool_calls(events: list[output.JSONObject]) -> tuple[base.ToolCall, ...]:
    calls: list[base.ToolCall] = []
    seen: set[str] = set()
    for event in events:
        if event.get("type") != "assistant":
            continue
        content = output.as_object(event.get("message")).get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            # With partial messages the same block can be printed more than once.
            block_id = block.get("id")
            if isinstance(block_id, str):
                if block_id in seen:
                    continue
                seen.add(block_id)
            name = str(block.get("name", ""))
            kind = output.tool_kind(name, TOOL_KINDS)
            value = block.get("input", {})
            text = (
                output.tool_input(value, "command") if kind == "shell" else output.tool_input(value)
            )
            calls.append(base.ToolCall(name=name, kind=kind, input=text))
    return tuple(calls)


def _denials(
    value: object, events: list[output.JSONObject], hook_events: bool
) -> tuple[base.Denial, ...] | None:
    """``permission_denials`` of the result: every call the CLI refused, by a permission
    rule or by a PreToolUse hook alike (tried with 2.1.197); ``None`` from a CLI whose
    result has no such field. Which refused it is told with the hook events only
    (:func:`_blocker`)."""
    if not isinstance(value, list):
        return None
    denied = []
    listed = set()
    for entry in value:
        if not isinstance(entry, dict):
            continue
        name = str(entry.get("tool_name") or "?")
        kind = output.tool_kind(name, TOOL_KINDS)
        keys = ("command",) if kind == "shell" else ()
        text = output.tool_input(entry.get("tool_input"), *keys)
        by = _blocker(events, entry.get("tool_use_id"), name) if hook_events else None
        denied.append(base.Denial(name, kind, text, by))
        listed.add(entry.get("tool_use_id"))
    return (*denied, *_path_denials(events, listed))


#: The error a file tool's call gets when a deny rule names its path (``Read(./.env)``):
#: Claude Code 2.1.197 refuses it before asking, and leaves it out of
#: ``permission_denials``.
PATH_DENIED = "denied by your permission settings"


def _path_denials(events: list[output.JSONObject], listed: set[object]) -> list[base.Denial]:
    """The calls of a file tool refused by a deny rule on their path, but for those
    already ``listed`` (by call id)."""
    calls: dict[object, output.JSONObject] = {}
    for event in events:
        for block in _blocks(event, "tool_use"):
            calls.setdefault(block.get("id"), block)
    denied = []
    for event in events:
        for block in _blocks(event, "tool_result"):
            call = calls.get(block.get("tool_use_id"))
            said = str(block.get("content", ""))
            refused = block.get("is_error") is True and PATH_DENIED in said
            if call is None or not refused or block.get("tool_use_id") in listed:
                continue
            listed.add(block.get("tool_use_id"))
            name = str(call.get("name", ""))
            kind = output.tool_kind(name, TOOL_KINDS)
            denied.append(
                base.Denial(name, kind, output.tool_input(call.get("input")), "permission")
            )
    return denied


def _blocker(events: list[output.JSONObject], call_id: object, tool: str) -> base.Blocker | None:
    """What refused the call ``call_id`` of ``tool``, from a stream with hook events: a
    PreToolUse hook whose response between the call and its result refused it (exit
    status 2, or ``permissionDecision: deny``), else a permission rule. ``None`` where
    the stream cannot tell: the call or its result is missing, or another call of the
    same tool was open at the same time, to which the hook's response may belong."""
    spans = _call_spans(events, tool)
    start, end = spans.get(call_id, (0, None)) if isinstance(call_id, str) else (0, None)
    if end is None:
        return None
    refused = any(
        event.get("subtype") == "hook_response"
        and event.get("hook_event") == "PreToolUse"
        and str(event.get("hook_name", "")).partition(":")[2] in ("", tool)
        and _hook_refused(event)
        for event in events[start:end]
    )
    if not refused:
        return "permission"
    shared = any(
        other != call_id and began < end and (ended is None or ended > start)
        for other, (began, ended) in spans.items()
    )
    return None if shared else "hook"


def _call_spans(events: list[output.JSONObject], tool: str) -> dict[str, tuple[int, int | None]]:
    """Where each call of ``tool`` was made and where its result came, by call id (the
    indexes of their events; ``None`` where the stream has no result)."""
    spans: dict[str, tuple[int, int | None]] = {}
    for index, event in enumerate(events):
        for block in _blocks(event, "tool_use"):
            # With partial messages the same block can be printed more than once.
            if block.get("name") == tool and isinstance(block.get("id"), str):
                spans.setdefault(block["id"], (index, None))
        for block in _blocks(event, "tool_result"):
            call = block.get("tool_use_id")
            if isinstance(call, str) and call in spans:
                spans[call] = (spans[call][0], index)
    return spans


def _blocks(event: output.JSONObject, kind: str) -> list[output.JSONObject]:
    """The content blocks of type ``kind`` of an ``assistant`` or ``user`` event."""
    content = output.as_object(event.get("message")).get("content")
    if event.get("type") not in ("assistant", "user") or not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind]


def _hook_refused(event: output.JSONObject) -> bool:
    """Whether a PreToolUse hook's response refused the call: exit status 2, or JSON on
    its standard output deciding ``deny`` (or the older ``decision: block``)."""
    if output.as_int(event.get("exit_code")) == 2:
        return True
    said = output.json_objects(str(event.get("stdout") or ""))
    for answer in said:
        specific = output.as_object(answer.get("hookSpecificOutput"))
        if specific.get("permissionDecision") == "deny" or answer.get("decision") == "block":
            return True
    return False


#: How a tool result quotes the command of the hook that refused the call (2.1.197):
#: ``PreToolUse:Bash hook error: [COMMAND]: REASON``.
_HOOK_ERROR = re.compile(r"(?P<name>\S+) hook error: \[(?P<command>.*?)\]: ", re.DOTALL)


def _hooks(events: list[output.JSONObject]) -> tuple[base.HookRun, ...]:
    """The hooks the CLI ran, from the ``hook_started`` / ``hook_response`` events of
    ``--include-hook-events``, in order: the event, Claude Code's name for the hook (the
    event and, for tool events, the tool: ``PreToolUse:Bash``) and whether it refused
    (:func:`_hook_refused`). The events do not name the hook's command; a refusal's tool
    result quotes it, and only there is it known (docs/config-contract.md)."""
    quoted: dict[str, list[str]] = {}
    for event in events:
        for block in _blocks(event, "tool_result"):
            for text in _texts(block.get("content")):
                for match in _HOOK_ERROR.finditer(text):
                    quoted.setdefault(match["name"], []).append(match["command"])
    responses = {
        event.get("hook_id"): event for event in events if event.get("subtype") == "hook_response"
    }
    runs: list[base.HookRun] = []
    for event in events:
        if event.get("type") != "system" or event.get("subtype") != "hook_started":
            continue
        name = str(event.get("hook_name") or "")
        response = responses.get(event.get("hook_id"))
        refused = response is not None and _hook_refused(response)
        # The refusals of one hook name are quoted in the order they ran.
        waiting = quoted.get(name) if refused else None
        command = waiting.pop(0) if waiting else None
        runs.append(
            base.HookRun(
                str(event.get("hook_event") or name.partition(":")[0]), command, name, refused
            )
        )
    return tuple(runs)


def _texts(content: object) -> list[str]:
    """The texts of a tool result's ``content``: a string, or a list of text blocks."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [str(b.get("text", "")) for b in content if isinstance(b, dict)]
    return []


def _usage(usage: output.JSONObject) -> base.Usage:
    return base.Usage(
        input_tokens=output.as_int(usage.get("input_tokens")),
        output_tokens=output.as_int(usage.get("output_tokens")),
        cache_read_tokens=output.as_int(usage.get("cache_read_input_tokens")),
        cache_write_tokens=output.as_int(usage.get("cache_creation_input_tokens")),
    )


def _mcp_connected(events: list[output.JSONObject]) -> tuple[str, ...] | None:
    """The MCP servers the init event of ``stream-json`` reports ``connected`` (others
    are ``failed``, ``pending``, …; tried with 2.1.197); ``None`` without the event."""
    for event in events:
        if event.get("type") == "system" and event.get("subtype") == "init":
            servers = map(output.as_object, event.get("mcp_servers") or ())
            return tuple(str(s.get("name")) for s in servers if s.get("status") == "connected")
    return None


def _models(final: output.JSONObject, events: list[output.JSONObject]) -> tuple[str, ...]:
    models = tuple(output.as_object(final.get("modelUsage")))
    if models:
        return models
    for event in events:
        if event.get("type") == "system" and event.get("subtype") == "init":
            model = event.get("model")
            if isinstance(model, str) and model:
                return (model,)
    return ()
