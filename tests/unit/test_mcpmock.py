"""The mock MCP server over pipes, as an agent's CLI starts it (docs/mcp.md, "Mock
servers"): ``python -I …/mcpmock.py SPEC``, newline-delimited JSON-RPC."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from pytest_evalcases import mcpmock

TOOLS = {
    "lookup_ticket": {
        "description": "The text of a ticket",
        "returns": [
            {"match": '"T-7"', "returns": "T-7: fix the parser"},
            {"match": '"id":"T-[0-9]+"', "returns": "some other ticket"},
        ],
    },
    "close_ticket": {"description": "Close a ticket", "returns": "closed"},
}


def serve(tmp_path: Path, *messages: dict[str, Any] | str) -> list[dict[str, Any]]:
    """What the server answers ``messages``, sent on its stdin, one per line."""
    spec = tmp_path / "tracker.json"
    log = tmp_path / "calls.jsonl"
    spec.write_text(json.dumps({"server": "tracker", "log": str(log), "tools": TOOLS}))
    lines = "".join((m if isinstance(m, str) else json.dumps(m)) + "\n" for m in messages)
    # An environment with nothing of the plugin's: no PYTHONPATH to find it by.
    env = {"PATH": os.environ["PATH"]}
    argv = mcpmock.command(spec)
    said = subprocess.check_output(argv, input=lines, text=True, env=env, timeout=30)
    return [json.loads(line) for line in said.splitlines()]


def call(request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def test_initialize_echoes_the_clients_protocol_version(tmp_path: Path) -> None:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize"}
    answers = serve(
        tmp_path,
        {**init, "params": {"protocolVersion": "2025-11-25", "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
    )
    # The notification is not answered.
    assert [a["id"] for a in answers] == [0, 1]
    assert answers[0]["result"]["protocolVersion"] == "2025-11-25"
    assert answers[0]["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert answers[0]["result"]["serverInfo"]["name"] == "tracker"
    assert answers[1]["result"] == {}


def test_tools_list_names_the_tools_and_their_descriptions(tmp_path: Path) -> None:
    (answer,) = serve(tmp_path, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    listed = {tool["name"]: tool for tool in answer["result"]["tools"]}
    assert list(listed) == ["lookup_ticket", "close_ticket"]
    assert listed["lookup_ticket"]["description"] == "The text of a ticket"
    assert listed["close_ticket"]["inputSchema"]["type"] == "object"


def test_a_call_gets_the_returns_of_the_first_match_and_none_is_an_error_result(
    tmp_path: Path,
) -> None:
    answers = serve(
        tmp_path,
        call(1, "lookup_ticket", {"id": "T-7"}),
        call(2, "lookup_ticket", {"id": "T-8"}),
        call(3, "lookup_ticket", {"name": "x"}),
        call(4, "close_ticket", {"id": "T-7"}),
    )
    texts = [a["result"]["content"][0]["text"] for a in answers]
    errors = [a["result"]["isError"] for a in answers]
    assert texts[:2] == ["T-7: fix the parser", "some other ticket"]
    assert texts[2] == 'the mock tool lookup_ticket of tracker has no answer for {"name":"x"}'
    assert texts[3] == "closed"
    assert errors == [False, False, True, False]


def test_an_unknown_method_or_tool_and_bad_json_are_json_rpc_errors(tmp_path: Path) -> None:
    answers = serve(
        tmp_path,
        {"jsonrpc": "2.0", "id": 1, "method": "resources/list"},
        call(2, "delete_everything", {}),
        "{not json",
    )
    assert [(a["id"], a["error"]["code"]) for a in answers] == [
        (1, -32601),
        (2, -32602),
        (None, -32700),
    ]
    assert answers[0]["error"]["message"] == "method not found: resources/list"


def test_every_call_is_logged_per_invocation(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    mcpmock.mark_invocation(log, 1)
    serve(
        tmp_path,
        {"jsonrpc": "2.0", "id": 0, "method": "tools/list"},
        call(1, "lookup_ticket", {"id": "T-7"}),
    )
    mcpmock.mark_invocation(log, 2)
    serve(tmp_path, call(1, "close_ticket", {"id": "T-7", "why": "é"}))

    lines = mcpmock.read_log(log)

    assert [(line.event, line.server, line.tool, line.input) for line in lines] == [
        ("invocation", "", "", ""),
        ("start", "tracker", "", ""),
        ("list", "tracker", "", ""),
        ("call", "tracker", "lookup_ticket", '{"id":"T-7"}'),
        ("invocation", "", "", ""),
        ("start", "tracker", "", ""),
        ("call", "tracker", "close_ticket", '{"id":"T-7","why":"é"}'),
    ]
    assert [line.index for line in lines if line.event == "invocation"] == [1, 2]
    logged = json.loads(log.read_text().splitlines()[3])
    assert logged["returned"] == "T-7: fix the parser"


def test_a_missing_log_reads_as_nothing(tmp_path: Path) -> None:
    assert mcpmock.read_log(tmp_path / "none.jsonl") == ()
