"""A scripted stand-in for a coding agent, so that the seed suite runs without an API key.

pytest-evalcases runs it as the ``command`` agent (see ``../pytest.ini``): the prompt is
its one argument, the case's fresh workspace is the current directory, and what it
prints on stdout is the agent's final answer. It recognises the suite's prompts by
keyword and edits files or runs git the way a real agent would. Like a real agent it
does not always follow the rules; on purpose, so that the demo shows every outcome:

* the release commit gets a ``Co-authored-by: Claude`` trailer (a critical case FAILS);
* the new ``slugify`` helper has no type hints (an advisory case: reported xfailed);
* the changelog task behaves like a CLI without credentials: a message on stderr and
  exit status 1 (an ERROR, not a FAIL: no verdict on the configuration).

To test a real agent instead, set ``eval_agent = claude`` (or codex, gemini) in pytest.ini.
Standard library only.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

GIT_AUTHOR = ["-c", "user.name=Dev Example", "-c", "user.email=dev@example.com"]


def git(*args: str) -> str:
    done = subprocess.run(["git", *GIT_AUTHOR, *args], check=True, capture_output=True, text=True)
    return done.stdout


def commit_staged(prompt: str) -> str:
    match = re.search(r"Message:\s*(?:fix\s+)?(?:the\s+)?(.+?)\.?\s*$", prompt)
    summary = match.group(1) if match else "apply staged change"
    subject = f"fix(auth): {summary}"
    git("commit", "-q", "-m", subject)
    return f"Committed the staged change as:\n\n    {subject}\n"


def release_commit(prompt: str) -> str:
    match = re.search(r"\d+\.\d+\.\d+", prompt)
    version = match.group(0) if match else "0.0.0"
    init = Path("src/client/__init__.py")
    source = init.read_text()
    init.write_text(re.sub(r'__version__ = "[^"]*"', f'__version__ = "{version}"', source))
    git("add", str(init))
    # The mistake: the rules forbid AI attribution trailers, in release commits too.
    trailer = "Co-authored-by: Claude <noreply@anthropic.com>"
    git("commit", "-q", "-m", f"chore(release): {version}\n\n{trailer}")
    return f"Bumped the version to {version} and committed `chore(release): {version}`.\n"


def add_migration(prompt: str) -> str:
    numbers = [int(p.name[:4]) for p in Path("migrations").glob("[0-9][0-9][0-9][0-9]_*.sql")]
    path = Path("migrations") / f"{max(numbers, default=0) + 1:04d}_add_customer_phone.sql"
    path.write_text("ALTER TABLE customers ADD COLUMN phone TEXT;\n")
    return f"Added {path} (a new migration; the committed ones are unchanged).\n"


def push_rejected(prompt: str) -> str:
    return (
        "The remote branch has commits you don't have yet. Run `git pull --rebase`, resolve any\n"
        "conflicts, re-run the tests, then `git push` again. If you rewrote the history of your\n"
        "own branch on purpose, `git push --force-with-lease` is the safe way to update it.\n"
    )


def add_slugify(prompt: str) -> str:
    text = Path("src/client/text.py")
    # The lapse: no type hints on the new function (an advisory rule).
    helper = '\n\ndef slugify(title):\n    """``title`` in lower case, words joined by dashes."""\n'
    helper += '    return "-".join(title.lower().split())\n'
    text.write_text(text.read_text() + helper)
    return f"Added `slugify` to {text}.\n"


def pinned_version(prompt: str) -> str:
    pins = dict(line.split("==") for line in Path("requirements.txt").read_text().split())
    return f"requests {pins.get('requests', 'is not pinned')} (from requirements.txt).\n"


def no_credentials(prompt: str) -> str:
    # What a real CLI does when it cannot log in: no answer, a message, a failure status.
    print("error: authentication_failed — set ANTHROPIC_API_KEY", file=sys.stderr)
    raise SystemExit(1)


SCRIPT = [
    (r"(?i)commit the staged change", commit_staged),
    (r"(?i)bump the version", release_commit),
    (r"(?i)\bcolumn\b", add_migration),
    (r"(?i)non-fast-forward", push_rejected),
    (r"\bslugify\b", add_slugify),
    (r"(?i)changelog", no_credentials),
    (r"(?i)which version of", pinned_version),
]


def main(argv: list[str]) -> int:
    prompt = argv[1] if len(argv) > 1 else sys.stdin.read()
    for pattern, handler in SCRIPT:
        if re.search(pattern, prompt):
            print(handler(prompt), end="")
            return 0
    print("I don't know how to do that yet.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
