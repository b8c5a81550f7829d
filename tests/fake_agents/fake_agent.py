"""A stand-in for the agent CLIs in tests: prints a recorded sample, exactly as is.

The scripts ``claude``, ``codex`` and ``gemini`` beside this file run :func:`main`, so
a test puts this directory first on ``PATH`` and steers the fake with environment
variables:

``FAKE_AGENT_SAMPLE``   file whose bytes go to stdout unchanged
``FAKE_AGENT_SAMPLE_CLAUDE``, ``FAKE_AGENT_SAMPLE_CODEX``, ``FAKE_AGENT_SAMPLE_GEMINI``
                        that program's own sample, before ``FAKE_AGENT_SAMPLE`` (so
                        that the three fakes answer differently in one session)
``FAKE_AGENT_MODEL_SAMPLES`` a directory of samples named after models: when the
                        command line names a model (``--model M`` or ``-m M``) and the
                        directory has a file ``M``, that file is the sample, before
                        both of the above
``FAKE_AGENT_STDERR``   text for stderr
``FAKE_AGENT_EXIT``     exit status (default 0)
``FAKE_AGENT_SLEEP``    seconds to sleep before printing (timeouts)
``FAKE_AGENT_HANG``     seconds to sleep after printing, before exiting (a CLI that
                        said something, then waits: timeouts)
``FAKE_AGENT_GRANDCHILD`` file to write the pid of a ``sleep 300`` child into, which
                        the fake leaves running (process-group cleanup)
``FAKE_AGENT_RECORD``   file to append argv, stdin and working directory to, one JSON
                        line per call

``--version`` alone prints a fake version, as the plugin records it in its pins.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping


def main() -> None:
    env = os.environ
    program = os.path.basename(sys.argv[0])
    record = env.get("FAKE_AGENT_RECORD")
    if record:
        with open(record, "a", encoding="utf-8") as f:
            json.dump(
                {
                    "program": program,
                    "argv": sys.argv[1:],
                    "stdin": sys.stdin.read(),
                    "cwd": os.getcwd(),
                    "env": {k: v for k, v in env.items() if k.startswith("EVALCASES_")},
                },
                f,
            )
            f.write("\n")
    if sys.argv[1:] == ["--version"]:
        print(f"{program} 0.0.0 (fake)")
        return
    pidfile = env.get("FAKE_AGENT_GRANDCHILD")
    if pidfile:
        child = subprocess.Popen(["sleep", "300"])
        with open(pidfile, "w", encoding="utf-8") as f:
            f.write(str(child.pid))
    if env.get("FAKE_AGENT_SLEEP"):
        time.sleep(float(env["FAKE_AGENT_SLEEP"]))
    sample = _sample(program, sys.argv[1:], env)
    if sample:
        with open(sample, "rb") as f:
            sys.stdout.buffer.write(f.read())
        sys.stdout.flush()
    if env.get("FAKE_AGENT_STDERR"):
        sys.stderr.write(env["FAKE_AGENT_STDERR"])
        sys.stderr.flush()
    if env.get("FAKE_AGENT_HANG"):
        time.sleep(float(env["FAKE_AGENT_HANG"]))
    sys.exit(int(env.get("FAKE_AGENT_EXIT", "0")))


def _sample(program: str, argv: list[str], env: Mapping[str, str]) -> str | None:
    """The sample to print: the model's, else the program's, else the common one."""
    by_model = env.get("FAKE_AGENT_MODEL_SAMPLES")
    model = _model(argv)
    if by_model and model and os.path.isfile(os.path.join(by_model, model)):
        return os.path.join(by_model, model)
    return env.get(f"FAKE_AGENT_SAMPLE_{program.upper()}") or env.get("FAKE_AGENT_SAMPLE")


def _model(argv: list[str]) -> str | None:
    """The value of the last ``--model M`` or ``-m M`` (``--model=M``) on the command line."""
    found = None
    for i, arg in enumerate(argv):
        if arg in ("--model", "-m") and i + 1 < len(argv):
            found = argv[i + 1]
        elif arg.startswith("--model="):
            found = arg.partition("=")[2]
    return found
