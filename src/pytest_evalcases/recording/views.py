"""What a model request gave the model and what its response said, in any of the three
dialects (:mod:`pytest_evalcases.recording.dialects`): the typed views, and the
:class:`Parser` each dialect's module fills in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from pytest_evalcases.agents.base import RequestPart
from pytest_evalcases.recording.wire import as_dict

Dialect = Literal["anthropic", "openai", "gemini", "other"]


@dataclass(frozen=True)
class Usage:
    """Tokens of one response, or a sum of them."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    #: Whether any response said its usage (a sum of none is not "0 tokens").
    known: bool = False

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.known or other.known,
        )


@dataclass(frozen=True)
class ToolCall:
    """A tool the model called, with its input and (found in the next request) its
    result; ``result`` is ``None`` when no later request carried one."""

    name: str
    input: Any
    id: str = ""
    result: str | None = None
    failed: bool = False


@dataclass(frozen=True)
class ToolResult:
    """A tool's result that a request carries back to the model."""

    call_id: str
    text: str
    failed: bool = False


@dataclass(frozen=True)
class Answer:
    """What one response said."""

    model: str = ""
    texts: tuple[str, ...] = ()
    calls: tuple[ToolCall, ...] = ()
    thinking: int = 0
    usage: Usage = field(default_factory=Usage)
    stop: str = ""
    errors: tuple[str, ...] = ()
    #: Its tokens as a run's ``tokens_in`` plus ``tokens_out`` count them: as the CLI of
    #: the dialect counts them (docs/replay.md, "What replay saves").
    tokens: int = 0


@dataclass(frozen=True)
class Reply:
    """What a scripted model answers one request with, in any dialect (the writers of
    :mod:`~pytest_evalcases.recording.anthropic`, :mod:`~pytest_evalcases.recording.openai`
    and :mod:`~pytest_evalcases.recording.gemini`): text, a call of the CLI's shell tool,
    a call of any tool, or an HTTP error (docs/config-contract.md, "The scripted model")."""

    text: str = ""
    #: A command for the CLI's own shell tool (Claude Code ``Bash``, Codex
    #: ``exec_command``, Gemini CLI ``run_shell_command``).
    shell: str | None = None
    status: int = 200
    error: str = ""
    #: The usage the answer reports: none by default (the plugin's answers cost nothing).
    input_tokens: int = 0
    output_tokens: int = 0
    #: Anthropic's ``cache_read_input_tokens``, besides ``input_tokens``.
    cache_read_tokens: int = 0
    #: A call of this tool, by the CLI's own name, with ``tool_input``.
    tool: str | None = None
    tool_input: dict[str, Any] = field(default_factory=dict)
    #: A call of a tool of an MCP server, ``(SERVER, TOOL)``, with ``tool_input``: each
    #: writer names it as its CLI does (docs/mcp.md, "The scripted model").
    mcp: tuple[str, str] | None = None

    @property
    def calls_tool(self) -> bool:
        return self.shell is not None or self.tool is not None or self.mcp is not None


@dataclass(frozen=True)
class ChatMessage:
    """One message (or input item, or content) of the conversation a request carries."""

    role: str
    #: The model's own: its answer or tool call, sent back.
    from_model: bool
    #: The text it gives the model, block by block: its text parts, its tool calls
    #: (``tool call NAME INPUT``) and the tool results it carries.
    texts: tuple[str, ...]
    #: The message as sent.
    given: Any


Reached = Literal["system prompt", "message", ""]


@dataclass(frozen=True)
class Request:
    """What one request gave the model."""

    dialect: Dialect
    model: str
    #: The system prompt's text (with Codex, its instructions and developer messages).
    system: str
    #: The names of the tools offered.
    tools: tuple[str, ...]
    messages: tuple[ChatMessage, ...]
    results: tuple[ToolResult, ...]
    #: The texts of the user's last message: the prompt, the CLI's context before it.
    user_texts: tuple[str, ...] = ()
    #: What the conversation it belongs to opens with: its first user text.
    thread: str = ""
    #: A CLI's side question (a quota check, a JSON-schema answer): never a turn.
    helper: bool = False
    #: What a request that is not the conversation was, in a few words.
    kind: str = "other conversation"
    #: The system prompt and the tool list as sent, for comparing two requests.
    given_system: Any = None
    given_tools: Any = None
    #: Each tool offered, as ``NAME: description`` (its name alone without one).
    tool_texts: tuple[str, ...] = ()

    @property
    def turn(self) -> int:
        """The request's model turn: the model's answers so far (a run of the model's
        own items counts once) + 1."""
        turns, before = 0, False
        for message in self.messages:
            turns += message.from_model and not before
            before = message.from_model
        return turns + 1

    def reaches(self, text: str) -> Reached:
        """Where ``text`` reached the model in this request: in the system prompt, in a
        message (a tool result included), or not at all (``""``)."""
        if text in self.system:
            return "system prompt"
        if any(text in said for message in self.messages for said in message.texts):
            return "message"
        return ""

    def parts(self) -> tuple[RequestPart, ...]:
        """What the request gave the model, part by part, as the request checks read it
        (docs/case-format.md, "What a request check reads"): the system prompt, the tool
        list, then each message of the conversation, numbered as sent; a message with
        no text of its own is left out (with Codex, a developer message: the system
        prompt holds it)."""
        parts = [RequestPart("system prompt", self.system)] if self.system else []
        if self.tool_texts:
            parts.append(RequestPart("tools", "\n".join(self.tool_texts)))
        for number, message in enumerate(self.messages, 1):
            role = message.role or str(as_dict(message.given).get("type") or "item")
            if message.texts:
                parts.append(RequestPart(f"message {number} ({role})", "\n".join(message.texts)))
        return tuple(parts)


