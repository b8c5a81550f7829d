"""docs/reference.md against the code: its tables name exactly the options, ini options,
markers, subcommands, exit statuses and environment variables that the plugin and the
``evalcases`` command have, and every link on it leads to a real heading."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_evalcases.agents import make_agent
from pytest_evalcases.agents.base import AgentSettings, RunRequest
from pytest_evalcases.cli import main as evalcases
from pytest_evalcases.kinds import SEVERITIES
from pytest_evalcases.plugin.stash import session_of
from pytest_evalcases.results import gate

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "reference.md"
SRC = ROOT / "src" / "pytest_evalcases"
#: The pages the reference must link to (the ones that explain each item in depth).
DEEP_PAGES = ("case-format.md", "agents.md", "variants.md", "results.md")
DEEP_PAGES += ("writing-cases.md", "ci.md")

FENCE = re.compile(r"^[ \t]*```.*?^[ \t]*```[ \t]*$", re.MULTILINE | re.DOTALL)
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*$", re.MULTILINE)
LINK = re.compile(r"\]\(([^)\s]+)\)")
#: An option line of ``pytest --help``: two spaces, then the option (continuation
#: lines of the help text are indented much further).
HELP_OPTION = re.compile(r"^ {2}(--eval-[\w-]+(?:=\S+)?)(?:\s|$)")
HELP_INI = re.compile(r"^ {2}(eval_\w+) \(([^)]*)\):")


# -- the page ---------------------------------------------------------------------------


def page() -> str:
    return PAGE.read_text("utf-8")


def section(title: str) -> str:
    """The text of the ``## `` section whose heading starts with ``title``."""
    found = [s for s in re.split(r"^## ", page(), flags=re.MULTILINE)[1:] if s.startswith(title)]
    assert len(found) == 1, f"{PAGE.name}: expected one section {title!r}"
    return found[0]


def table(text: str, first_header: str) -> list[list[str]]:
    """The body rows (lists of cells) of the table whose first header is ``first_header``."""
    lines = text.splitlines()
    for start, line in enumerate(lines):
        if line.startswith("|") and _cells(line)[0] == first_header:
            body = []
            for row in lines[start + 2 :]:
                if not row.startswith("|"):
                    break
                body.append(_cells(row))
            assert body, f"table {first_header!r} has no rows"
            return body
    raise AssertionError(f"{PAGE.name}: no table with the first header {first_header!r}")


def _cells(line: str) -> list[str]:
    """A Markdown table row's cells; ``\\|`` is a pipe inside a cell."""
    cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [cell.strip().replace("\\|", "|") for cell in cells]


def code(cell: str) -> str:
    """The first ``code span`` of a cell."""
    match = re.search(r"`([^`]+)`", cell)
    assert match, f"no code span in {cell!r}"
    return match.group(1)


def options_table() -> dict[str, list[str]]:
    return {code(row[0]): row for row in table(section("Command-line options"), "option")}


def ini_table() -> dict[str, list[str]]:
    return {code(row[0]): row for row in table(section("Ini options"), "ini")}


def commands_table() -> dict[str, str]:
    rows = table(section("The `evalcases` command"), "command")
    return {code(row[0]).split()[1]: " | ".join(row) for row in rows}


# -- what the code registers ------------------------------------------------------------


def pytest_help(pytester: pytest.Pytester) -> list[str]:
    result = pytester.runpytest("--help")
    assert result.ret == 0
    return result.outlines


def help_options(lines: list[str]) -> dict[str, str]:
    """``--eval-x=METAVAR`` as ``pytest --help`` shows it -> its help text (one line)."""
    found: dict[str, str] = {}
    current: list[str] | None = None
    for line in lines:
        match = HELP_OPTION.match(line)
        if match:
            current = [line[match.end() :]]
            found[match.group(1)] = ""
            key = match.group(1)
        elif current is not None and line.startswith(" " * 4) and line.strip():
            current.append(line)
        else:
            current = None
        if current is not None:
            found[key] = " ".join(" ".join(current).split())
    return found


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "pytest_evalcases.cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )


