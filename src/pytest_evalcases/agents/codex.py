"""The ``codex`` agent: OpenAI Codex CLI in non-interactive mode (``codex exec --json``)."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from pathlib import Path

from pytest_evalcases import process
from pytest_evalcases.agents import base, home, output
from pytest_evalcases.agents.requirements import SCRIPTED_KEY, Credentials, Requirements
from pytest_evalcases.errors import AgentError

#: What an eval run may do: write in its workspace and run commands there.
#: ``eval_agent_args`` adds to it and replaces it where it chooses a sandbox itself
#: (docs/agents.md, "Permissions").
PERMISSIONS = (
    output.Default(
        ("-s", "workspace-write"),
        (
            "-s",
            "--sandbox",
            "--dangerously-bypass-approvals-and-sandbox",
            "--full-auto",
            # `-c sandbox_mode=...`: the same choice through the configuration.
            "sandbox_mode",
        ),
    ),
)

#: Codex's user-level directory; ``auth.json`` holds a ``codex login`` or its API key.
HOME = home.Home("CODEX_HOME", ".codex", ("auth.json",))

#: The variables of an API key.
KEY_VARIABLES = ("OPENAI_API_KEY", "CODEX_API_KEY")

#: What the session checks before the first run (docs/agents.md, "Before the first run").
REQUIREMENTS = Requirements(
    install="npm install -g @openai/codex",
    credentials=Credentials(
        variables=KEY_VARIABLES,
        home=HOME,
        provider_args=("model_provider=", "--oss", "--local-provider"),
        # The key the scripted provider sends (SCRIPTED_PROVIDER's env_key).
        scripted=(("OPENAI_API_KEY", SCRIPTED_KEY),),
    ),
    # config.toml, managed_config.toml, requirements.toml and skills/ of the system: the
    # developer_instructions of its config.toml reach every request (tried with 0.171).
    machine_config=(("", "/etc/codex"),),
)

#: The configuration key of the built-in OpenAI provider's base URL (``-c KEY=URL``),
#: and its default.
BASE_URL_KEY = "openai_base_url"
API_URL = "https://api.openai.com/v1"
#: Extra arguments that send requests to another provider than OpenAI's.
PROVIDER_ARGS = ("model_provider=", "model_providers.", "--oss", "--local-provider")

#: The model provider a scripted run's Codex is given (docs/config-contract.md).
SCRIPTED_PROVIDER = "evalcases-scripted"

_ITEM_EVENTS = ("item.started", "item.updated", "item.completed")

# Codex prints these while it retries a dropped connection; they only matter when
# the run never completes.
_RECONNECTING = re.compile(r"^\s*Reconnecting\b", re.IGNORECASE)

#: How ``codex exec`` 0.171 says that it refused a command: only on stderr, in the log
#: line of its tool router (its JSON stream has no item for the call), for a PreToolUse
#: hook, for a rule of its execution policy (``prefix_rule(…, decision =
#: "forbidden")``) and for a call asking to leave the sandbox, which ``exec`` never
#: approves (its approval policy is ``never``; no command named) (docs/config-contract.md).
_REFUSED = re.compile(
    r"ERROR codex_core::tools::router: error=(?:"
    r"Command blocked by PreToolUse hook: .*?\. "
    r"Command: (?P<hooked>.*)"
    r"|exec_command failed: .*?Rejected\(\\?\"`(?P<ruled>.*?)` rejected: policy forbids.*"
    r"|(?P<never>approval policy is Never; reject command)\b.*)$",
    re.MULTILINE,
)


def _scripted_provider(url: str) -> str:
    """The ``-c`` value defining :data:`SCRIPTED_PROVIDER` at ``url``: the Responses API,
    keyed by ``OPENAI_API_KEY`` (the stand-in of a scripted run), never retried."""
    fields = (
        f'name="scripted",base_url={json.dumps(url)},env_key="OPENAI_API_KEY",'
        'wire_api="responses",request_max_retries=0,stream_max_retries=0'
    )
    return f"model_providers.{SCRIPTED_PROVIDER}={{{fields}}}"


class CodexAgent(base.AgentBase):
    """Runs ``codex exec --json --skip-git-repo-check PROMPT`` in the workspace.

    The JSONL event stream gives the final text (the last ``agent_message`` item), the
    token usage (``turn.completed``) and the tool calls: ``command_execution`` items
    (kind ``shell``, input = the command), ``file_change`` items (``edit``),
    ``web_search`` (``web``) and ``mcp_tool_call`` (``other``). The stream names no
    model and no cost: the model recorded is the one given with ``eval_model`` or
    ``-m`` in the extra arguments.
    """

    name = "codex"
    #: Tool calls carry their inputs (the command of a ``command_execution``).
    tool_inputs = True
    requirements = REQUIREMENTS
    has_home = True
    mcp_config: base.McpConfig = "flags"
    #: ``codex exec resume THREAD`` continues the thread that ``thread.started`` named.
    continues = True

    def __init__(self, settings: base.AgentSettings) -> None:
        super().__init__(settings)
        #: The extra arguments and the default permissions they do not set themselves.
        self.args = output.with_permissions(settings.args, PERMISSIONS)
        model = settings.model or output.option_value(settings.args, "-m", "--model")
        self.models = (model,) if model else ()

    def invocation(self, request: base.RunRequest) -> base.Invocation:
        # The workspace is outside any git repository, which codex refuses by default.
        resume = request.follow_up and request.session is not None
        argv = ["codex", "exec", *(["resume"] if resume else []), "--json", "--skip-git-repo-check"]
        if self.settings.model:
            argv += ["-m", self.settings.model]
        argv += _resumable(self.args) if resume else self.args
        if request.base_url is not None and request.scripted:
            # A provider of the plugin's own, keyed by the stand-in: the built-in one
            # sends the key of an auth.json in CODEX_HOME, the operator's under
            # `eval_agent_home = inherit` (tried with 0.171).
            argv += ["-c", f"model_provider={json.dumps(SCRIPTED_PROVIDER)}"]
            argv += ["-c", _scripted_provider(request.base_url)]
        elif request.base_url is not None:
            # After the user's own -c: the last override wins.
            argv += ["-c", f"{BASE_URL_KEY}={json.dumps(request.base_url)}"]
        argv += _mcp_args(request)
        if resume:
            assert request.session is not None
            argv.append(request.session)
        if request.prompt.startswith("-"):
            # It would be read as an option; "-" makes codex read the prompt from stdin.
            return base.Invocation((*argv, "-"), stdin=request.prompt)
        return base.Invocation((*argv, request.prompt))

    def model_api(self, env: Mapping[str, str]) -> base.ModelAPI | None:
        """The Responses API of the built-in OpenAI provider, at ``openai_base_url``
        when the extra arguments set it (default OpenAI's); ``None`` when they choose
        another provider, and with a ChatGPT login, whose requests go elsewhere."""
        if any(arg.startswith(PROVIDER_ARGS) for arg in self.settings.args):
            return None
        keyed = any(env.get(name) for name in KEY_VARIABLES)
        login = home.read_json(home.source_dir(HOME, env) / "auth.json")
        if not keyed and login.get("tokens") and not login.get("OPENAI_API_KEY"):
            return None
        given = _config_value(self.settings.args, BASE_URL_KEY)
        return base.ModelAPI(given or API_URL, dialect="openai")

    def home_paths(self, env: Mapping[str, str]) -> tuple[Path, ...]:
        """The operator's own home that the CLI writes to (``eval_agent_home = inherit``)."""
        return home.own_paths(HOME, env)

    def isolate(self, root: Path, env: Mapping[str, str]) -> Mapping[str, str]:
        """A fresh ``CODEX_HOME`` in ``root`` holding only ``auth.json``: no AGENTS.md,
        config.toml, skills or history of the operator's."""
        variables, _ = home.make(HOME, root, env)
        return variables

    def parse(self, result: process.ProcessResult, request: base.RunRequest) -> base.AgentResult:
        items: dict[str, output.JSONObject] = {}
        completed = False
        usage = [0, 0, 0]
        thread: str | None = None
        failures: list[str] = []
        errors: list[str] = []
        for index, event in enumerate(output.json_objects(result.stdout)):
            kind = event.get("type")
            if kind == "thread.started":
                thread = output.as_str(event.get("thread_id"))
            elif kind in _ITEM_EVENTS:
                item = output.as_object(event.get("item"))
                # A command is announced by item.started and repeated by item.completed:
                # keyed by id, each item is counted once, in its latest state.
                key = item.get("id")
                items[key if isinstance(key, str) else f"#{index}"] = item
            elif kind == "turn.completed":
                completed = True
                counts = output.as_object(event.get("usage"))
                for i, field in enumerate(("input_tokens", "cached_input_tokens", "output_tokens")):
                    usage[i] += output.as_int(counts.get(field)) or 0
            elif kind == "turn.failed":
                error = event.get("error")
                message = output.as_object(error).get("message", error)
                failures.append(str(message))
            elif kind == "error":
                errors.append(str(event.get("message", "")))

        if failures:
            raise output.agent_error(self.name, output.classify(*failures), "; ".join(failures))
        if not completed:
            if errors:
                fatal = [e for e in errors if not _RECONNECTING.match(e)] or errors[-1:]
                raise output.agent_error(
                    self.name,
                    output.classify(*fatal),
                    "; ".join(fatal) + " (the stream ended without turn.completed)",
                )
            raise output.no_result_error(self.name, result, "turn.completed event")

        texts = [
            str(item.get("text", ""))
            for item in items.values()
            if _item_type(item) in ("agent_message", "assistant_message")
        ]
        return base.AgentResult(
            text=texts[-1] if texts else "",
            tool_calls=tuple(call for item in items.values() if (call := _tool_call(item))),
            usage=_this_turn(
                base.Usage(
                    input_tokens=usage[0], cache_read_tokens=usage[1], output_tokens=usage[2]
                ),
                request,
            ),
            models=self.models,
            duration_ms=output.measured_ms(result),
            exit_code=result.returncode,
            truncated=result.truncated,
            denials=_denials(result.stderr),
            # Nothing that `codex exec` 0.171 prints shows the hooks it ran: a hook check
            # is an error naming the agent (docs/config-contract.md).
            hooks=None,
            session=thread,
        )


def _resumable(args: tuple[str, ...]) -> tuple[str, ...]:
    """``args`` as ``codex exec resume`` takes them: it has no ``-s``/``--sandbox``,
    whose choice becomes ``-c sandbox_mode=…``, and no ``-C``/``--cd`` (the process
    runs in the workspace anyway) nor ``--color`` (``--json`` has none); an option of
    ``exec`` that it lacks and that would change the run is an error of kind
    ``config`` (docs/conversations.md)."""
    kept: list[str] = []
    words = iter(args)
    for arg in words:
        name, eq, value = arg.partition("=")
        if name in _NOT_RESUMABLE:
            raise AgentError(
                f"agent 'codex': `codex exec resume` (0.171) has no {name}, which "
                "eval_agent_args gives: a case with follow_ups cannot run with it",
                kind="config",
            )
        if name == "--color":
            if not eq:
                next(words, None)
        elif name in ("-s", "--sandbox"):
            mode = value if eq else next(words, "")
            kept += ["-c", f"sandbox_mode={json.dumps(mode)}"]
        elif name in ("-C", "--cd"):
            if not eq:
                next(words, None)
        else:
            kept.append(arg)
    return tuple(kept)


#: Options of ``codex exec`` that ``codex exec resume`` lacks (0.171) and that change
#: the run: a follow-up cannot repeat them.
_NOT_RESUMABLE = ("-p", "--profile", "--add-dir", "--oss", "--local-provider", "--approve-for-me")


def _this_turn(reported: base.Usage, request: base.RunRequest) -> base.Usage:
    """A follow-up's own tokens: ``turn.completed`` of ``codex exec resume`` counts the
    whole thread so far (0.171), so what its earlier turns reported is taken off."""
    if not request.follow_up:
        return reported
    before = request.earlier

    def own(total: int | None, earlier: int | None) -> int | None:
        return None if total is None else max(total - (earlier or 0), 0)

    return base.Usage(
        input_tokens=own(reported.input_tokens, before.input_tokens),
        output_tokens=own(reported.output_tokens, before.output_tokens),
        cache_read_tokens=own(reported.cache_read_tokens, before.cache_read_tokens),
        cache_write_tokens=own(reported.cache_write_tokens, before.cache_write_tokens),
    )


def _denials(stderr: str) -> tuple[base.Denial, ...]:
    """The commands the CLI refused, as its stderr names them: by a hook, with the
    command as the model wrote it, or by its permissions, a rule's as the shell ran it
    (``/bin/bash -lc '…'``), an escalation's without it."""
    return tuple(
        base.Denial("command_execution", "shell", match["hooked"], "hook")
        if match["hooked"] is not None
        else base.Denial("command_execution", "shell", match["ruled"] or "", "permission")
        for match in _REFUSED.finditer(stderr)
    )


def _config_value(args: tuple[str, ...], key: str) -> str | None:
    """The value of the last ``-c KEY=VALUE`` among ``args``, a TOML string unquoted."""
    found: str | None = None
    for i, arg in enumerate(args[:-1]):
        if arg in ("-c", "--config") and args[i + 1].startswith(key + "="):
            found = args[i + 1][len(key) + 1 :].strip()
    if found is not None and len(found) >= 2 and found[0] == found[-1] and found[0] in "\"'":
        found = found[1:-1]
    return found


def _mcp_args(request: base.RunRequest) -> list[str]:
    """``-c mcp_servers.NAME={…}`` for each server of the case (docs/mcp.md), its calls
    approved: ``exec`` asks nobody, and refuses a call that needs approval. The servers
    of a workspace's ``.codex/config.toml`` start in a trusted project only (``--trust``
    in the extra arguments, as for its hooks and rules; tried with 0.171)."""
    args = []
    for server in request.mcp_servers:
        spec = {**server.as_json(), "default_tools_approval_mode": "approve"}
        args += ["-c", f"mcp_servers.{server.name}={_toml(spec)}"]
    return args


def _toml(value: object) -> str:
    """``value`` as a TOML inline value, for a ``-c`` override (a JSON string is a TOML
    basic string)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{json.dumps(str(k))}={_toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_toml(v) for v in value) + "]"
    return json.dumps(str(value))


def _item_type(item: output.JSONObject) -> str:
    # Early releases of `codex exec --json` called the field item_type.
    return str(item.get("type") or item.get("item_type") or "")


def _tool_call(item: output.JSONObject) -> base.ToolCall | None:
    kind = _item_type(item)
    if kind == "command_execution":
        command = item.get("command", "")
        if isinstance(command, list) and all(isinstance(w, str) for w in command):
            # Older releases gave the argv rather than one command line.
            command = shlex.join(command)
        return base.ToolCall(kind, "shell", output.tool_input(command))
    if kind == "file_change":
        return base.ToolCall(kind, "edit", output.tool_input(item.get("changes", [])))
    if kind == "web_search":
        return base.ToolCall(kind, "web", output.tool_input(item.get("query", "")))
    if kind == "mcp_tool_call":
        server, tool = item.get("server"), item.get("tool")
        name = f"{server}.{tool}" if server else str(tool)
        return base.ToolCall(name, "other", output.tool_input(item.get("arguments", {})))
    return None