#: What a request of no known dialect gave the model, as far as this can tell.
UNKNOWN = Request("other", "", "", (), (), ())


class Parser:
    """One dialect's parser: what a request body gave the model (:meth:`request`), what a
    response body said (:meth:`response`). A body is taken as stored, already parsed
    from JSON where it was JSON; what is not of the dialect's shape reads as empty."""

    name: Dialect = "other"
    #: The keys of a request body that hold the system prompt and the messages.
    system_key = ""
    messages_key = ""

    def request(self, path: str, body: Any) -> Request:
        """What the request gave the model."""
        return Request(
            dialect=self.name,
            model=self.model(path, body),
            system=self.system(body),
            tools=self.tools(body),
            messages=tuple(
                ChatMessage(str(as_dict(m).get("role") or ""), self.from_model(m), self.texts(m), m)
                for m in self.given_messages(body)
            ),
            results=tuple(self.results(body)),
            user_texts=tuple(self.user_texts(body)),
            thread=self.thread(body),
            helper=self.helper(body),
            kind=self.kind(body),
            given_system=self.given_system(body),
            given_tools=as_dict(body).get("tools"),
            tool_texts=tuple(
                f"{name}: {said}" if said else name for name, said in self.described_tools(body)
            ),
        )

    def helper(self, body: Any) -> bool:
        """Whether the request is a CLI's side question (a quota check, a JSON-schema
        answer): never a turn of the conversation."""
        return False

    def kind(self, body: Any) -> str:
        """What a request that is not the conversation was, in a few words."""
        return "other conversation"

    def thread(self, body: Any) -> str:
        """What the conversation a request belongs to opens with: its first user text."""
        texts = self.user_texts(body)
        return texts[0] if texts else ""

    def model(self, path: str, body: Any) -> str:
        """The model a request asked for."""
        return str(as_dict(body).get("model") or "")

    def given_system(self, body: Any) -> Any:
        """The system prompt as sent."""
        return as_dict(body).get(self.system_key)

    def given_messages(self, body: Any) -> list[Any]:
        """The conversation's messages (input items, contents) as sent; one that is not
        a list is one message."""
        given = as_dict(body).get(self.messages_key)
        return given if isinstance(given, list) else [given]

    def from_model(self, message: Any) -> bool:
        """Whether a message of the conversation is the model's own."""
        return as_dict(message).get("role") == "assistant"

    def texts(self, message: Any) -> tuple[str, ...]:
        """The text a message gives the model, block by block: its text parts, its tool
        calls (:func:`called`), its tool results."""
        raise NotImplementedError

    def system(self, body: Any) -> str:
        """The request's system prompt (its instructions)."""
        raise NotImplementedError

    def tools(self, body: Any) -> tuple[str, ...]:
        """The names of the tools the request offered the model."""
        return tuple(name for name, _ in self.described_tools(body))

    def described_tools(self, body: Any) -> list[tuple[str, str]]:
        """The tools the request offered the model: each one's name and description."""
        raise NotImplementedError

    def user_texts(self, body: Any) -> list[str]:
        """The texts of the last user message, in order."""
        raise NotImplementedError

    def results(self, body: Any) -> list[ToolResult]:
        """Every tool result the request carries, in order."""
        raise NotImplementedError

    def response(self, text: str) -> Answer:
        """What a response body (streamed or not) said."""
        raise NotImplementedError


def called(name: str, given: Any) -> str:
    """A tool call as a message's text shows it: ``tool call NAME INPUT``, the input as
    sent when it is a string, else as compact JSON."""
    shown = given if isinstance(given, str) else json.dumps(given, ensure_ascii=False)
    return f"tool call {name} {shown}".rstrip()