def subcommands() -> list[str]:
    """The subcommands ``evalcases --help`` lists (under COMMAND)."""
    done = cli("--help")
    assert done.returncode == 0, done.stderr
    listing = done.stdout.split("COMMAND\n", 1)[1].split("\n\n", 1)[0]
    names = re.findall(r"^ {4}([a-z][\w-]*)(?: {2,}|$)", listing, flags=re.MULTILINE)
    assert names, done.stdout
    return names


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text("utf-8"))
    seen: dict[str, int] = {}
    found = set()
    for match in HEADING.finditer(text):
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


# -- the tests --------------------------------------------------------------------------


def test_options_table_lists_every_registered_option(pytester: pytest.Pytester) -> None:
    registered = help_options(pytest_help(pytester))
    assert len(registered) >= 15
    # The option with its metavar, exactly as pytest --help writes it.
    assert set(options_table()) == set(registered)


def test_options_table_names_the_ini_option_the_help_names(pytester: pytest.Pytester) -> None:
    lines = pytest_help(pytester)
    inis = {name for line in lines for name, _ in HELP_INI.findall(line)}
    rows = options_table()
    for option, text in help_options(lines).items():
        for name in re.findall(r"\(ini: (eval_\w+)\)", text):
            assert name in rows[option][2], f"{option}: help says ini {name}"
    for option, row in rows.items():
        assert set(re.findall(r"\beval_\w+", row[2])) <= inis, option


SHARED_DESTS = {"eval_config": "eval_variant"}


def test_options_table_defaults(pytester: pytest.Pytester) -> None:
    config = pytester.parseconfig()
    for option, row in options_table().items():
        dest = option.split("=", 1)[0].lstrip("-").replace("-", "_")
        # --eval-config and --eval-variant share one list, in the order given.
        default = config.getoption(SHARED_DESTS.get(dest, dest))
        if isinstance(default, bool):
            assert not default
            assert row[1].startswith("off"), option
        elif isinstance(default, int):
            assert row[1] == f"`{default}`", option
        else:
            assert default in (None, []), option
            assert not re.fullmatch(r"`\d+`", row[1]), option


def test_ini_table_lists_every_registered_ini_option(pytester: pytest.Pytester) -> None:
    registered = {
        name: kind for line in pytest_help(pytester) for name, kind in HELP_INI.findall(line)
    }
    assert len(registered) >= 10
    documented = {name: row[1] for name, row in ini_table().items()}
    if pytest.version_tuple < (9, 2):
        # Numbers are read as strings before pytest 9.2 (the page says so).
        documented = {k: "string" if v == "float | string" else v for k, v in documented.items()}
    assert documented == registered


def test_ini_table_defaults(pytester: pytest.Pytester) -> None:
    config = pytester.parseconfig()
    for name, row in ini_table().items():
        default = config.getini(name)
        if isinstance(default, list):
            default = " ".join(str(item) for item in default)
        if default:
            assert f"`{default}`" in row[2], name
        else:
            assert row[2] in ("none", "the rootdir"), name


