"""What replay compares (docs/replay.md, "What is normalised"): a request with what
always varies between two runs of the same case replaced."""

from __future__ import annotations

import copy
import json

from pytest_evalcases.recording.normalise import Normaliser, Places, claude_project


def test_what_always_varies_is_normalised() -> None:
    normal = Normaliser(Places("/tmp/w/case0", ("/home/u/.cache/h-1",)))
    text = (
        "CWD: /tmp/w/case0\nDate: 2026-12-02 at 2026-12-02T09:30:00.123Z, 09:30:00 "
        "on Wednesday, December 2, 2026; id 69652f8f-a1d6-44b7-bb99-9dc6ab2f6eac, "
        "toolu_01AbCdEf23, call_Xy12ab34, run_shell_command_1796217588074_0, "
        "/home/u/.cache/h-1/skills, /x/.cache/pytest-evalcases/agent-homes/home-ab_12/y, "
        'Process Group PGID: 6732, {"chunk_id":"57b127","wall_time_seconds":0.00004}, '
        "Script completed\nWall time 0.2 seconds\n"
        "drwxr-xr-x 8 root root 4096 Dec  3 15:58 .git\n-rw-r--r-- 1 u u 9 Jan  1  2001 a\n"
        "-rw-r--r-- 1 u u 9 Dec 13 09:01 b"
    )
    assert normal.text(text) == (
        "CWD: <workspace>\nDate: <date> at <date>, <time> on <date>; id <uuid>, "
        "toolu_<id>, call_<id>, run_shell_command_<time>_0, <home>/skills, <home>/y, "
        'Process Group PGID: <pid>, {"chunk_id":"<id>","wall_time_seconds":<seconds>}, '
        "Script completed\nWall time <seconds> seconds\n"
        "drwxr-xr-x 8 root root 4096 <date> .git\n-rw-r--r-- 1 u u 9 <date> a\n"
        "-rw-r--r-- 1 u u 9 <date> b"
    )


def skills(*names: str, last_newline: bool = True) -> str:
    blocks = [
        f"  <skill>\n    <name>{n}</name>\n    <location>/s/{n}</location>\n  </skill>"
        for n in names
    ]
    return "<available_skills>\n" + "\n".join(blocks) + ("\n" if last_newline else "")


def test_the_order_in_which_a_cli_found_its_skills_is_not_compared() -> None:
    # Gemini CLI lists its skills in the order it found them, which differs between
    # two runs of the same case: seen as a replay diverging at its first request.
    normal = Normaliser(Places("/tmp/w/case0", ()))
    for first, second in [
        (skills("b", "a", "c"), skills("a", "c", "b")),
        (skills("b", "a", last_newline=False), skills("a", "b", last_newline=False)),
    ]:
        assert normal.text(first) == normal.text(second)
        assert normal.text(first) != first or normal.text(second) != second
    # Which skills are listed, and what each says, still counts.
    assert normal.text(skills("a", "b")) != normal.text(skills("a", "c"))
    assert normal.text(skills("a", "b")) != normal.text(skills("a"))
    changed = skills("a", "b").replace("/s/b<", "/s/B<")
    assert normal.text(skills("b", "a")) != normal.text(changed)


def test_claude_codes_project_name_of_the_workspace_is_the_workspace() -> None:
    # Claude Code without --bare names its memory directory after the workspace.
    memory = "{}/claude_config_dir/projects/{}/memory/"
    normal = Normaliser(Places("/tmp/pytest-of-u/pytest-7/case0", ("/h/1",)))
    assert normal.text(memory.format("/h/1", "-tmp-pytest-of-u-pytest-7-case0")) == (
        memory.format("<home>", "<workspace>")
    )
    # Only this run's: another workspace's project stays as it is.
    assert "-tmp-pytest-of-u-pytest-8-case0" in normal.text("-tmp-pytest-of-u-pytest-8-case0")


def test_a_long_workspace_path_is_named_as_claude_code_names_it() -> None:
    # Found by running claude 2.1.197 in this directory: its project directory's name.
    path = "/tmp/" + "/".join(["abcdefghij_klmnopq.rstu"] * 10)
    name = claude_project(path)
    assert name == "-tmp-" + "-".join(["abcdefghij-klmnopq-rstu"] * 10)[:195] + "-t3c4cq"
    assert Normaliser(Places(path)).text(f"projects/{name}/memory") == "projects/<workspace>/memory"


def test_the_clis_metadata_and_credential_parameters_are_left_out() -> None:
    normal = Normaliser(Places())
    one = {
        "metadata": {"user_id": "device-1"},
        "client_metadata": {"session_id": "a"},
        "prompt_cache_key": "a",
        "input": [{"internal_chat_message_metadata_passthrough": {"create_time": 1}}],
    }
    two = copy.deepcopy(one)
    two["metadata"]["user_id"] = "device-2"
    two["client_metadata"]["session_id"] = "b"
    two["prompt_cache_key"] = "b"
    two["input"][0]["internal_chat_message_metadata_passthrough"]["create_time"] = 2
    assert (
        normal.request("POST", "/m?key=Zq7xK2pW9mR4&alt=sse", json.dumps(one)).key
        == normal.request("POST", "/m?key=&alt=sse", json.dumps(two)).key
    )
