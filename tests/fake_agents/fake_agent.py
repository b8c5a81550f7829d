"""A stand-in for the agent CLIs in tests: prints a recorded sample, exactly as is.

The scripts ``claude``, ``codex`` and ``gemini`` beside this file run :func:`main`, so
a test puts this directory first on ``PATH`` and steers the fake with environment
variables:

``FAKE_AGENT_SAMPLE``   file whose bytes go to stdout unchanged
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
    sample = env.get("FAKE_AGENT_SAMPLE")
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
