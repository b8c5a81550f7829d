"""Pydantic models of case files: the case, its checks (a tagged union on ``type``),
and the task-directory ``checks.yaml`` format.

These models are the single source of truth: the loader validates with them and
``evalcases schema`` prints their JSON Schema.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from pytest_evalcases.cases import limits
from pytest_evalcases.cases.fields import (
    AgentName,
    FixtureDir,
    KebabId,
    Regex,
    Tag,
    WorkspacePath,
    no_nul,
)
from pytest_evalcases.cases.scripting import (
    McpServerModel,
    McpServerName,
    ScriptTurn,
)
from pytest_evalcases.kinds import CheckMode, Severity

TASK_SEVERITY: dict[str, Severity] = {"HIGH": "critical", "MEDIUM": "normal", "LOW": "advisory"}
#: The longest ``timeout:`` a case or a check may ask for: a day, in seconds (a larger or
#: infinite one would validate and then fail when the run waits).
MAX_TIMEOUT = 86400.0


class CheckModel(BaseModel):
    """Fields every check has. Subclasses add ``type`` and their own fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    _strings_without_nul = field_validator("*", mode="after")(no_nul)

    type: str
    id: str | None = Field(
        default=None,
        min_length=1,
        max_length=limits.ID_CHARS,
        description="Default: <type>-<index>",
    )
    description: str | None = Field(
        default=None, max_length=limits.LINE_CHARS, description="Shown in reports"
    )
    mode: CheckMode | None = Field(
        default=None,
        description="The failure category this check's failure stands for: a failed run "
        "takes the mode of its first failing check that has one (docs/case-format.md, "
        '"Failure modes of checks")',
    )


class TurnCheck(CheckModel):
    """A check that can read one turn of a conversation (docs/conversations.md)."""

    turn: int | None = Field(
        default=None,
        ge=1,
        description="Only this turn of the conversation (1 = `prompt`, 2 = the first of "
        "`follow_ups`); default: the last answer, every turn's calls",
    )


class OutputMatches(TurnCheck):
    """The agent's final answer matches ``pattern``."""

    type: Literal["output_matches"]
    pattern: Regex


class OutputNotMatches(TurnCheck):
    """The agent's final answer does not match ``pattern``."""

    type: Literal["output_not_matches"]
    pattern: Regex


class FileExists(CheckModel):
    """At least one workspace file matches ``path`` (a glob)."""

    type: Literal["file_exists"]
    path: WorkspacePath


class FileAbsent(CheckModel):
    """No workspace file matches ``path`` (a glob)."""

    type: Literal["file_absent"]
    path: WorkspacePath


class DirectoryExists(CheckModel):
    """The directory ``path`` exists in the workspace."""

    type: Literal["directory_exists"]
    path: WorkspacePath


class FileMatches(CheckModel):
    """The file exists and its text matches ``pattern``."""

    type: Literal["file_matches"]
    path: WorkspacePath
    pattern: Regex


class FileNotMatches(CheckModel):
    """The file exists and its text does not match ``pattern``."""

    type: Literal["file_not_matches"]
    path: WorkspacePath
    pattern: Regex


class _FileOrPath(CheckModel):
    file: WorkspacePath | None = None
    path: WorkspacePath | None = None
    pattern: Regex

    @model_validator(mode="after")
    def _one_path(self) -> _FileOrPath:
        if (self.file is None) == (self.path is None):
            raise ValueError("give exactly one of `file` or `path`")
        return self

    @property
    def target(self) -> str:
        """The workspace path, whichever field named it."""
        target = self.file if self.file is not None else self.path
        assert target is not None
        return target


class FileContains(_FileOrPath):
    """Alias of ``file_matches`` (task-directory format): ``file`` or ``path``."""

    type: Literal["file_contains"]


class FileNotContains(_FileOrPath):
    """Alias of ``file_not_matches`` (task-directory format): ``file`` or ``path``."""

    type: Literal["file_not_contains"]


