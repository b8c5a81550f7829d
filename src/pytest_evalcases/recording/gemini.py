"""The Gemini API, as Gemini CLI speaks it: read (:class:`Gemini`), and written by the
scripted model (:func:`answer`, :func:`helper_answer`, :func:`error_body`)."""

from __future__ import annotations

import json
from typing import Any

from pytest_evalcases.recording.views import (
    Answer,
    Parser,
    Reply,
    ToolCall,
    ToolResult,
    Usage,
    called,
)
from pytest_evalcases.recording.wire import as_dict, as_int, as_list, events


class Gemini(Parser):
    """The Gemini API (``POST …/models/<model>:streamGenerateContent``)."""

    name = "gemini"
    system_key = "systemInstruction"
    messages_key = "contents"

    def from_model(self, message: Any) -> bool:
        return as_dict(message).get("role") == "model"

    def texts(self, message: Any) -> tuple[str, ...]:
        said = []
        for part in map(as_dict, as_list(as_dict(message).get("parts"))):
            if isinstance(part.get("text"), str):
                said.append(part["text"])
            elif "functionCall" in part:
                call = as_dict(part["functionCall"])
                said.append(called(str(call.get("name", "")), call.get("args", {})))
            elif "functionResponse" in part:
                said.append(_result(as_dict(part["functionResponse"]).get("response"))[0])
        return tuple(said)

    def helper(self, body: Any) -> bool:
        config = as_dict(as_dict(body).get("generationConfig"))
        return bool(config.get("responseJsonSchema") or config.get("responseSchema"))

    def kind(self, body: Any) -> str:
        config = as_dict(as_dict(body).get("generationConfig"))
        schema = as_dict(config.get("responseJsonSchema") or config.get("responseSchema"))
        if schema:
            return "structured answer: " + ", ".join(as_dict(schema.get("properties")))
        return "other conversation"

    def model(self, path: str, body: Any) -> str:
        route = path.partition("?")[0]
        return route.rpartition("/models/")[2].partition(":")[0]

    def system(self, body: Any) -> str:
        system = as_dict(as_dict(body).get("systemInstruction"))
        return "\n\n".join(str(as_dict(p).get("text", "")) for p in as_list(system.get("parts")))

    def described_tools(self, body: Any) -> list[tuple[str, str]]:
        return [
            (str(function.get("name", "")), str(function.get("description") or ""))
            for tool in as_list(as_dict(body).get("tools"))
            for function in map(as_dict, as_list(as_dict(tool).get("functionDeclarations")))
        ]

    def _user_parts(self, body: Any) -> list[list[Any]]:
        return [
            as_list(as_dict(c).get("parts"))
            for c in as_list(as_dict(body).get("contents"))
            if as_dict(c).get("role", "user") == "user"
        ]

    def thread(self, body: Any) -> str:
        users = self._user_parts(body)
        return "\n".join(str(as_dict(p).get("text", "")) for p in users[0]) if users else ""

    def user_texts(self, body: Any) -> list[str]:
        for parts in reversed(self._user_parts(body)):
            texts = [str(as_dict(p)["text"]) for p in parts if "text" in as_dict(p)]
            if texts:
                return texts
        return []

    def results(self, body: Any) -> list[ToolResult]:
        out = []
        for parts in self._user_parts(body):
            for part in map(as_dict, parts):
                answer = as_dict(part.get("functionResponse"))
                if not answer:
                    continue
                text, failed = _result(answer.get("response"))
                out.append(
                    ToolResult(str(answer.get("id") or answer.get("name", "")), text, failed)
                )
        return out

    def response(self, text: str) -> Answer:
        model, stop = "", ""
        texts: list[str] = []
        calls: list[ToolCall] = []
        thinking = 0
        usage: dict[str, Any] = {}
        errors: list[str] = []
        for chunk in map(as_dict, events(text)):
            if chunk.get("error"):
                error = as_dict(chunk.get("error"))
                errors.append(
                    f"error: {error.get('status', '')} {error.get('message', '')}".strip()
                )
            model = str(chunk.get("modelVersion") or model)
            usage = as_dict(chunk.get("usageMetadata")) or usage
            for candidate in map(as_dict, as_list(chunk.get("candidates"))[:1]):
                stop = str(candidate.get("finishReason") or stop)
                for part in map(as_dict, as_list(as_dict(candidate.get("content")).get("parts"))):
                    if part.get("thought"):
                        thinking += len(str(part.get("text", "")))
                    elif "text" in part:
                        if texts and not calls:
                            texts[-1] += str(part["text"])
                        else:
                            texts.append(str(part["text"]))
                    elif "functionCall" in part:
                        call = as_dict(part["functionCall"])
                        calls.append(
                            ToolCall(
                                str(call.get("name", "")),
                                call.get("args", {}),
                                str(call.get("id") or ""),
                            )
                        )
        cached = as_int(usage.get("cachedContentTokenCount"))
        prompt = as_int(usage.get("promptTokenCount"))
        candidates = as_int(usage.get("candidatesTokenCount"))
        thoughts = as_int(usage.get("thoughtsTokenCount"))
        spent = Usage(prompt - cached, candidates + thoughts, cached, known=bool(usage))
        # As Gemini CLI counts them: the cached input included, the thoughts not.
        tokens = prompt + candidates
        return Answer(
            model, tuple(texts), tuple(calls), thinking, spent, stop, tuple(errors), tokens
        )


