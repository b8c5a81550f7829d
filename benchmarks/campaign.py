"""Reliability and security campaign: the "Figures" table of issue 10, for this checkout.

Run from the repository root with ``python benchmarks/campaign.py`` (a few minutes on 2
cores; ``--quick`` for a smaller sample). Every scenario is a real ``pytest`` session in
a temporary directory, started in a process group of its own under a deadline (30 s
unless told otherwise) after which the whole group is killed. Five areas:

* **case files**: mutated case files from the fuzz corpus (``tests/helpers/fuzzcorpus.py``),
  each beside one valid case, run cold (no parse cache) and warm (the cache of the cold
  run). A run fails for: a crash that loses the run (the valid case did not pass, no
  results file, INTERNALERROR), a hang, a raw traceback, a file silently skipped, a
  ``cwd`` outside the evals root accepted, duplicate keys accepted, a size blow-up of the
  results file or the parse cache, a duplicate id that blames the valid file.
* **agent faults**: command agents that misbehave (delete their workspace, ``chmod 000``
  their files, write outside the workspace, start a ``setsid`` daemon, print 100 MB,
  never exit, ...), with and without the sandbox. A behaviour fails for a hang, a raw
  traceback, a process left running, an errored record without ``error_kind``, ``error``
  or ``workspace``, or what the behaviour itself must not achieve (a write outside that
  nobody reports, a check that never ends).
* **signals**: SIGTERM, SIGHUP, SIGINT and SIGKILL to pytest, to the xdist controller and
  to the whole process group under ``-n 2``, and a double Ctrl-C at several intervals.
  Fails for: no exit within the deadline, an agent left running, no results file, a
  results file that says complete or PASS, no summary.
* **secrets**: eight secrets in the environment (names the docs promise to redact),
  printed by the agent raw, escaped, at the cut of a quote and of a stderr tail; any
  secret (or 10 characters of its random part) in the terminal, the JUnit XML, the JSON
  report, the results file, ``--eval-html`` or pytest-html (when installed) fails.
* **path escapes**: ``cwd`` outside the evals root, symlinked fixture files and
  directories, a graded ``output.txt`` that is a symlink, symlinks an agent makes (to a
  file, a directory, ``/``, a cycle) under every reading check and ``**`` globs, and
  ``evalcases lint`` with ``defends: ../../..``. Fails when text from outside reaches any
  output, when a check passes by reading outside, or for a hang or a traceback.

It prints one table "area | tried | failed", then each failure by name. Nothing here
uses the network; every temporary directory and every process it started is removed
at the end (processes by a token in their environment, which every agent inherits).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import html
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.helpers import fuzzcorpus  # noqa: E402

#: Seconds one pytest session may take before its process group is killed.
DEADLINE = 30.0
#: The environment variable whose value marks every process a scenario started.
TOKEN_VAR = "EVALCASES_CAMPAIGN_TOKEN"
#: A results file or parse cache larger than this many times the case file (plus a MiB)
#: is a size blow-up.
GROWTH = 20
TRACEBACK = re.compile(
    r"Traceback \(most recent call last\)|^\S+\.py:\d+: in \S+|^E\s+[\w.]*(?:Error|Exception)\b",
    re.MULTILINE,
)

ENV = {
    k: v
    for k, v in os.environ.items()
    if k not in ("PYTHONDONTWRITEBYTECODE", "PYTEST_ADDOPTS", "CI", "BUILD_NUMBER")
    and not k.endswith("_proxy")
    and not k.endswith("_PROXY")
}


@dataclass
class Area:
    """What one area tried and what failed, by scenario name."""

    name: str
    tried: int = 0
    failures: dict[str, list[str]] = field(default_factory=dict)

    def record(self, scenario: str, problems: Sequence[str]) -> None:
        self.tried += 1
        if problems:
            self.failures[scenario] = sorted(set(problems))


@dataclass
class Session:
    """One finished pytest session (or command)."""

    ret: int | None
    out: str
    hung: bool
    seconds: float
    root: Path
    #: Processes of the session still running once pytest had exited (then killed).
    survivors: int = 0

    def results(self, name: str = "results.json") -> dict | None:  # type: ignore[type-arg]
        path = self.root / name
        try:
            return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
        except (OSError, ValueError):
            return None

    @property
    def traceback(self) -> bool:
        return TRACEBACK.search(self.out) is not None


class Campaign:
    """Shared state: the temporary directory, the tokens that mark every process a
    scenario started (each scenario its own, so that parallel ones never touch each
    other's processes)."""

    def __init__(self, tmp: Path, jobs: int, only: str = "") -> None:
        self.tmp = tmp
        self.jobs = jobs
        #: A regular expression: only the mutations, signal scenarios and agent faults it finds.
        self.only = only
        self.id = uuid.uuid4().hex
        self._count = itertools.count(1)
        (tmp / "tmp").mkdir(mode=0o1777)
        (tmp / "tmp").chmod(0o1777)
        self._lock = threading.Lock()

    def workdir(self, name: str) -> tuple[Path, str]:
        """A fresh directory for a scenario, and the scenario's token."""
        with self._lock:
            n = next(self._count)
        slug = re.sub(r"[^a-z0-9-]+", "-", name.lower())[:60]
        path = self.tmp / f"{n:04d}-{slug}"
        path.mkdir(parents=True)
        return path, f"{self.id}-{n}"

    def env(self, token: str, **more: str) -> dict[str, str]:
        # Agent homes go below the cache directory, and the plugin's temporary files in
        # TMPDIR (a killed session cannot remove them): the campaign's own.
        return {
            **ENV,
            TOKEN_VAR: token,
            "PYTHONUNBUFFERED": "1",
            "XDG_CACHE_HOME": str(self.tmp / "cache"),
            "TMPDIR": str(self.tmp / "tmp"),
            **more,
        }

    def start(self, args: Sequence[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            list(args),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def finish(
        self,
        proc: subprocess.Popen[bytes],
        cwd: Path,
        started: float,
        deadline: float,
        token: str,
    ) -> Session:
        """Wait for ``proc`` until ``deadline`` seconds after ``started``; then kill its
        group and every process of ``token`` (counted first, when pytest had exited)."""
        hung = False
        try:
            out, _ = proc.communicate(timeout=max(0.1, deadline - (time.monotonic() - started)))
        except subprocess.TimeoutExpired:
            hung = True
            _killpg(proc.pid)
            out, _ = proc.communicate()
        survivors = 0
        if not hung:
            time.sleep(0.3)
            survivors = len(self.survivors(token))
        _killpg(proc.pid)
        self.sweep(token)
        text = out.decode("utf-8", "replace")
        (cwd / "campaign-output.txt").write_text(text, encoding="utf-8")
        return Session(proc.returncode, text, hung, time.monotonic() - started, cwd, survivors)

    def pytest(
        self,
        cwd: Path,
        token: str,
        *args: str,
        deadline: float = DEADLINE,
        env: dict[str, str] | None = None,
        prefix: Sequence[str] = (),
    ) -> Session:
        started = time.monotonic()
        # pytest's own temporary directories (workspaces kept for inspection) stay in
        # the scenario's directory, which the campaign removes.
        cmd = [*prefix, sys.executable, "-m", "pytest", "-q", f"--basetemp={cwd}/basetemp", *args]
        proc = self.start(cmd, cwd, env or self.env(token))
        return self.finish(proc, cwd, started, deadline, token)

    def survivors(self, token: str) -> list[int]:
        """Processes whose environment holds ``token`` (a prefix of it: the campaign's id
        finds every scenario's)."""
        found = []
        needle = f"{TOKEN_VAR}={token}".encode()
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    env = f.read()
            except OSError:
                continue
            if any(v == needle or v.startswith(needle + b"-") for v in env.split(b"\0")):
                found.append(int(entry))
        return found

    def sweep(self, token: str) -> int:
        """Kill every process of ``token``; how many there were."""
        pids = self.survivors(token)
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        return len(pids)

    def parallel(self, tasks: Sequence[Callable[[], None]]) -> None:
        with concurrent.futures.ThreadPoolExecutor(max_workers=self.jobs) as pool:
            for future in [pool.submit(task) for task in tasks]:
                future.result()


def _killpg(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def tree_size(path: Path) -> int:
    total = 0
    for dirpath, _, names in os.walk(path):
        for name in names:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total


# -- case files ---------------------------------------------------------------------------

#: Mutations whose duplicate keys are not duplicates (a YAML merge key is overridden).
NOT_DUPLICATES = {"ycase-dup-key-merge-override"}


def mutation_sample(count: int) -> list[fuzzcorpus.Mutation]:
    """``count`` mutations, every category in turn (all of them for 0)."""
    corpus = fuzzcorpus.corpus()
    if count <= 0 or count >= len(corpus):
        return corpus
    groups: dict[str, list[fuzzcorpus.Mutation]] = {}
    for m in corpus:
        groups.setdefault(m.category, []).append(m)
    sample: list[fuzzcorpus.Mutation] = []
    while len(sample) < count:
        for group in groups.values():
            if group and len(sample) < count:
                sample.append(group.pop(0))
    return sample


def case_files(c: Campaign, area: Area, count: int) -> None:
    def one(m: fuzzcorpus.Mutation) -> None:
        root, token = c.workdir(m.key)
        (root / "pytest.ini").write_text("[pytest]\n")
        evals = root / "evals"
        fuzzcorpus.write_suite(evals)
        m.write(evals)
        size = len(m.content)
        for run in ("cold", "warm"):
            s = c.pytest(root, token, "--eval-workspace", "graded", "--eval-save", "results.json")
            area.record(f"{m.key} ({run})", judge_case_file(s, m, size))
            if s.hung:
                break

    chosen = mutation_sample(count)
    if c.only:
        chosen = [m for m in fuzzcorpus.corpus() if re.search(c.only, m.key)]
    c.parallel([lambda m=m: one(m) for m in chosen])


def judge_case_file(s: Session, m: fuzzcorpus.Mutation, size: int) -> list[str]:
    problems = []
    if s.hung:
        return ["hang over 30 s"]
    if s.traceback:
        problems.append("raw traceback")
    doc = s.results()
    records = doc["cases"] if doc else []
    valid = [r for r in records if r["file"] == "evals/valid.yaml"]
    # A name that is not UTF-8 is shown with \x escapes (docs/case-format.md).
    name = m.name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    mine = [r for r in records if r["file"] == f"evals/{name}"]
    if valid and valid[0]["outcome"] != "passed" and "duplicate id" in (valid[0]["error"] or ""):
        # An id in two files is an error on the cases of both, each naming the other
        # (docs/case-format.md); an error on the unchanged file alone is blame.
        named = name in valid[0]["error"] and any("valid.yaml" in (r["error"] or "") for r in mine)
        if not named:
            problems.append("duplicate id blames the valid file")
    elif doc is None or "INTERNALERROR" in s.out or not valid or valid[0]["outcome"] != "passed":
        problems.append("crash that loses the run")
    elif not mine and m.kind not in ("unreadable",) and m.category != "dup-id":
        problems.append("file silently skipped")
    accepted = bool(mine) and all(r["error_kind"] != "case-file" for r in mine)
    if accepted and m.category == "cwd" and m.key != "ycase-cwd-evals-root-itself":
        problems.append("cwd escape")
    if accepted and m.category == "dup-key" and m.key not in NOT_DUPLICATES:
        problems.append("duplicate keys accepted")
    limit = GROWTH * size + (1 << 20)
    if (s.root / "results.json").exists() and (s.root / "results.json").stat().st_size > limit:
        problems.append("size blow-up (results file)")
    if tree_size(s.root / ".pytest_cache") > limit:
        problems.append("size blow-up (parse cache)")
    return problems


# -- agent faults -------------------------------------------------------------------------

CASE = """\
id: {id}
defends: AGENTS.md
prompt: {id}
timeout: {timeout}
checks:
{checks}
"""


@dataclass(frozen=True)
class Fault:
    """A misbehaving agent (a shell script run in its workspace) and its checks."""

    name: str
    script: str
    checks: str = "  - type: output_matches\n    pattern: ok\n"
    timeout: float = 5
    #: Run pytest as an unprivileged user (``chmod 000`` means nothing to root).
    unprivileged: bool = False
    #: A file outside the workspace that the agent writes, which must not appear unreported.
    outside_write: bool = False
    #: Seconds the session may take: more than a check's own time limit where the fault
    #: is a check that runs until it (docs/case-format.md, "Time limits").
    deadline: float = DEADLINE
    #: The error kind the run must end in, if any.
    error_kind: str | None = None


FAULTS = [
    Fault(
        "deletes its workspace, then a command check",
        'rm -rf "$EVALCASES_WORKSPACE"; echo ok',
        "  - type: command_succeeds\n    command: 'true'\n",
    ),
    Fault(
        "deletes its workspace, then a file check",
        'cd /; rm -rf "$EVALCASES_WORKSPACE"; echo ok',
        "  - type: file_matches\n    path: a.txt\n    pattern: x\n",
    ),
    Fault(
        "chmod 000 its file, then file_matches",
        "echo x > a.txt; chmod 000 a.txt; echo ok",
        "  - type: file_matches\n    path: a.txt\n    pattern: x\n",
        unprivileged=True,
    ),
    Fault(
        "chmod 000 its directory, then a glob",
        "mkdir d; echo x > d/a.txt; chmod 000 d; echo ok",
        "  - type: file_absent\n    path: '**/*.orig'\n",
        unprivileged=True,
    ),
    Fault(
        "writes outside its workspace",
        'echo leaked > "$CAMPAIGN_OUTSIDE/leak.txt"; echo ok',
        outside_write=True,
    ),
    Fault("setsid daemon", "setsid sh -c 'sleep 300' >/dev/null 2>&1 & echo ok"),
    Fault("background child", "sleep 300 >/dev/null 2>&1 & echo ok"),
    Fault("nohup child in a new group", "nohup setsid sleep 300 >/dev/null 2>&1 & echo ok"),
    Fault("100 MB on stdout", "head -c 100000000 /dev/zero | tr '\\0' a; echo ok"),
    Fault("100 MB on stderr, exit 1", "head -c 100000000 /dev/zero | tr '\\0' a >&2; exit 1"),
    Fault("never exits", "sleep 1000", timeout=3),
    Fault("ignores SIGTERM", "trap '' TERM; sleep 1000 & wait; sleep 1000", timeout=3),
    Fault("exits 3", "echo partial; exit 3"),
    Fault("killed by a signal", "kill -9 $$"),
    Fault("output not UTF-8", "printf 'ok \\377\\376 \\000 done\\n'"),
    Fault("closes stdout and lingers", "exec >&- 2>&-; sleep 2"),
    Fault("fork fan-out", "for i in 1 2 3 4 5 6 7 8 9 10; do sleep 300 & done; echo ok"),
    Fault(
        "writes a 200 MB file",
        "head -c 200000000 /dev/zero > big.bin; echo ok",
        "  - type: file_matches\n    path: big.bin\n    pattern: x\n",
    ),
    Fault(
        "symlink cycle under a ** glob",
        "ln -s . a; ln -s . b; echo ok",
        "  - type: file_absent\n    path: '**/*.orig'\n",
    ),
    Fault(
        "symlink to / under a ** glob",
        "ln -s / r; echo ok",
        "  - type: file_exists\n    path: '**/shadow'\n",
    ),
    Fault(
        "catastrophic regex on its answer",
        "echo aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!",
        "  - type: output_matches\n    pattern: '(a+)+$'\n",
        deadline=DEADLINE + 30,
        error_kind="check-timeout",
    ),
]


def agent_faults(c: Campaign, area: Area, sandboxes: Sequence[str]) -> None:
    chosen = [f for f in FAULTS if re.search(c.only, f.name)]
    tasks = [(lambda f=f, sb=sb: one_fault(c, area, f, sb)) for sb in sandboxes for f in chosen]
    c.parallel(tasks)


def one_fault(c: Campaign, area: Area, fault: Fault, sandbox: str) -> None:
    name = f"{fault.name} [sandbox {sandbox}]"
    root, token = c.workdir(name)
    outside = root / "outside"
    outside.mkdir()
    write(
        root,
        {
            "agent.sh": fault.script + "\n",
            "pytest.ini": f"[pytest]\neval_agent_command = sh {root}/agent.sh\n"
            f"eval_sandbox = {sandbox}\n",
            "AGENTS.md": "Answer ok.\n",
            "evals/fault.yaml": CASE.format(id="fault", timeout=fault.timeout, checks=fault.checks),
        },
    )
    prefix: list[str] = []
    env = c.env(token, CAMPAIGN_OUTSIDE=str(outside), HOME=str(root))
    if fault.unprivileged:
        if os.geteuid() != 0 or shutil.which("setpriv") is None:
            return  # not root: pytest runs unprivileged already (the other fault kinds)
        c.tmp.chmod(0o755)
        for dirpath, _, filenames in os.walk(root):
            for entry in [dirpath, *(os.path.join(dirpath, n) for n in filenames)]:
                os.chown(entry, 65534, 65534)
        prefix = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
        env["XDG_CACHE_HOME"] = str(root / ".cache")
    s = c.pytest(
        root,
        token,
        "--eval-save",
        "results.json",
        "-p",
        "no:cacheprovider",
        env=env,
        prefix=prefix,
        deadline=fault.deadline,
    )
    problems = []
    if s.hung:
        problems.append(f"hang over {fault.deadline:g} s")
    if s.traceback:
        problems.append(f"raw traceback ({s.out.count(chr(10))} lines of output)")
    if s.survivors:
        problems.append("processes left running")
    doc = s.results()
    if doc is None:
        if not s.hung:
            problems.append("no results file")
    else:
        for record in doc["cases"]:
            if record["outcome"] == "error":
                empty = [k for k in ("error_kind", "error", "workspace") if not record.get(k)]
                if empty:
                    problems.append(f"errored record without {', '.join(empty)}")
        if fault.error_kind and [r["error_kind"] for r in doc["cases"]] != [fault.error_kind]:
            problems.append(f"not one {fault.error_kind} error")
        if (root / "results.json").stat().st_size > 10 << 20:
            problems.append("results file over 10 MB")
    if fault.outside_write and (outside / "leak.txt").exists():
        reported = doc is not None and any(
            r.get("refused_writes")
            or r["error_kind"] == "workspace"
            or "leak.txt" in (r.get("error") or "")
            for r in doc["cases"]
        )
        if not reported:
            problems.append("write outside the workspace, undetected")
    area.record(name, problems)


# -- signals ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SignalScenario:
    name: str
    signals: tuple[signal.Signals, ...]
    #: Seconds between the signals (double Ctrl-C).
    gap: float = 0.0
    workers: int = 0
    group: bool = False
    #: SIGKILL cannot be handled: only "nothing survives" is asked of it.
    only_survivors: bool = False


SIGNAL_SCENARIOS = [
    SignalScenario("SIGTERM to pytest", (signal.SIGTERM,)),
    SignalScenario("SIGHUP to pytest", (signal.SIGHUP,)),
    SignalScenario("SIGINT to pytest", (signal.SIGINT,)),
    SignalScenario("SIGTERM to the xdist controller", (signal.SIGTERM,), workers=2),
    SignalScenario("SIGTERM to the group under -n 2", (signal.SIGTERM,), workers=2, group=True),
    SignalScenario("SIGINT to the group under -n 2", (signal.SIGINT,), workers=2, group=True),
    SignalScenario("SIGHUP to the group under -n 2", (signal.SIGHUP,), workers=2, group=True),
    SignalScenario("SIGKILL to pytest", (signal.SIGKILL,), only_survivors=True),
    *(
        SignalScenario(f"double Ctrl-C {gap:g} s apart", (signal.SIGINT, signal.SIGINT), gap=gap)
        for gap in (0.05, 0.2, 0.5, 1.0)
    ),
]

SIGNAL_AGENT = """\
touch "$CAMPAIGN_MARKS/$EVALCASES_CASE_ID"
sleep 1111 &
sleep 2
echo ok
"""


def signals(c: Campaign, area: Area) -> None:
    chosen = [s for s in SIGNAL_SCENARIOS if re.search(c.only, s.name)]
    c.parallel([lambda s=s: one_signal(c, area, s) for s in chosen])


def one_signal(c: Campaign, area: Area, sc: SignalScenario) -> None:
    root, token = c.workdir(sc.name)
    marks = root / "marks"
    marks.mkdir()
    files = {
        "agent.sh": SIGNAL_AGENT,
        "pytest.ini": f"[pytest]\neval_agent_command = sh {root}/agent.sh\n"
        f"eval_sandbox_rw = {marks}\n",
        "AGENTS.md": "Answer ok.\n",
    }
    for n in range(8):
        files[f"evals/case-{n}.yaml"] = CASE.format(
            id=f"case-{n}", timeout=60, checks="  - type: output_matches\n    pattern: ok\n"
        )
    write(root, files)
    args = ["-q", "--eval-save", "results.json", "-p", "no:cacheprovider"]
    if sc.workers:
        args += ["-n", str(sc.workers)]
    started = time.monotonic()
    cmd = [sys.executable, "-m", "pytest", f"--basetemp={root}/basetemp", *args]
    proc = c.start(cmd, root, c.env(token, CAMPAIGN_MARKS=str(marks)))
    problems = []
    # The signal lands while an agent runs, after at least one case has finished.
    while len(list(marks.iterdir())) < (sc.workers or 1) + 1:
        if proc.poll() is not None or time.monotonic() - started > DEADLINE:
            problems.append("the run never started an agent")
            break
        time.sleep(0.05)
    else:
        # Double Ctrl-C: the second lands while the first winds the session down.
        time.sleep(0.3)
        for n, sig in enumerate(sc.signals):
            if n:
                time.sleep(sc.gap)
            try:
                if sc.group:
                    os.killpg(proc.pid, sig)
                else:
                    proc.send_signal(sig)
            except OSError:
                pass
    sent = time.monotonic()
    s = c.finish(proc, root, started, DEADLINE + (sent - started), token)
    if s.survivors:
        problems.append(f"{s.survivors} processes left running")
    if s.hung:
        problems.append("no exit within 30 s")
    if not sc.only_survivors and not problems:
        doc = s.results()
        if doc is None:
            problems.append("no results file")
        else:
            if doc["complete"]:
                problems.append("the interrupted run's results say complete")
            if doc["verdict"] == "PASS":
                problems.append("the interrupted run's results say PASS")
        if "eval gate" not in s.out:
            problems.append("no summary")
        if s.ret == -signal.SIGTERM or (s.ret is not None and s.ret < 0):
            problems.append(f"killed by the signal (status {s.ret})")
        if s.traceback:
            problems.append("raw traceback")
    area.record(sc.name, problems)


# -- secrets ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Secret:
    var: str
    prefix: str
    core: str

    @property
    def value(self) -> str:
        return self.prefix + self.core


def make_secrets() -> list[Secret]:
    import random

    rng = random.Random(10)
    alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

    def rand(n: int, alphabet: str = alnum) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    return [
        Secret("ANTHROPIC_API_KEY", "sk-ant-api03-", rand(40)),
        Secret("DB_PASSWORD", "", "p@ss\\w0rd\"Q'zz!9" + rand(6)),
        Secret("AWS_SECRET_ACCESS_KEY", "", rand(40, alnum + "+/")),
        Secret("GITHUB_TOKEN", "ghp_", rand(36)),
        Secret("MY_SERVICE_TOKEN", "svc-", rand(24)),
        Secret("SLACK_SIGNING_SECRET", "", rand(32, "0123456789abcdef")),
        Secret("APP_CREDENTIAL", "", "<s3cr&t>" + rand(12) + "\u00fc\u20ac"),
        Secret("GEMINI_API_KEY", "AIza", rand(35)),
    ]


SECRET_AGENT = r"""
import json, os, sys
names = sys.argv[1].split(",")
case = sys.argv[2].split()[0]
values = [os.environ[n] for n in names]
kind, _, index = case.rpartition("-")
if case == "raw":
    print("I used " + " and ".join(values) + ". Done.")
elif case == "escaped":
    print(" ".join(json.dumps(v) + " " + repr(v) for v in values))
elif kind == "quote-cut":
    # The secret straddles the 160th character of the answer that a message quotes.
    print("x" * 149 + " " + values[int(index)] + " " + "x" * 100)
elif kind == "tail-cut":
    # The secret straddles the start of the last 600 characters of stderr.
    sys.stderr.write(values[int(index)] + " " + "y" * 580 + "\n")
    sys.exit(1)
elif case == "stderr-head":
    sys.stderr.write("failed with " + " ".join(values) + "\n")
    sys.exit(2)
elif case == "file":
    open("notes.txt", "w").write("\n".join(values) + "\n")
    print("wrote notes")
"""

FAILING = "  - type: output_matches\n    pattern: '^NEVER'\n"


def secret_cases(count: int) -> dict[str, str]:
    """Case id to checks: each way the agent shows the secrets."""
    cases = {"raw": FAILING, "escaped": FAILING, "stderr-head": FAILING}
    cases["file"] = (
        "  - type: file_not_matches\n    path: notes.txt\n    pattern: '[A-Za-z0-9]{8}'\n"
    )
    for n in range(count):
        cases[f"quote-cut-{n}"] = FAILING
        cases[f"tail-cut-{n}"] = FAILING
    return cases


def secrets(c: Campaign, area: Area) -> None:
    root, token = c.workdir("secrets")
    secret_list = make_secrets()
    names = ",".join(s.var for s in secret_list)
    files = {
        "agent.py": SECRET_AGENT,
        "pytest.ini": f"[pytest]\neval_agent_command = {sys.executable} {root}/agent.py "
        f"{names} {{prompt}}\n",
        "AGENTS.md": "Answer.\n",
    }
    for case_id, checks in secret_cases(len(secret_list)).items():
        files[f"evals/{case_id}.yaml"] = CASE.format(id=case_id, timeout=30, checks=checks)
    write(root, files)
    html_plugin = _has_module("pytest_html")
    args = [
        *("--eval-save", "results.json", "--junitxml", "junit.xml"),
        *("--json-report", "--json-report-file", "report.json", "--eval-html", "eval.html"),
        *("-p", "no:cacheprovider", "-rA"),
    ]
    if html_plugin:
        args += ["--html", "pytest-html.html", "--self-contained-html"]
    env = c.env(token, **{s.var: s.value for s in secret_list})
    s = c.pytest(root, token, *args, env=env, deadline=90)
    outputs = {"terminal": s.out}
    for label, name in (
        ("junit xml", "junit.xml"),
        ("json-report", "report.json"),
        ("results JSON", "results.json"),
        ("--eval-html", "eval.html"),
        ("pytest-html", "pytest-html.html"),
    ):
        path = root / name
        if path.exists():
            outputs[label] = path.read_text(encoding="utf-8", errors="replace")
        elif label != "pytest-html" or html_plugin:
            area.failures.setdefault("(outputs)", []).append(f"{label} not written")
    for secret in secret_list:
        found = {label: how for label, text in outputs.items() if (how := leaked(secret, text))}
        whole = sorted(label for label, how in found.items() if how.startswith("whole"))
        part = sorted(label for label, how in found.items() if not how.startswith("whole"))
        problems = []
        if whole:
            forms = sorted({found[label].split(", ")[1] for label in whole})
            problems.append(f"leaked whole ({', '.join(forms)}) in {', '.join(whole)}")
        if part:
            longest = max(found[label].split(" of ")[0] for label in part)
            problems.append(
                f"leaked in part ({longest} of {len(secret.core)} characters) in {', '.join(part)}"
            )
        area.record(secret.var, problems)
    if s.hung:
        area.failures.setdefault("(session)", []).append("hang")


def _has_module(name: str) -> bool:
    proc = subprocess.run(
        [sys.executable, "-c", f"import {name}"], capture_output=True, check=False, env=ENV
    )
    return proc.returncode == 0


def _forms(text: str) -> dict[str, str]:
    return {
        "raw": text,
        "json-escaped": json.dumps(text)[1:-1],
        "json-ascii": json.dumps(text, ensure_ascii=True)[1:-1],
        "repr": repr(text)[1:-1],
        "html-escaped": html.escape(text),
        "html+json": html.escape(json.dumps(text)[1:-1]),
        "xml-attr": html.escape(text, quote=True).replace("&#x27;", "&apos;"),
    }


def leaked(secret: Secret, text: str, window: int = 10) -> str:
    """How ``secret`` appears in ``text``: whole, or the longest piece of its random part
    (at least ``window`` characters) in any form; ``""`` when it does not."""
    for form, value in _forms(secret.value).items():
        if value in text:
            return f"whole, {form}"
    core = secret.core
    for size in range(len(core) - 1, window - 1, -1):
        for start in range(len(core) - size + 1):
            for form, value in _forms(core[start : start + size]).items():
                if value in text:
                    return f"{size} of {len(core)} characters, {form}"
    return ""


# -- path escapes -------------------------------------------------------------------------


@dataclass(frozen=True)
class Escape:
    """A case that could read ``outside/`` (whose files hold a marker): how the path gets
    there (``cwd``, a fixture's symlink, the agent's symlink, the graded directory's)."""

    name: str
    via: str
    target: str
    check: str
    #: The check passes only by reading outside (so a pass is a failure).
    passes_if_escaped: bool = False
    #: May hang today: a session of its own.
    alone: bool = False


READ_CHECKS = {
    "file_matches": ("  - type: file_matches\n    path: {p}\n    pattern: OUTSIDE\n", True),
    "file_not_matches": (
        "  - type: file_not_matches\n    path: {p}\n    pattern: OUTSIDE\n",
        False,
    ),
    "file_contains": ("  - type: file_contains\n    file: {p}\n    pattern: OUTSIDE\n", True),
    "file_exists": ("  - type: file_exists\n    path: {p}\n", True),
    "file_absent": ("  - type: file_absent\n    path: {p}\n", False),
    "file_unchanged": ("  - type: file_unchanged\n    path: {p}\n", False),
}
DIR_CHECKS = {
    "directory_exists": ("  - type: directory_exists\n    path: {p}\n", True),
    "** file_exists": ("  - type: file_exists\n    path: '{p}/**/secret.txt'\n", True),
    "** file_matches": (
        "  - type: file_matches\n    path: '{p}/**/secret.txt'\n    pattern: OUTSIDE\n",
        True,
    ),
    "** file_absent": ("  - type: file_absent\n    path: '{p}/**/secret.txt'\n", False),
    "file_matches through it": (
        "  - type: file_matches\n    path: '{p}/sub/secret.txt'\n    pattern: OUTSIDE\n",
        True,
    ),
}
OUTSIDE_READ = "  - type: file_matches\n    path: secret.txt\n    pattern: OUTSIDE\n"


def escapes() -> list[Escape]:
    out = []
    for via in ("agent symlink", "fixture symlink", "graded symlink"):
        for name, (check, passes) in READ_CHECKS.items():
            out.append(Escape(f"{via} to a file, {name}", via, "file", check, passes))
        for name, (check, passes) in DIR_CHECKS.items():
            out.append(Escape(f"{via} to a directory, {name}", via, "dir", check, passes))
    out.append(
        Escape(
            "graded output.txt symlink",
            "graded symlink",
            "output",
            "  - type: output_matches\n    pattern: OUTSIDE\n",
            True,
        )
    )
    for name, cwd in (
        ("cwd absolute, outside", "{outside}"),
        ("cwd ../outside", "../outside/{case}"),
        ("cwd fixtures/../../outside", "fixtures/../../outside/{case}"),
        ("cwd a symlinked fixture directory", "fixtures/link-{case}"),
    ):
        out.append(Escape(name, "cwd", cwd, OUTSIDE_READ, True))
    for name, script, check, passes in (
        (
            "agent symlink to /, ** glob",
            "ln -s / r",
            "  - type: file_exists\n    path: '**/shadow'\n",
            True,
        ),
        (
            "agent symlink cycle, ** glob",
            "ln -s . a; ln -s . b",
            "  - type: file_absent\n    path: '**/*.orig'\n",
            False,
        ),
        (
            "agent symlink to /etc, ** glob",
            "ln -s /etc etc",
            "  - type: file_exists\n    path: '**/passwd'\n",
            True,
        ),
    ):
        out.append(Escape(name, "agent raw", script, check, passes, alone=True))
    return out


def path_escapes(c: Campaign, area: Area) -> None:
    items = escapes()
    agent = [e for e in items if e.via != "graded symlink" and not e.alone]
    graded = [e for e in items if e.via == "graded symlink"]
    tasks: list[Callable[[], None]] = [
        lambda: escape_session(c, area, agent, graded=False),
        lambda: escape_session(c, area, graded, graded=True),
        *((lambda e=e: escape_session(c, area, [e], graded=False)) for e in items if e.alone),
        lambda: lint_escape(c, area),
    ]
    c.parallel(tasks)


def escape_session(c: Campaign, area: Area, items: list[Escape], *, graded: bool) -> None:
    """One session holding ``items``, each case its own id, links and marker."""
    root, token = c.workdir("escapes-graded" if graded else f"escapes-{items[0].name}")
    outside = root / "outside"
    files: dict[str, str] = {"AGENTS.md": "Answer ok.\n"}
    script = ["case=$1"]
    links: list[tuple[Path, Path]] = []
    markers = {}
    for n, e in enumerate(items):
        case = f"esc-{n:02d}"
        markers[case] = f"OUTSIDE-{n:02d}-{uuid.uuid4().hex[:12]}"
        where = outside / case
        files[f"outside/{case}/secret.txt"] = markers[case] + "\n"
        files[f"outside/{case}/sub/secret.txt"] = markers[case] + "\n"
        link = f"link-{case}.txt" if e.target == "file" else f"linkdir-{case}"
        target = where / "secret.txt" if e.target == "file" else where
        head = ""
        if e.via == "agent symlink":
            script.append(f'[ "$case" = {case} ] && ln -s {target} {link}')
        elif e.via == "agent raw":
            script.append(f'[ "$case" = {case} ] && {{ {e.target}; }}')
        elif e.via == "fixture symlink":
            head = f"cwd: fixtures/{case}\n"
            files[f"evals/fixtures/{case}/README.md"] = "hello\n"
            links.append((root / "evals" / "fixtures" / case / link, target))
        elif e.via == "graded symlink":
            if e.target == "output":
                links.append((root / "graded" / ".evalcases" / "output.txt", where / "secret.txt"))
            else:
                links.append((root / "graded" / link, target))
        elif e.via == "cwd":
            head = "cwd: " + e.target.format(outside=where, case=case) + "\n"
            if "link-" in e.target:
                links.append((root / "evals" / "fixtures" / f"link-{case}", where))
        files[f"evals/{case}.yaml"] = (
            f"id: {case}\ndefends: AGENTS.md\nprompt: {case}\ntimeout: 10\n{head}"
            f"checks:\n{e.check.format(p=link)}"
        )
    script.append("echo ok")
    files["agent.sh"] = "\n".join(script) + "\n"
    ini = "[pytest]\n"
    if not graded:
        ini += f"eval_agent_command = sh {root}/agent.sh {{prompt}}\n"
    files["pytest.ini"] = ini
    files["graded/ok.txt"] = "ok\n"
    write(root, files)
    for link_path, target in links:
        link_path.parent.mkdir(parents=True, exist_ok=True)
        link_path.symlink_to(target)
    args = ["--eval-save", "results.json", "-p", "no:cacheprovider", "-rA"]
    if graded:
        args += ["--eval-workspace", "graded"]
    s = c.pytest(root, token, *args, deadline=DEADLINE if len(items) > 1 else 20)
    doc = s.results()
    texts = s.out + (root / "results.json").read_text(errors="replace") if doc else s.out
    for n, e in enumerate(items):
        case = f"esc-{n:02d}"
        problems = []
        if s.hung:
            problems.append("hang")
        if markers[case] in texts:
            problems.append("text from outside in the output")
        records = [
            r
            for r in (doc or {}).get("cases", [])
            if r["id"] == case or r["file"] == f"evals/{case}.yaml"
        ]
        if e.passes_if_escaped and any(r["outcome"] == "passed" for r in records):
            problems.append("the check passed by reading outside")
        if e.via == "cwd" and not any(r.get("error_kind") == "case-file" for r in records):
            problems.append("cwd outside the evals root accepted")
        if s.traceback:
            problems.append("raw traceback")
        area.record(e.name, problems)


def lint_escape(c: Campaign, area: Area) -> None:
    root, token = c.workdir("lint")
    write(
        root,
        {
            "pytest.ini": "[pytest]\n",
            "evals/far.yaml": "id: far\ndefends: ../../..\nprompt: go\nchecks:\n"
            "  - type: output_matches\n    pattern: ok\n",
        },
    )
    started = time.monotonic()
    cmd = [sys.executable, "-m", "pytest_evalcases.cli.main", "lint", "evals"]
    proc = c.start(cmd, root, c.env(token))
    s = c.finish(proc, root, started, 20, token)
    problems = []
    if s.hung:
        problems.append("no answer within 20 s")
    if s.traceback:
        problems.append("raw traceback")
    area.record("evalcases lint with defends ../../..", problems)


# -- main ---------------------------------------------------------------------------------


def kind_of(problem: str) -> str:
    """A problem without its details: what the table counts."""
    text = re.sub(r"\s*\(.*?\)", "", problem)
    text = re.sub(r"^\d+ ", "", text)
    return text.split(" in ")[0] if text.startswith("leaked") else text


def print_table(areas: Sequence[Area]) -> None:
    print()
    print("| area | tried | failed |")
    print("|---|---|---|")
    for area in areas:
        kinds: dict[str, int] = {}
        for problems in area.failures.values():
            for kind in {kind_of(p) for p in problems}:
                kinds[kind] = kinds.get(kind, 0) + 1
        detail = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
        failed = len([k for k in area.failures if not k.startswith("(")])
        print(f"| {area.name} | {area.tried} | {failed}{': ' + detail if detail else ''} |")
    print()
    for area in areas:
        if area.failures:
            print(f"{area.name}:")
            for scenario, problems in sorted(area.failures.items()):
                print(f"  - {scenario}: {'; '.join(problems)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--mutations", type=int, default=60, help="mutated case files to run (0: the whole corpus)"
    )
    parser.add_argument("--jobs", type=int, default=2, help="sessions at a time")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument(
        "--only",
        default="",
        help="only the mutations (by key), signal scenarios and agent faults this regex finds",
    )
    parser.add_argument(
        "--quick", action="store_true", help="30 mutations; agent faults under the sandbox only"
    )
    parser.add_argument(
        "--full", action="store_true", help="the whole corpus of mutations (about 800 sessions)"
    )
    parser.add_argument(
        "--areas",
        default="files,faults,signals,secrets,paths",
        help="comma-separated: files, faults, signals, secrets, paths",
    )
    args = parser.parse_args()
    wanted = set(args.areas.split(","))
    count = 30 if args.quick else 0 if args.full else args.mutations
    sandboxes = ["auto"] if args.quick else ["auto", "none"]

    tmp = Path(tempfile.mkdtemp(prefix="evalcases-campaign-"))
    campaign = Campaign(tmp, args.jobs, args.only)
    areas: list[Area] = []
    started = time.monotonic()
    try:
        steps: list[tuple[str, str, Callable[[Area], None]]] = [
            (
                "files",
                "mutated case files, each beside one valid case (cold and warm cache)",
                lambda a: case_files(campaign, a, count),
            ),
            (
                "faults",
                f"agent faults (sandbox {' and '.join(sandboxes)})",
                lambda a: agent_faults(campaign, a, sandboxes),
            ),
            ("signals", "signals", lambda a: signals(campaign, a)),
            ("secrets", "secrets in 6 output files", lambda a: secrets(campaign, a)),
            ("paths", "path escapes", lambda a: path_escapes(campaign, a)),
        ]
        for key, title, run in steps:
            if key not in wanted:
                continue
            area = Area(title)
            t0 = time.monotonic()
            run(area)
            areas.append(area)
            print(
                f"  {title}: {area.tried} tried, {len(area.failures)} failed "
                f"({time.monotonic() - t0:.0f} s)",
                flush=True,
            )
    finally:
        left = campaign.sweep(campaign.id)
        if args.keep:
            print(f"kept {tmp}")
        else:
            _make_removable(tmp)
            shutil.rmtree(tmp, ignore_errors=True)
    print_table(areas)
    print(f"\n{time.monotonic() - started:.0f} s; {left} stray processes killed at the end")


def _make_removable(tmp: Path) -> None:
    """chmod 000 directories (left by a fault) would keep rmtree out."""
    for dirpath, dirnames, _ in os.walk(tmp):
        for name in dirnames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                with contextlib.suppress(OSError):
                    os.chmod(path, 0o700)


if __name__ == "__main__":
    main()
