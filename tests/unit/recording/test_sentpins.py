"""What the CLI sent its model, as the pins record it (docs/results.md, "Pins"): read
from the real recordings of the three CLIs (``tests/recordings``), and the same
configuration giving the same pins in another run's workspace, on another day, in
another session."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from pytest_evalcases.recording import format
from pytest_evalcases.recording.format import Exchange, Message
from pytest_evalcases.recording.normalise import Places
from pytest_evalcases.recording.sentpins import Sent, first_request, read_run, sent, summary

SAMPLES = Path(__file__).parents[2] / "recordings"


def sample(name: str) -> tuple[dict[str, object], list[str]]:
    """A sample recording's header and its lines (the header's included, first)."""
    path = SAMPLES / name
    data = path.read_bytes()
    text = (gzip.decompress(data) if name.endswith(".gz") else data).decode()
    lines = text.splitlines()
    return json.loads(lines[0]), lines


def stored(directory: Path, lines: list[str], **header: object) -> Path:
    """``lines`` stored as a run's recording in ``directory``, ``header`` laid over its
    header line."""
    head = {**json.loads(lines[0]), **header}
    directory.mkdir(parents=True)
    (directory / "exchange.jsonl").write_text(
        "\n".join([json.dumps(head), *lines[1:]]) + "\n", "utf-8"
    )
    return directory


def of(name: str) -> Sent:
    recorded = format.read(SAMPLES / name)
    first = first_request(recorded.exchanges)
    assert first is not None
    return sent(*first, Places())


def test_claude_codes_first_request_gives_its_model_tools_and_sampling_as_sent() -> None:
    pins = of("claude.exchange.jsonl")

    # Its session title (a side question) comes before and is not the conversation.
    assert pins.model == "claude-opus-4-8"
    assert pins.tools == ("Bash", "Edit", "Read")
    assert pins.sampling == {
        "effort": "high",
        "max_tokens": 64000,
        "thinking": {"type": "adaptive"},
    }
    assert len(pins.system_sha256) == len(pins.context_sha256) == 64


def test_codex_gives_its_reasoning_and_verbosity_and_never_its_session_metadata() -> None:
    pins = of("codex.exchange.jsonl.gz")

    assert pins.model == "gpt-6.2-sol"
    assert "exec" in pins.tools
    assert list(pins.tools) == sorted(pins.tools)
    assert pins.sampling == {
        "reasoning": {"effort": "low", "context": "all_turns"},
        "text": {"verbosity": "low"},
    }


def test_gemini_cli_gives_the_conversations_model_not_its_routing_questions() -> None:
    pins = of("gemini.exchange.jsonl")

    # The first request is the routing question to gemini-3.5-flash-lite (a helper,
    # with a JSON schema); the conversation's model is the one pinned.
    assert pins.model == "gemini-3.1-pro-preview"
    assert "run_shell_command" in pins.tools
    assert pins.sampling == {
        "temperature": 1,
        "thinkingConfig": {"includeThoughts": True, "thinkingLevel": "HIGH"},
        "topK": 64,
        "topP": 0.95,
    }


@pytest.mark.parametrize(
    ("name", "workspace"),
    [
        ("claude.exchange.jsonl", "/tmp/pytest-of-root/pytest-9/sample0"),
        ("codex.exchange.jsonl.gz", "/tmp/pytest-of-root/pytest-10/sample0"),
        ("gemini.exchange.jsonl", "/tmp/pytest-of-root/pytest-11/sample0"),
    ],
)
def test_another_runs_workspace_date_session_and_prompt_fingerprint_give_the_same_pins(
    tmp_path: Path, name: str, workspace: str
) -> None:
    _, lines = sample(name)
    first = read_run(stored(tmp_path / "a", lines, workspace=workspace))
    other = "/var/tmp/elsewhere/pytest-77/other-case3"
    moved = [
        # Gemini CLI names its project directory after the workspace's last part.
        line.replace("/.gemini/tmp/sample0", "/.gemini/tmp/other-case3")
        .replace(workspace, other)
        .replace(workspace.replace("/", "-"), other.replace("/", "-"))
        .replace("2026-12-0", "2027-01-1")
        .replace("December 2, 2026", "January 12, 2027")
        for line in lines[1:]
    ]
    second = read_run(stored(tmp_path / "b", [lines[0], *moved], workspace=other))

    assert isinstance(first, Sent)
    assert isinstance(second, Sent)
    assert second == first


def test_claude_codes_prompt_fingerprint_in_its_system_prompt_is_not_a_change(
    tmp_path: Path,
) -> None:
    _, lines = sample("claude.exchange.jsonl")
    first = read_run(stored(tmp_path / "a", lines))
    assert isinstance(first, Sent)
    # Its billing header's cc_version=2.1.197.463 ends with a fingerprint of the prompt.
    assert "cc_version=2.1.197.463" in "".join(lines)
    changed = [line.replace("cc_version=2.1.197.463", "cc_version=2.1.197.1b5") for line in lines]
    again = read_run(stored(tmp_path / "b", changed))

    assert isinstance(again, Sent)
    assert again.system_sha256 == first.system_sha256


def test_a_changed_instruction_file_in_claude_codes_context_changes_the_context_hash_only(
    tmp_path: Path,
) -> None:
    _, lines = sample("claude.exchange.jsonl")
    first = read_run(stored(tmp_path / "a", lines))
    marker = "As you answer the user's questions, you can use the following context:"
    changed = [line.replace(marker, marker + " Never push to main.") for line in lines]
    again = read_run(stored(tmp_path / "b", changed))

    assert isinstance(first, Sent)
    assert isinstance(again, Sent)
    assert marker in "".join(lines)
    assert again.context_sha256 != first.context_sha256
    assert again.system_sha256 == first.system_sha256
    assert (again.model, again.tools, again.sampling) == (first.model, first.tools, first.sampling)


def test_a_run_without_a_recording_or_a_model_request_says_why(tmp_path: Path) -> None:
    (tmp_path / "none").mkdir()
    refused = Exchange("POST", "/v1/messages", Message((), b"{}"), 500, "", Message((), b""))

    assert read_run(tmp_path / "none") == "run none has no recording of its model traffic"
    assert first_request([refused]) is None


def test_no_run_read_is_no_pin_and_runs_that_disagree_are_counted() -> None:
    one = Sent("m", "a" * 64, "c" * 64, ("Read",), {"temperature": 0})
    two = Sent("m", "b" * 64, "c" * 64, ("Bash",), {"temperature": 0})

    empty = summary((), ("recording is off",))
    both = summary((one, two, one))

    assert empty == {"runs": 0, "not_recorded": "recording is off", "scripted": False}
    assert both["runs"] == 3
    assert both["system_prompts"] == 2
    assert "contexts" not in both
    assert both["system_prompt_sha256"] not in ("a" * 64, "b" * 64)
    assert both["context_sha256"] == "c" * 64
    assert both["tools"] == ["Bash", "Read"]
    assert both["sampling"] == {"temperature": 0}
    assert summary((one, two)) == both | {"runs": 2}


def test_gemini_clis_listing_of_the_workspace_is_left_out_of_the_context(tmp_path: Path) -> None:
    _, lines = sample("gemini.exchange.jsonl")
    workspace = "/tmp/pytest-of-root/pytest-11/sample0"
    first = read_run(stored(tmp_path / "a", lines, workspace=workspace))
    # The CLI's own temporary files come and go in the listing between two runs.
    listing = workspace + "/" + "\\" * 2 + "n"  # as stored: a JSON string in JSON
    assert listing in "".join(lines)
    extra = listing + ".gemini/projects.json.tmp" + "\\" * 2 + "n"
    listed = [line.replace(listing, extra) for line in lines]
    rules = [
        line.replace("This is the Gemini CLI.", "This is the Gemini CLI. Rule.") for line in lines
    ]
    again = read_run(stored(tmp_path / "b", listed, workspace=workspace))
    ruled = read_run(stored(tmp_path / "c", rules, workspace=workspace))

    assert isinstance(first, Sent)
    assert isinstance(again, Sent)
    assert isinstance(ruled, Sent)
    assert again.context_sha256 == first.context_sha256
    assert ruled.context_sha256 != first.context_sha256