def _result(response: Any) -> tuple[str, bool]:
    """A function response's text (its ``output``, else its ``error``, else all of it
    as JSON) and whether it is an error."""
    given = as_dict(response)
    output = given.get("output", given.get("error", response))
    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    return text, "error" in given and "output" not in given


def is_helper(body: Any) -> bool:
    """Whether a request is one of Gemini CLI's helper calls beside its agent loop (an
    answer in a JSON schema: whether to go on, a name for the session), not a turn."""
    config = as_dict(as_dict(body).get("generationConfig"))
    return bool(config.get("responseJsonSchema") or config.get("responseSchema"))


def answer(reply: Reply, streamed: bool) -> bytes:
    """``reply`` as the Gemini API answers ``:streamGenerateContent`` (``streamed``, one
    server-sent event) or ``:generateContent``: a text part, or a function call (a shell
    command is Gemini CLI's ``run_shell_command``)."""
    if reply.mcp is not None:
        # Gemini CLI's name of an MCP tool (tried with 0.61).
        name = f"mcp_{reply.mcp[0]}_{reply.mcp[1]}"
        parts: list[Any] = [{"functionCall": {"name": name, "args": reply.tool_input}}]
    elif reply.tool is not None:
        parts = [{"functionCall": {"name": reply.tool, "args": reply.tool_input}}]
    elif reply.shell is not None:
        parts = [{"functionCall": {"name": "run_shell_command", "args": {"command": reply.shell}}}]
    else:
        parts = [{"text": reply.text}]
    return _written(_chunk(parts, reply), streamed)


def helper_answer(body: Any, streamed: bool = False) -> bytes:
    """An answer to a helper call that matches its ``responseJsonSchema``: each property
    its enum's first value, else an empty value of its type (and the user speaks next)."""
    config = as_dict(as_dict(body).get("generationConfig"))
    schema = as_dict(config.get("responseJsonSchema") or config.get("responseSchema"))
    empty: dict[str, Any] = {"string": "", "number": 0, "integer": 0, "boolean": False, "array": []}
    given = {
        name: (
            prop["enum"][0]
            if as_list(prop.get("enum"))
            else empty.get(str(prop.get("type")).lower(), {})
        )
        for name, prop in ((k, as_dict(v)) for k, v in as_dict(schema.get("properties")).items())
    }
    if "next_speaker" in given:
        given["next_speaker"] = "user"
    return _written(_chunk([{"text": json.dumps(given)}], Reply()), streamed)


def error_body(status: int, message: str) -> dict[str, Any]:
    """The Gemini API's error body."""
    return {"error": {"code": status, "message": message, "status": "UNAVAILABLE"}}


def _chunk(parts: list[Any], reply: Reply) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": reply.input_tokens,
            "candidatesTokenCount": reply.output_tokens,
            "totalTokenCount": reply.input_tokens + reply.output_tokens,
        },
        "modelVersion": "gemini-scripted",
    }


def _written(chunk: dict[str, Any], streamed: bool) -> bytes:
    if streamed:
        return f"data: {json.dumps(chunk)}\r\n\r\n".encode()
    return json.dumps(chunk).encode()
