#!/bin/sh
# A PreToolUse / BeforeTool hook of Claude Code, Codex and Gemini CLI alike: each hands
# it the call as JSON on stdin. Exit status 2 refuses the call; stderr says why.
if grep -Eq 'git push( [^"]*)? (--force|-f)([ "]|$)'; then
    echo "no force push: open a pull request instead" >&2
    exit 2
fi
exit 0