class FileUnchanged(CheckModel):
    """The file is byte-identical to the fixture's copy."""

    type: Literal["file_unchanged"]
    path: WorkspacePath


class CommandSucceeds(CheckModel):
    """The shell command exits 0 in the workspace."""

    type: Literal["command_succeeds"]
    command: str = Field(min_length=1, max_length=limits.TEXT_CHARS)
    timeout: float | None = Field(default=None, gt=0, le=MAX_TIMEOUT, allow_inf_nan=False)


class CommandFails(CheckModel):
    """The shell command exits non-zero in the workspace."""

    type: Literal["command_fails"]
    command: str = Field(min_length=1, max_length=limits.TEXT_CHARS)
    timeout: float | None = Field(default=None, gt=0, le=MAX_TIMEOUT, allow_inf_nan=False)


class ToolCalled(TurnCheck):
    """The transcript has a call whose tool (name or kind) and input match."""

    type: Literal["tool_called"]
    tool: Regex
    input: Regex | None = None


class ToolNotCalled(TurnCheck):
    """The transcript has no call whose tool (name or kind) and input match."""

    type: Literal["tool_not_called"]
    tool: Regex
    input: Regex | None = None


#: What a ``tool_blocked`` / ``tool_not_blocked`` check counts: refusals by the agent's
#: permission rules, by a hook, or by either.
BlockedBy = Literal["permission", "hook", "any"]


class _Blocked(TurnCheck):
    tool: Regex
    input: Regex | None = None
    by: BlockedBy = Field(
        default="any",
        description="What refused the call: permission (the agent's permission rules), "
        "hook, or any",
    )


class ToolBlocked(_Blocked):
    """A call whose tool (name or kind) and input match was refused, by the agent's
    permission rules or by a hook (docs/case-format.md, `tool_blocked`)."""

    type: Literal["tool_blocked"]


class ToolNotBlocked(_Blocked):
    """No call whose tool (name or kind) and input match was refused."""

    type: Literal["tool_not_blocked"]


class _Hook(TurnCheck):
    event: str = Field(
        min_length=1,
        max_length=limits.LINE_CHARS,
        description="The hook event, as the agent's settings name it (PreToolUse, Stop, "
        "BeforeTool, ...)",
    )
    hook: Regex | None = Field(
        default=None, description="A regular expression on the hook's command"
    )


class HookFired(_Hook):
    """The agent ran a hook for the event, whose command matches ``hook`` when given
    (docs/case-format.md, `hook_fired`)."""

    type: Literal["hook_fired"]


class HookNotFired(_Hook):
    """The agent ran no such hook."""

    type: Literal["hook_not_fired"]


class SkillUsed(TurnCheck):
    """The transcript shows the agent loading the skill (docs/skills.md)."""

    type: Literal["skill_used"]
    skill: str = Field(min_length=1, max_length=limits.LINE_CHARS)


class SkillNotUsed(TurnCheck):
    """The transcript shows the agent not loading the skill (docs/skills.md)."""

    type: Literal["skill_not_used"]
    skill: str = Field(min_length=1, max_length=limits.LINE_CHARS)


class _Request(TurnCheck):
    pattern: Regex
    request: int | None = Field(
        default=None,
        ge=1,
        description="Only this request of the run, or of its `turn` (1 = the first the CLI "
        "sent its model); default: any",
    )


class RequestMatches(_Request):
    """What the CLI sent its model (system prompt, tools, messages) matches ``pattern``
    (docs/case-format.md, "What a request check reads")."""

    type: Literal["request_matches"]


class RequestNotMatches(_Request):
    """Nothing the CLI sent its model matches ``pattern``."""

    type: Literal["request_not_matches"]


class _Mcp(TurnCheck):
    server: str = Field(
        min_length=1,
        max_length=limits.ID_CHARS,
        description="The MCP server, by its name in `mcp:` or the workspace's configuration",
    )
    tool: Regex | None = Field(default=None, description="A regular expression on the tool")
    input: Regex | None = Field(
        default=None, description="A regular expression on the call's input, as compact JSON"
    )


