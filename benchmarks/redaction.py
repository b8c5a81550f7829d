"""The cost of redaction on one realistic record (docs/results.md, "Secrets").

Run from the repository root with ``python benchmarks/redaction.py``. Redaction runs on
every string of every record (when the record is made, and again when the results file
is written), so its cost per record is what a session pays per run. The environment
is a CI runner's: about forty variables, six of them secret (an Anthropic key, AWS keys
with an 800-character session token, a GitHub token, a database password with quotes
and a backslash). The record is a failed run with five checks quoting the answer,
files and a command's output, and an errored run with a 600-character stderr tail.

It prints the median CPU time (a noisy neighbour on a shared machine counts less than
in wall-clock time) per record of :meth:`Redactor.data`, of making a :class:`Redactor`
(reading the environment), and of one call of :func:`shorten` (a check's quote: the
environment read, then redact and cut), each over several rounds.
"""

from __future__ import annotations

import argparse
import random
import statistics
import string
import time
from collections.abc import Callable

from pytest_evalcases.redact import Redactor, shorten
from pytest_evalcases.results.record import CheckRecord, RunRecord

_RANDOM = random.Random(7)


def _token(length: int, alphabet: str = string.ascii_letters + string.digits + "+/") -> str:
    return "".join(_RANDOM.choice(alphabet) for _ in range(length))


_GITHUB = ["ACTION", "ACTOR", "BASE_REF", "EVENT_NAME", "JOB", "REF", "REPOSITORY", "RUN_ID"]
_RUNNER = ["ARCH", "NAME", "OS", "TEMP", "TOOL_CACHE", "WORKSPACE", "DEBUG", "ENVIRONMENT"]
_KEY = string.ascii_letters + string.digits + "-_"
ENV = {
    **{f"GITHUB_{name}": f"value-of-{name.lower()}" for name in _GITHUB},
    **{f"RUNNER_{name}": f"/home/runner/{name.lower()}" for name in _RUNNER},
    **{f"PYTHON_VAR_{n}": f"value {n}" for n in range(12)},
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME": "/home/runner",
    "LANG": "C.UTF-8",
    "PYTHONHASHSEED": "0",
    "CI": "true",
    "TOKENIZERS_PARALLELISM": "false",
    "ANTHROPIC_API_KEY": "sk-ant-api03-" + _token(93, _KEY) + "AA",
    "AWS_ACCESS_KEY_ID": "AKIA" + _token(16, string.ascii_uppercase + string.digits),
    "AWS_SECRET_ACCESS_KEY": _token(40),
    "AWS_SESSION_TOKEN": _token(800),
    "GITHUB_TOKEN": "ghs_" + _token(36, string.ascii_letters + string.digits),
    "DB_PASSWORD": "p@ss\\w0rd\"Q'zz!9",
}

ANSWER = (
    "I changed the service so that the limit is checked before the loop, and added a "
    "test for the boundary. The commit message is: fix(service): bounds check."
)
STDERR = "\n".join(
    f'  File "/home/runner/work/app/app/src/service.py", line {n}, in handle' for n in range(12)
)


def record() -> RunRecord:
    """A failed run of five checks, as run_record makes it."""
    answer = f"pattern '^feat' not found in the final answer: {ANSWER[:160]!r}…"
    line = "src/service.py:12: pattern 'print\\(' must not match: '    print(limit)'"
    output = "`pytest -q` failed: exit status 1; output: " + repr(STDERR[-300:])
    checks = [
        CheckRecord("commit", "output_matches", None, False, answer),
        CheckRecord("no-print", "file_not_matches", "no debugging output", False, line),
        CheckRecord("tests", "command_succeeds", None, False, output),
        CheckRecord("readme", "file_exists", None, True, "README.md: 1 file(s) found"),
        CheckRecord("no-shell", "tool_not_called", None, True, "no call of tool 'Bash'"),
    ]
    return RunRecord(
        case_id="service-bounds-check",
        file="evals/service/bounds.yaml",
        line=3,
        defends="AGENTS.md",
        severity="critical",
        outcome="failed",
        description="The agent checks bounds before the loop, as AGENTS.md asks.",
        tags=["service", "bounds", "regression"],
        checks=checks,
        duration=41.2,
        tokens_in=18234,
        tokens_out=912,
        cost_usd=0.0831,
        model="claude-sonnet-4-5",
        workspace="/tmp/pytest-of-runner/pytest-3/evalcases-workspaces/service-bounds-check-r0",
        nodeid="evals/service/bounds.yaml::service-bounds-check",
        fixture="/home/runner/work/app/app/evals/fixtures/service",
        permission_denials=["Bash: rm -rf build", "WebFetch: https://example.com/docs"],
    )


def errored() -> RunRecord:
    """A run that reached no verdict: the agent's stderr tail in the error."""
    rec = record()
    rec.checks = []
    rec.outcome = "error"
    rec.error_kind = "crash"
    rec.error = "claude exited with status 1 without a result event: …" + STDERR[-600:]
    return rec


def _median(fn: Callable[[], object], number: int, repeat: int) -> float:
    rounds = []
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(number):
            fn()
        rounds.append((time.process_time() - start) / number)
    return statistics.median(rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=300)
    args = parser.parse_args()
    redactor = Redactor(ENV)
    failed, error = record().to_dict(), errored().to_dict()
    per_failed = _median(lambda: redactor.data(failed), args.number, args.repeat)
    per_error = _median(lambda: redactor.data(error), args.number, args.repeat)
    made = _median(lambda: Redactor(ENV), args.number, args.repeat)
    quoted = _median(lambda: shorten(ANSWER, 160, redactor=Redactor(ENV)), args.number, args.repeat)
    print(f"Redactor.data, failed record (5 checks):   {per_failed * 1e6:8.1f} µs")
    print(f"Redactor.data, errored record (600 chars): {per_error * 1e6:8.1f} µs")
    print(f"Redactor(env), reading the environment:    {made * 1e6:8.1f} µs")
    print(f"shorten(answer, 160) with a new Redactor:  {quoted * 1e6:8.1f} µs")


if __name__ == "__main__":
    main()
