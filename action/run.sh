#!/usr/bin/env bash
# The steps of the GitHub Action in action.yml, one phase per step (docs/ci.md, "The
# action"):
#
#   run.sh install   pytest-evalcases, the agent's CLI (pinned) and bubblewrap
#   run.sh test      pytest with the inputs' arguments; its exit status goes to the step's
#                    outputs, never to the step's own status, so the later steps run
#   run.sh comment   the pull request's comment: written, then created or updated
#   run.sh finish    exits with pytest's status
#
# action.yml hands every input over in the environment (INPUT_*): no input is ever part
# of the text the shell parses, and pytest-args is split into words like a shell would
# (quotes), but never expanded ($(...), globs, variables). `gh` reads its token from
# GH_TOKEN (the token input).
set -euo pipefail

#: The first line of the comment, by which a later run finds it to update it.
MARKER='<!-- pytest-evalcases -->'

#: The agent CLIs' npm packages and the versions the plugin is tested with (.ci/run).
pinned() {
  case "$1" in
    claude) echo "@anthropic-ai/claude-code 2.1.197" ;;
    codex) echo "@openai/codex 0.171.0" ;;
    gemini) echo "@google/gemini-cli 0.61.0" ;;
    *) return 1 ;;
  esac
}

action_root() {
  if [ -n "${GITHUB_ACTION_PATH:-}" ]; then
    echo "$GITHUB_ACTION_PATH"
  else
    cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd
  fi
}

error() {
  echo "::error title=pytest-evalcases action::$*"
  exit 1
}

warning() { echo "::warning title=pytest-evalcases action::$*"; }
notice() { echo "::notice title=pytest-evalcases action::$*"; }

output() { echo "$1=$2" >>"${GITHUB_OUTPUT:-/dev/null}"; }

# Sets AGENT from the agent input: claude, codex, gemini or none.
read_agent() {
  AGENT="${INPUT_AGENT:-none}"
  case "$AGENT" in
    "") AGENT=none ;;
    none | claude | codex | gemini) ;;
    *) error "agent: '$AGENT' is not one of claude, codex, gemini, none" ;;
  esac
}

install() {
  local source="${INPUT_SOURCE:-pypi}" package version
  read_agent
  case "$source" in
    pypi) pip install pytest-evalcases ;;
    action) pip install "$(action_root)" ;;
    -*) error "source: '$source' is not a pip requirement" ;;
    *) pip install "$source" ;;
  esac

  [ "$AGENT" = none ] && return 0
  read -r package version <<<"$(pinned "$AGENT")"
  case "${INPUT_AGENT_VERSION:-pinned}" in
    "" | pinned) ;;
    *) version="$INPUT_AGENT_VERSION" ;;
  esac
  [[ "$version" =~ ^[A-Za-z0-9][A-Za-z0-9.+~^-]*$ ]] \
    || error "agent-version: '$version' is not an npm version or tag"
  npm install -g --no-audit --no-fund "$package@$version"

  # Each run in its own sandbox (docs/sandbox.md); without bubblewrap the runs still
  # happen, and the `eval gate` section says they were not contained.
  if [ "${INPUT_SANDBOX:-true}" = true ] && ! command -v bwrap >/dev/null 2>&1; then
    local sudo=()
    [ "$(id -u)" = 0 ] || sudo=(sudo)
    if ! command -v apt-get >/dev/null 2>&1 \
      || ! "${sudo[@]}" apt-get install -y -qq bubblewrap >/dev/null; then
      warning "could not install bubblewrap: the agent's runs will not be sandboxed"
    fi
  fi
}

# Splits $1 into words as a POSIX shell does (quotes, backslashes) without expanding any
# of them; one word per NUL-terminated record.
split_words() {
  python -c '
import shlex, sys
try:
    words = shlex.split(sys.argv[1])
except ValueError as e:
    sys.exit(f"pytest-args: {e}")
sys.stdout.write("".join(w + "\0" for w in words))
' "$1"
}