class McpCalled(_Mcp):
    """The agent called a tool of the MCP server (docs/mcp.md, "The checks")."""

    type: Literal["mcp_called"]


class McpNotCalled(_Mcp):
    """The agent called no such tool of the MCP server (docs/mcp.md, "The checks")."""

    type: Literal["mcp_not_called"]


class Judge(CheckModel):
    """A judge (a model) answers ``question`` yes about the final answer and the
    workspace's changes (docs/judge.md); reported, never blocking, until calibrated."""

    type: Literal["judge"]
    question: str = Field(
        min_length=1,
        max_length=limits.LINE_CHARS,
        description="A yes/no question about the final answer and the workspace changes",
    )
    script: list[Annotated[str, Field(max_length=limits.LINE_CHARS)]] | None = Field(
        default=None,
        min_length=1,
        description="The scripted judge: its answer in each repetition (the last repeats), "
        "played by the plugin with no request sent (docs/judge.md)",
    )


TOOL_CHECKS = ("tool_called", "tool_not_called")
#: The checks of the agent's MCP calls: they read its transcript (docs/mcp.md).
MCP_CHECKS = ("mcp_called", "mcp_not_called")
#: The checks that grade refused tool calls: a case with one is graded by them, not made
#: an error by its refusals.
BLOCK_CHECKS = ("tool_blocked", "tool_not_blocked")
#: The checks of the hooks the agent ran: its CLI must be asked to show them.
HOOK_CHECKS = ("hook_fired", "hook_not_fired")
SKILL_CHECKS = ("skill_used", "skill_not_used")
#: The checks that read what the CLI sent its model: a run of a case with one goes
#: through the proxy.
REQUEST_CHECKS = ("request_matches", "request_not_matches")
#: The built-in check types that start no process: a regrade, or a graded directory,
#: of a case with no other check starts none, not even a trial of the sandbox.
IN_PROCESS_CHECKS: tuple[type[CheckModel], ...] = (
    OutputMatches,
    OutputNotMatches,
    FileExists,
    FileAbsent,
    DirectoryExists,
    FileMatches,
    FileNotMatches,
    FileContains,
    FileNotContains,
    FileUnchanged,
    ToolCalled,
    ToolNotCalled,
    SkillUsed,
    SkillNotUsed,
    ToolBlocked,
    ToolNotBlocked,
    HookFired,
    HookNotFired,
    RequestMatches,
    RequestNotMatches,
    McpCalled,
    McpNotCalled,
)


def check_type_name(model: type[CheckModel]) -> str:
    """The ``type`` tag of a check model class."""
    annotation = model.model_fields["type"].annotation
    args: tuple[object, ...] = getattr(annotation, "__args__", ())
    if len(args) != 1 or not isinstance(args[0], str):
        raise TypeError(f"{model.__name__}.type must be a Literal of one string")
    return args[0]