def test_markers_table_lists_the_registered_severities(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers")
    registered = {m for line in result.outlines for m in re.findall(r"^@pytest\.mark\.(\w+)", line)}
    assert set(SEVERITIES) <= registered
    rows = table(section("Markers and `-k`"), "marker")
    assert {code(row[0]) for row in rows} == set(SEVERITIES)


def test_commands_table_lists_every_subcommand() -> None:
    assert set(commands_table()) == set(subcommands())
    version = cli("--version")
    assert version.returncode == 0
    assert version.stdout.startswith("evalcases ")
    assert "`evalcases --version`" in section("The `evalcases` command")


@pytest.mark.slow
def test_commands_table_gives_the_arguments_and_defaults_of_each(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = commands_table()
    # Each subcommand's help in this process (the listing of them came from the real
    # entry point): a process a subcommand cost 20 to 30 seconds under CI's load.
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("NO_COLOR", "1")
    for name in subcommands():
        with pytest.raises(SystemExit) as exited:
            evalcases([name, "--help"])
        assert exited.value.code == 0
        help_text = capsys.readouterr().out
        lines = help_text.splitlines()
        # usage: evalcases compare [-h] [--tolerance POINTS] [--all] A.json B.json
        usage = lines[0].split()[3:]
        words = {w.strip("[]") for w in usage} - {"-h", "..."}
        options = lines[lines.index("options:") + 1 :]
        for line in options:
            if line.startswith("  -"):
                words.update(re.findall(r"--?[a-z][\w-]*", re.split(r" {2,}", line.strip())[0]))
        words -= {"-h", "--help"}
        words.update(re.findall(r"\(default: ([\w./-]+)\)", " ".join(help_text.split())))
        for word in sorted(words):
            assert re.search(rf"(?<![\w.-]){re.escape(word)}(?![\w.-])", rows[name]), (
                f"evalcases {name}: {word!r} is not in its row"
            )


def test_exit_status_table() -> None:
    rows = {int(row[0]): row[1] for row in table(section("Exit statuses"), "status")}
    verdicts = {gate.EXIT_PASS: "PASS", gate.EXIT_BLOCKED: "BLOCKED"}
    verdicts[gate.EXIT_INCONCLUSIVE] = "INCONCLUSIVE"
    for status, verdict in verdicts.items():
        assert gate.Verdict(verdict).exit_code == status
        assert rows[status] == verdict
    pytest_own = {
        pytest.ExitCode.INTERNAL_ERROR,
        pytest.ExitCode.USAGE_ERROR,
        pytest.ExitCode.NO_TESTS_COLLECTED,
    }
    assert set(rows) == set(verdicts) | {int(code) for code in pytest_own}
    assert all(rows[int(code)] == "(pytest)" for code in pytest_own)


def test_environment_table_lists_every_variable_the_plugin_sets(tmp_path: Path) -> None:
    used = set()
    for path in SRC.rglob("*.py"):
        used.update(
            re.findall(r"\b(?:EVALCASES_[A-Z_]+|GIT_[A-Z]+_DATE)\b", path.read_text("utf-8"))
        )
    assert used
    # And what a built-in driver sets for its own command.
    request = RunRequest(prompt="p", workspace=tmp_path, bare=True, timeout=1.0, env={})
    for name in ("claude", "codex", "gemini"):
        agent = make_agent(AgentSettings(name))
        used.update(variable for variable, _ in agent.invocation(request).env)
    assert "GEMINI_CLI_TRUST_WORKSPACE" in used
    rows = table(section("Environment variables"), "variable")
    assert {code(row[0]) for row in rows} == used


def test_the_github_variables_the_plugin_reads_are_in_the_reference() -> None:
    used = set()
    for path in (SRC / "session" / "ci.py", SRC / "cli" / "report.py"):
        used.update(re.findall(r"\bGITHUB_[A-Z_]+\b", path.read_text("utf-8")))
    assert "GITHUB_STEP_SUMMARY" in used
    rows = table(section("Environment variables"), "read")
    assert {code(row[0]) for row in rows} == used


def test_links_lead_to_real_headings() -> None:
    targets = LINK.findall(FENCE.sub("", page()))
    linked = set()
    for target in targets:
        if target.startswith(("http://", "https://")):
            continue
        file, _, anchor = target.partition("#")
        path = (PAGE.parent / file).resolve() if file else PAGE
        assert path.is_file(), f"{target}: no such file"
        linked.add(path.name)
        if anchor:
            assert anchor in anchors(path), f"{target}: no such heading in {path.name}"
    assert set(DEEP_PAGES) <= linked


def test_every_table_row_links_to_a_page() -> None:
    for title, first in (
        ("Command-line options", "option"),
        ("Ini options", "ini"),
        ("Markers and `-k`", "marker"),
        ("The `evalcases` command", "command"),
        ("Exit statuses", "status"),
        ("Environment variables", "variable"),
    ):
        for row in table(section(title), first):
            assert LINK.search(row[-1]), f"{title}: {row[0]} links nowhere"


def test_placeholders_table_lists_every_placeholder_of_the_command_agent(
    pytester: pytest.Pytester,
) -> None:
    config = pytester.parseconfigure("--eval-agent-command", "agent {prompt}")
    agent = session_of(config).settings.agent
    assert agent is not None
    rows = table(section("Placeholders of `eval_agent_command`"), "placeholder")
    assert {code(row[0]) for row in rows} == {"{prompt}"} | {
        "{" + name + "}" for name in agent.placeholders
    }
    assert str(config.rootpath) == agent.placeholders["rootdir"]