run_tests() {
  local results_dir="${INPUT_RESULTS_DIR:-evals/results}" args=() status
  local results="$results_dir/evalcases.json"
  local words
  words="$(mktemp)"
  split_words "${INPUT_PYTEST_ARGS-evals/}" >"$words" \
    || error "pytest-args: cannot be split into words (an unclosed quote?): ${INPUT_PYTEST_ARGS-}"
  mapfile -d '' args <"$words"
  rm -f "$words"

  # The agent input runs the cases with that agent unless pytest-args names one (or the
  # variants that need several).
  read_agent
  if [ "$AGENT" != none ]; then
    local word named=false
    for word in "${args[@]}"; do
      case "$word" in --eval-agent | --eval-agent=*) named=true ;; esac
    done
    [ "$named" = true ] || args+=(--eval-agent "$AGENT")
  fi
  if [ -n "${INPUT_BASELINE:-}" ]; then
    if [ -f "$INPUT_BASELINE" ]; then
      args+=(--eval-baseline "$INPUT_BASELINE")
    else
      warning "baseline: no file $INPUT_BASELINE (a first run?): the run is not compared with a baseline"
    fi
  fi
  mkdir -p "$results_dir"
  args+=(--eval-save "$results")

  echo "pytest ${args[*]}"
  status=0
  pytest "${args[@]}" || status=$?
  output status "$status"
  output results-file "$results"
  [ -f "$results" ] || notice "pytest exited with status $status and wrote no results file"
}

# From the event that started the workflow: the pull request's number and whether it
# comes from another repository (a fork), as "NUMBER FORK"; nothing when not a pull request.
pull_request() {
  [ -f "${GITHUB_EVENT_PATH:-}" ] || return 0
  python -c '
import json, sys
with open(sys.argv[1], encoding="utf-8") as f:
    pr = json.load(f).get("pull_request") or {}
if pr.get("number"):
    head = (pr.get("head") or {}).get("repo") or {}
    base = (pr.get("base") or {}).get("repo") or {}
    fork = head.get("full_name") != base.get("full_name")
    print(pr["number"], "true" if fork else "false")
' "$GITHUB_EVENT_PATH"
}

# The id of the first comment (`gh api --paginate`: one JSON array per page, on standard
# input) whose body starts with the marker; nothing when there is none.
marked_comment() {
  python -c '
import json, sys
text, decoder, at = sys.stdin.read(), json.JSONDecoder(), 0
while at < len(text.rstrip()):
    while text[at].isspace():
        at += 1
    page, at = decoder.raw_decode(text, at)
    for comment in page:
        if (comment.get("body") or "").startswith(sys.argv[1]):
            print(comment["id"])
            raise SystemExit(0)
' "$MARKER"
}

comment() {
  local results="${EVALCASES_RESULTS:-}" body first pr number fork found
  if [ -z "$results" ] || [ ! -f "$results" ]; then
    notice "no results file: no pull request comment"
    return 0
  fi
  body="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/evalcases-comment.md"
  local report=(evalcases report --format github-comment "$results")
  if [ -n "${INPUT_BASELINE:-}" ] && [ -f "$INPUT_BASELINE" ]; then
    report+=(--baseline "$INPUT_BASELINE")
  fi
  if ! "${report[@]}" >"$body"; then
    warning "\`${report[*]}\` failed: no pull request comment"
    return 0
  fi
  output comment-file "$body"
  IFS= read -r first <"$body" || true
  if [ "$first" != "$MARKER" ]; then
    warning "the comment does not start with $MARKER: not posted"
    return 0
  fi
  [ "${INPUT_COMMENT:-true}" = true ] || return 0

  pr="$(pull_request)"
  if [ -z "$pr" ]; then
    notice "not a pull request (${GITHUB_EVENT_NAME:-no event}): no comment; the job summary has the results"
    return 0
  fi
  read -r number fork <<<"$pr"
  if [ "$fork" = true ] && [ "${GITHUB_EVENT_NAME:-}" = pull_request ]; then
    notice "pull request #$number comes from a fork, whose token cannot comment: the job summary has the results"
    return 0
  fi

  local comments="repos/$GITHUB_REPOSITORY/issues/$number/comments"
  if ! found="$(gh api --paginate "$comments?per_page=100" | marked_comment)"; then
    warning "could not read the comments of pull request #$number: no comment"
    return 0
  fi
  if [ -n "$found" ]; then
    gh api --method PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$found" -F "body=@$body" \
      >/dev/null || warning "could not update comment $found of pull request #$number"
  else
    gh api --method POST "$comments" -F "body=@$body" >/dev/null \
      || warning "could not comment on pull request #$number (does the workflow grant pull-requests: write?)"
  fi
}

finish() {
  local status="${EVALCASES_STATUS:-}"
  [[ "$status" =~ ^[0-9]+$ ]] || error "pytest did not run"
  exit "$status"
}

case "${1:-}" in
  install) install ;;
  test) run_tests ;;
  comment) comment ;;
  finish) finish ;;
  *)
    echo "usage: $0 install|test|comment|finish" >&2
    exit 2
    ;;
esac