class CaseModelBase(BaseModel):
    """One case (docs/case-format.md); the ``checks`` field is added per check registry."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    _strings_without_nul = field_validator("*", mode="after")(no_nul)

    id: KebabId = Field(description="kebab-case, unique in the suite")
    defends: str = Field(
        min_length=1,
        max_length=limits.PATH_CHARS,
        description="The rule, skill, hook or config file this case protects",
    )
    severity: Severity = Field(
        default="normal",
        description="critical: blocks the merge; normal: fails the run; advisory: reported "
        "as xfailed, never fails the run alone",
    )
    description: str | None = Field(
        default=None, max_length=limits.LINE_CHARS, description="One line, shown in reports"
    )
    cwd: FixtureDir | None = Field(
        default=None,
        description="Fixture directory, relative to the evals root, copied into a fresh "
        "workspace for every run (absent: an empty workspace)",
    )
    setup: str | None = Field(
        default=None,
        max_length=limits.TEXT_CHARS,
        description="Shell command run in the workspace before the agent",
    )
    prompt: str | None = Field(
        default=None,
        max_length=limits.TEXT_CHARS,
        description="The task, verbatim as a user would write it (no hint of the rule)",
    )
    bare: bool = Field(
        default=True,
        description="Run the agent without auto-discovery of its configuration; false when "
        "discovery is under test",
    )
    timeout: float | None = Field(
        default=None,
        gt=0,
        le=MAX_TIMEOUT,
        allow_inf_nan=False,
        description="Seconds for the agent run (default: ini eval_timeout)",
    )
    min_pass_rate: float = Field(
        default=1.0, ge=0.0, le=1.0, description="With --eval-repeat: share of runs that must pass"
    )
    quarantine: str | None = Field(
        default=None,
        max_length=limits.LINE_CHARS,
        description="Skip the case with this reason (e.g. flaky since model X)",
    )
    tags: list[Tag] = Field(
        default_factory=list,
        max_length=limits.TAGS,
        description="Free labels, selectable with --eval-tags",
    )
    agents: list[AgentName] | None = Field(
        default=None,
        min_length=1,
        max_length=limits.TAGS,
        description="Only these agents run the case (a Claude hook, a Codex-only setting); "
        "on another agent's variant it is skipped",
    )
    max_cost: float | None = Field(
        default=None,
        gt=0,
        allow_inf_nan=False,
        description="USD per run: a run that reports more fails the implicit check max_cost",
    )
    max_tokens: int | None = Field(
        default=None,
        gt=0,
        description="Tokens per run (input plus output): a run that reports more fails the "
        "implicit check max_tokens",
    )
    perturb: bool = Field(
        default=True,
        description="false: --eval-perturb never perturbs this prompt (its exact form is "
        "the point: a quoted message, a path)",
    )
    paraphrases: list[Annotated[str, Field(min_length=1, max_length=limits.TEXT_CHARS)]] | None = (
        Field(
            default=None,
            min_length=1,
            max_length=limits.TURNS,
            description="Other wordings of the prompt, written by the author: --eval-perturb "
            "paraphrase runs them (docs/perturbation.md)",
        )
    )
    script: list[ScriptTurn] | None = Field(
        default=None,
        min_length=1,
        max_length=limits.TURNS,
        description="The model's turns, played by the plugin on 127.0.0.1 for claude, codex "
        "and gemini: no credential, no cost (docs/config-contract.md)",
    )
    follow_ups: list[Annotated[str, Field(min_length=1, max_length=limits.TEXT_CHARS)]] | None = (
        Field(
            default=None,
            min_length=1,
            max_length=limits.TURNS,
            description="Further prompts on the same session and workspace, one turn each "
            "(docs/conversations.md)",
        )
    )
    mcp: dict[McpServerName, McpServerModel] | None = Field(
        default=None,
        max_length=limits.TAGS,
        description="MCP servers of the case by name: a real server or a mock the plugin "
        "serves (docs/mcp.md)",
    )


class TaskFileBase(BaseModel):
    """The task-directory format's ``checks.yaml`` (docs/case-format.md, "Task-directory
    format")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task: str | None = Field(default=None, max_length=limits.LINE_CHARS)
    defends: str | None = Field(default=None, max_length=limits.PATH_CHARS)
    description: str | None = Field(default=None, max_length=limits.LINE_CHARS)
    tags: list[Tag] = Field(default_factory=list, max_length=limits.TAGS)
    timeout: float | None = Field(default=None, gt=0, le=MAX_TIMEOUT, allow_inf_nan=False)


class TaskCheckExtras(BaseModel):
    """Fields a check may carry in the task-directory format only."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(min_length=1, max_length=limits.ID_CHARS)
    severity: Literal["HIGH", "MEDIUM", "LOW"] = "HIGH"


def check_union(models: tuple[type[CheckModel], ...]) -> Any:
    """The tagged union of ``models`` on their ``type`` field."""
    if len(models) == 1:
        return models[0]
    return Annotated[Union[models], Field(discriminator="type")]  # noqa: UP007
