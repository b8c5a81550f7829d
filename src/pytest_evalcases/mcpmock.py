"""The mock MCP server of a case's ``mcp: {NAME: {mock: …}}`` (docs/mcp.md, "Mock servers").

Run as ``python -I …/pytest_evalcases/mcpmock.py SPEC`` (:func:`command`) by the agent's
CLI, as a child of it inside the run's sandbox: newline-delimited JSON-RPC 2.0 over stdin
and stdout, the methods ``initialize`` (the client's protocol version echoed), ``tools/list``,
``tools/call`` and ``ping``; notifications are read and ignored, any other method is a
JSON-RPC error. ``SPEC`` is a JSON file the run wrote: the server's name, its tools and
the log to append to. Every call is appended to the log as a JSON line (server, tool,
arguments, what it answered), and so is the start of the server and its listing of the
tools: what the ``mcp_called`` checks read (:func:`read_log`).

Plain Python and ``json`` only, and nothing of the plugin's: it starts inside the sandbox
with the plugin's own interpreter, once per server and per invocation of the CLI, so it
must start fast; and it runs as a file, whether the plugin is installed or only on the
``PYTHONPATH`` of pytest, which a CLI need not pass on to its servers (Gemini CLI 0.61
refuses a server's ``PYTHONPATH``).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

#: The protocol version answered to a client that names none.
PROTOCOL_VERSION = "2025-06-18"
#: JSON-RPC's error code of an unknown method, and of a call of an unknown tool.
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
#: The log's events: the server started, listed its tools, was called; the plugin's
#: marker between two invocations of the agent.
START, LIST, CALL, INVOCATION = "start", "list", "call", "invocation"


def command(spec: Path) -> tuple[str, ...]:
    """The command line of a mock server serving ``spec``: this file, run by the
    interpreter pytest runs in, isolated from the environment's ``PYTHON*`` variables."""
    return (sys.executable, "-I", str(Path(__file__).resolve()), str(spec))


def compact(value: object) -> str:
    """A call's input as the ``match`` and ``input`` patterns see it: compact JSON, in
    the order the client sent it (as the drivers show a tool's input)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def answer(returns: str | list[dict[str, str]], arguments: object) -> str | None:
    """The text a tool answers a call with: ``returns`` when it is a string, else the
    ``returns`` of the first entry whose ``match`` finds the input; ``None`` when none
    does."""
    if isinstance(returns, str):
        return returns
    text = compact(arguments)
    for entry in returns:
        if re.search(entry["match"], text, re.MULTILINE):
            return entry["returns"]
    return None


class Server:
    """One mock server: its spec, and the log it appends to."""

    def __init__(self, spec: Mapping[str, Any]) -> None:
        self.name = str(spec["server"])
        self.tools: dict[str, dict[str, Any]] = dict(spec["tools"])
        self.log = Path(spec["log"])

    def record(self, event: str, **fields: object) -> None:
        # One write of one line, appended: servers of one run share the log.
        line = json.dumps({"event": event, "server": self.name, **fields}, ensure_ascii=False)
        with self.log.open("a", encoding="utf-8") as out:
            out.write(line + "\n")

    def handle(self, message: Mapping[str, Any]) -> dict[str, Any] | None:
        """The response to ``message``; ``None`` for a notification."""
        if "id" not in message:
            return None
        method = message.get("method")
        given = message.get("params")
        params: Mapping[str, Any] = given if isinstance(given, dict) else {}
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": params.get("protocolVersion") or PROTOCOL_VERSION,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": self.name, "version": "1"},
            }
        elif method == "tools/list":
            self.record(LIST)
            result = {"tools": [self._listed(name, tool) for name, tool in self.tools.items()]}
        elif method == "tools/call":
            return self._call(message["id"], params)
        elif method == "ping":
            result = {}
        else:
            return _error(message["id"], METHOD_NOT_FOUND, f"method not found: {method}")
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    def _listed(self, name: str, tool: Mapping[str, Any]) -> dict[str, Any]:
        # Any input is accepted: `match` decides what it answers.
        schema = {"type": "object", "additionalProperties": True}
        return {"name": name, "description": tool.get("description", ""), "inputSchema": schema}

    def _call(self, request_id: object, params: Mapping[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        arguments = params.get("arguments") or {}
        tool = self.tools.get(str(name))
        if tool is None:
            self.record(CALL, tool=name, arguments=arguments, returned=None)
            return _error(request_id, INVALID_PARAMS, f"unknown tool: {name}")
        text = answer(tool["returns"], arguments)
        self.record(CALL, tool=name, arguments=arguments, returned=text)
        if text is None:
            # No `match` found the input: an error result the model sees, not a crash.
            text = f"the mock tool {name} of {self.name} has no answer for {compact(arguments)}"
            content = {"content": [{"type": "text", "text": text}], "isError": True}
        else:
            content = {"content": [{"type": "text", "text": text}], "isError": False}
        return {"jsonrpc": "2.0", "id": request_id, "result": content}

    def serve(self, lines: Iterable[str], out: IO[str]) -> None:
        """Answer every message of ``lines`` on ``out``, until the input ends."""
        self.record(START, pid=os.getpid())
        for line in lines:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                response: dict[str, Any] | None = _error(None, -32700, "parse error")
            else:
                response = self.handle(message) if isinstance(message, dict) else None
            if response is not None:
                out.write(json.dumps(response) + "\n")
                out.flush()


def _error(request_id: object, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


@dataclass(frozen=True)
class Logged:
    """One line of a mock's log: ``event`` (:data:`START`, :data:`LIST`, :data:`CALL`,
    :data:`INVOCATION`), the server, and for a call its tool and input."""

    event: str
    server: str = ""
    tool: str = ""
    input: str = ""
    #: For :data:`INVOCATION`: the invocation of the agent that follows (1 = the first).
    index: int = 0


def read_log(path: Path) -> tuple[Logged, ...]:
    """The lines of a mock's log, in order; none when there is no log (no mock started).
    A line that is not one of ours (cut short by a killed server) is left out."""
    try:
        text = path.read_text("utf-8")
    except OSError:
        return ()
    found = []
    for line in text.splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("event"), str):
            found.append(
                Logged(
                    event=data["event"],
                    server=str(data.get("server") or ""),
                    tool=str(data.get("tool") or ""),
                    input=compact(data.get("arguments") or {}) if data["event"] == CALL else "",
                    index=int(data.get("index") or 0),
                )
            )
    return tuple(found)


def mark_invocation(path: Path, index: int) -> None:
    """Append the marker of the agent's invocation ``index`` (1 = the first): the lines
    that follow, up to the next marker, are that invocation's."""
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"event": INVOCATION, "index": index}) + "\n")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python mcpmock.py SPEC.json\n")
        return 2
    spec = json.loads(Path(argv[0]).read_text("utf-8"))
    Server(spec).serve(sys.stdin, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
