"""containment.py: the repository's working tree before and after a run, and the paths a
sandboxed run was refused."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from pytest_evalcases import git, process, sandbox
from pytest_evalcases.containment import TreeState, changed_files, refused_paths, tree_state
from tests.helpers.git import git as run_git
from tests.helpers.git import make_repo
from tests.helpers.sandbox import clear_immutable, requires_bwrap


def repo(tmp_path: Path, files: dict[str, str] | None = None) -> Path:
    """A repository with ``files`` committed (a README by default)."""
    return make_repo(tmp_path / "repo", files or {"README": "hello\n"})


def state(path: Path) -> TreeState:
    found = tree_state(path)
    assert found is not None
    return found


# --- tree_state -----------------------------------------------------------------------


def test_a_clean_tree_has_no_entries_and_its_top_level_as_root(tmp_path: Path) -> None:
    root = repo(tmp_path, {"src/a.py": "a\n"})

    found = state(root / "src")

    assert found.root == root.resolve()
    assert found.entries == {}


def test_entries_are_the_listed_paths_with_digests_and_markers(tmp_path: Path) -> None:
    root = repo(tmp_path, {"edited": "one\n", "gone": "x\n", "old name": "r\n"})
    (root / "edited").write_text("two\n", "utf-8")
    (root / "gone").unlink()
    assert git.run(root, ["mv", "old name", "new name"]).returncode == 0
    (root / "new dir" / "deep").mkdir(parents=True)
    (root / "new dir" / "deep" / "file").write_bytes(b"")
    (root / "link").symlink_to("edited")

    found = state(root)

    assert found.entries == {
        "edited": "27dd8ed44a83ff94d557f9fd0412ed5a8cbca69ea04922d88c01184a07300a5a",
        "gone": "deleted",
        "new name": "8e54b0ca18020275e4aef1ca0eb5e197e066c065c1864817652a8a39c55402cd",
        "old name": "deleted",
        "new dir/deep/file": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "link": "symlink:edited",
    }


def test_names_with_spaces_newlines_and_non_ascii_are_read_exactly(tmp_path: Path) -> None:
    root = repo(tmp_path)
    names = ["a b", "new\nline", "é ü", 'quo"te', "tab\there"]
    for name in names:
        (root / name).write_text(name, "utf-8")
    assert git.run(root, ["add", "é ü"]).returncode == 0
    assert git.run(root, ["mv", "é ü", "ö moved"]).returncode == 0

    found = state(root)

    assert sorted(found.entries) == sorted(["a b", "new\nline", "ö moved", 'quo"te', "tab\there"])
    assert all(len(digest) == 64 for digest in found.entries.values())


def test_a_nested_repository_is_a_dir_and_a_fifo_does_not_block(tmp_path: Path) -> None:
    root = repo(tmp_path, {"pipe": "a file until the run\n"})
    nested = root / "nested"
    nested.mkdir()
    assert git.run(nested, ["init", "-q"]).returncode == 0
    (nested / "f").write_text("x", "utf-8")
    # git lists an untracked FIFO nowhere, a tracked file replaced by one as changed.
    (root / "pipe").unlink()
    os.mkfifo(root / "pipe")
    os.mkfifo(root / "untracked-pipe")

    assert state(root).entries == {"nested": "dir", "pipe": "other"}


def test_outside_a_work_tree_it_is_none(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    bare = tmp_path / "bare.git"
    assert git.run(tmp_path, ["init", "-q", "--bare", str(bare)]).returncode == 0

    assert tree_state(plain) is None
    assert tree_state(bare) is None
    assert tree_state(tmp_path / "missing") is None


def test_without_git_it_is_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = repo(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))

    assert tree_state(root) is None


# --- changed_files --------------------------------------------------------------------


def test_an_untouched_tree_has_no_changes(tmp_path: Path) -> None:
    root = repo(tmp_path, {"dirty": "a\n"})
    (root / "dirty").write_text("b\n", "utf-8")
    (root / "untracked").write_text("u\n", "utf-8")

    assert changed_files(state(root), state(root)) == []


def test_what_a_run_changed_is_named_and_what_it_left_alone_is_not(tmp_path: Path) -> None:
    root = repo(
        tmp_path,
        {
            "clean.py": "a\n",
            "dirty.py": "a\n",
            "dirty_left.py": "a\n",
            "doomed.py": "a\n",
            "reverted.py": "a\n",
            ".gitignore": "build/\n*.log\n",
        },
    )
    for name in ("dirty.py", "dirty_left.py", "reverted.py"):
        (root / name).write_text("before the run\n", "utf-8")
    before = state(root)

    (root / "clean.py").write_text("edited by the run\n", "utf-8")
    (root / "dirty.py").write_text("edited again\n", "utf-8")
    (root / "doomed.py").unlink()
    (root / "reverted.py").write_text("a\n", "utf-8")
    (root / "new" / "deep").mkdir(parents=True)
    (root / "new" / "deep" / "made.txt").write_text("x", "utf-8")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_text("ignored by git", "utf-8")
    (root / "run.log").write_text("ignored by git", "utf-8")

    assert changed_files(before, state(root)) == [
        "clean.py",
        "dirty.py",
        "doomed.py",
        "new/deep/made.txt",
        "reverted.py",
    ]


def after(before: TreeState) -> TreeState:
    found = tree_state(before.root, since=before)
    assert found is not None
    return found


def branch(root: Path) -> str:
    return run_git(root, "symbolic-ref", "HEAD").strip()


def test_a_commit_by_the_run_is_seen(tmp_path: Path) -> None:
    root = repo(tmp_path, {"a.py": "a\n"})
    (root / "a.py").write_text("dirty\n", "utf-8")
    before = state(root)

    run_git(root, "commit", "-q", "-am", "by the agent")

    assert changed_files(before, after(before)) == ["a.py", ".git/index", f".git/{branch(root)}"]


def test_a_clean_file_edited_and_committed_is_named(tmp_path: Path) -> None:
    # git status lists nothing before and after: the commit moved HEAD.
    root = repo(tmp_path, {"AGENTS.md": "rules\n", "b.py": "b\n"})
    before = state(root)
    (root / "AGENTS.md").write_text("no rules\n", "utf-8")
    run_git(root, "commit", "-q", "-am", "by the agent")

    assert changed_files(before, after(before)) == [
        "AGENTS.md",
        ".git/index",
        f".git/{branch(root)}",
    ]


def test_an_edit_hidden_from_git_status_by_the_index_is_seen(tmp_path: Path) -> None:
    root = repo(tmp_path, {"AGENTS.md": "rules\n"})
    before = state(root)
    run_git(root, "update-index", "--assume-unchanged", "AGENTS.md")
    (root / "AGENTS.md").write_text("no rules\n", "utf-8")

    assert changed_files(before, after(before)) == [".git/index"]


def test_refs_tags_and_a_detached_head_are_seen(tmp_path: Path) -> None:
    root = repo(tmp_path, {"a.py": "a\n"})
    before = state(root)
    run_git(root, "tag", "v1")
    run_git(root, "branch", "other")

    assert changed_files(before, after(before)) == [".git/refs/heads/other", ".git/refs/tags/v1"]
    run_git(root, "checkout", "-q", "--detach")
    assert changed_files(before, after(before)) == [
        ".git/HEAD",
        ".git/refs/heads/other",
        ".git/refs/tags/v1",
    ]


def test_what_git_moves_on_its_own_is_not_taken_for_the_run(tmp_path: Path) -> None:
    root = repo(tmp_path, {"a.py": "a\n"})
    head = run_git(root, "rev-parse", "HEAD").strip()
    run_git(root, "update-ref", "refs/remotes/origin/main", head)
    run_git(root, "pack-refs", "--all")
    before = state(root)
    # An editor's automatic fetch, git's upkeep, and a refresh of the index's timestamps.
    run_git(root, "update-ref", "refs/remotes/origin/main", "HEAD^{tree}")
    run_git(root, "update-ref", "refs/remotes/origin/other", head)
    run_git(root, "commit-graph", "write", "--reachable")
    (root / "a.py").touch()
    run_git(root, "update-index", "--refresh")

    assert changed_files(before, after(before)) == []


@pytest.mark.parametrize(
    ("where", "content"),
    [
        ("info/exclude", "hidden.md\n"),
        ("hooks/pre-commit", "#!/bin/sh\ntouch /tmp/owned\n"),
        ("info/attributes", "* filter=x\n"),
    ],
    ids=["exclude", "hook", "attributes"],
)
def test_what_steers_git_is_seen_and_what_it_hides_does_not_matter(
    tmp_path: Path, where: str, content: str
) -> None:
    root = repo(tmp_path)
    before = state(root)
    (root / ".git" / where).parent.mkdir(exist_ok=True)
    (root / ".git" / where).write_text(content, "utf-8")
    (root / "hidden.md").write_text("x", "utf-8")

    changed = changed_files(before, after(before))

    # git was not asked about the working tree: the names are those of the git
    # directory, and what its configuration hides is not listed.
    assert changed == [f".git/{where}"]


#: A configuration that makes git run a program: a file-system monitor (every status,
#: diff and ls-files) and a clean filter (for each file whose timestamps changed).
HOSTILE_CONFIG = """
[core]
\tfsmonitor = "touch {marker}-fsmonitor; false"
[filter "x"]
\tclean = "touch {marker}-filter; cat"
\tprocess = "touch {marker}-process"
"""


def test_git_never_runs_a_program_the_configuration_names(tmp_path: Path) -> None:
    root = repo(tmp_path, {".gitattributes": "* filter=x\n", "a.py": "a\n"})
    before = state(root)
    marker = tmp_path / "ran"
    with (root / ".git" / "config").open("a") as config:
        config.write(HOSTILE_CONFIG.format(marker=marker))
    (root / "a.py").write_text("b\n", "utf-8")

    changed = changed_files(before, after(before))
    # The next run's state, taken with that configuration, and the commands of the
    # other features.
    following = state(root)
    assert git.run(root, ["diff", "--name-only", "HEAD"]).returncode == 0
    assert git.run(root, ["ls-files", "--others", "--exclude-standard"]).returncode == 0

    assert changed == [".git/config"]
    assert following.entries.keys() == {"a.py"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["repo"]


@pytest.mark.parametrize("how", ["broken-config", "deleted-git-dir"])
def test_a_repository_git_cannot_read_after_the_run_is_a_change(tmp_path: Path, how: str) -> None:
    root = repo(tmp_path, {"a.py": "a\n"})
    before = state(root)
    if how == "broken-config":
        (root / ".git" / "config").write_text("[core\n", "utf-8")
    else:
        shutil.rmtree(root / ".git")

    changed = changed_files(before, after(before))

    # Not None: which would leave the run unchecked.
    assert len(changed) == 1
    assert changed[0].startswith("git cannot read it: fatal: ")


def test_the_users_configuration_is_watched_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    before = state(root)
    (home / ".gitconfig").write_text("[core]\n\tfsmonitor = true\n", "utf-8")

    assert changed_files(before, after(before)) == [str(home / ".gitconfig")]


def test_paths_at_or_under_an_ignored_path_are_left_out(tmp_path: Path) -> None:
    root = repo(tmp_path)
    before = state(root)
    for rel in ("workspace/a", "workspace/sub/b", "workspaces/c", ".pytest_cache/x", "results"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x", "utf-8")
    # The session's directory named through a symlink still matches the real path.
    (tmp_path / "alias").symlink_to(root)

    changed = changed_files(
        before,
        state(root),
        ignore=[root / "workspace", tmp_path / "alias" / ".pytest_cache", root / "results"],
    )

    assert changed == ["workspaces/c"]


def test_ignoring_the_root_or_outside_it() -> None:
    root = Path("/repo")
    before = TreeState(root, {"a": "1"})
    after = TreeState(root, {"a": "2", "b": "3"})

    assert changed_files(before, after, ignore=[Path("/repo")]) == []
    assert changed_files(before, after, ignore=[Path("/elsewhere"), Path("/repo/a/b")]) == [
        "a",
        "b",
    ]


# --- refused_paths --------------------------------------------------------------------

#: Produced on Debian 12 under ``bwrap --ro-bind / / --tmpfs /tmp --dev /dev --proc /proc``
#: (dash, bash 5.2, coreutils 9.1, CPython 3.11, Node.js 20, git 2.39, npm 10, Rust),
#: except where the id says "shape".
MESSAGES = [
    pytest.param(
        "sh: 1: cannot create /root/owned: Read-only file system", ["/root/owned"], id="dash"
    ),
    pytest.param(
        "sh: 1: cannot create /root/my file: Read-only file system",
        ["/root/my file"],
        id="dash-space",
    ),
    pytest.param(
        "sh: 1: cannot create /root/é: Read-only file system", ["/root/é"], id="dash-utf8"
    ),
    pytest.param("bash: /root/x: Read-only file system", ["/root/x"], id="bash"),
    pytest.param(
        "bash: line 1: /root/owned: Read-only file system", ["/root/owned"], id="bash-line-shape"
    ),
    pytest.param(
        "environment: line 1: /root/my file: Read-only file system",
        ["/root/my file"],
        id="bash-function",
    ),
    pytest.param("bash: /root/it's: Read-only file system", ["/root/it's"], id="bash-quote"),
    pytest.param("touch: cannot touch '/root/x': Read-only file system", ["/root/x"], id="touch"),
    pytest.param(
        "touch: cannot touch '/root/my file': Read-only file system",
        ["/root/my file"],
        id="touch-space",
    ),
    pytest.param(
        'touch: cannot touch "/root/it\'s": Read-only file system', ["/root/it's"], id="touch-quote"
    ),
    pytest.param(
        "touch: cannot touch '/root/a\"b': Read-only file system", ['/root/a"b'], id="touch-dquote"
    ),
    pytest.param(
        "touch: cannot touch '/root/x:y': Read-only file system", ["/root/x:y"], id="touch-colon"
    ),
    pytest.param(
        "touch: cannot touch '/root/a'$'\\n''b': Read-only file system",
        ["/root/a\nb"],
        id="touch-newline",
    ),
    pytest.param(
        "touch: cannot touch '/root/'$'\\303\\251': Read-only file system",
        ["/root/é"],
        id="touch-c-locale-utf8",
    ),
    pytest.param(
        "mkdir: cannot create directory ‘/root/d’: Read-only file system",
        ["/root/d"],
        id="mkdir-utf8-locale",
    ),
    pytest.param(
        "mkdir: cannot create directory '/root/d': Read-only file system", ["/root/d"], id="mkdir"
    ),
    pytest.param(
        "mkdir: cannot create directory `/root/d': Read-only file system",
        ["/root/d"],
        id="mkdir-old-coreutils-shape",
    ),
    pytest.param("rm: cannot remove '/etc/hosts': Read-only file system", ["/etc/hosts"], id="rm"),
    pytest.param(
        "rmdir: failed to remove '/etc/apt': Read-only file system", ["/etc/apt"], id="rmdir"
    ),
    pytest.param(
        "cp: cannot create regular file '/usr/x': Read-only file system", ["/usr/x"], id="cp"
    ),
    pytest.param(
        "cp: cannot create directory '/root/apt': Read-only file system", ["/root/apt"], id="cp-r"
    ),
    pytest.param(
        "mv: cannot move '/etc/hosts' to '/etc/hosts2': Read-only file system",
        ["/etc/hosts", "/etc/hosts2"],
        id="mv",
    ),
    pytest.param(
        "ln: failed to create symbolic link '/root/lnk': Read-only file system",
        ["/root/lnk"],
        id="ln-s",
    ),
    pytest.param(
        "ln: failed to create hard link '/etc/hostsl': Read-only file system",
        ["/etc/hostsl"],
        id="ln",
    ),
    pytest.param("tee: /root/x: Read-only file system", ["/root/x"], id="tee"),
    pytest.param(
        "install: cannot create regular file '/root/i': Read-only file system",
        ["/root/i"],
        id="install",
    ),
    pytest.param(
        "chmod: changing permissions of '/etc/hosts': Read-only file system",
        ["/etc/hosts"],
        id="chmod",
    ),
    pytest.param(
        "truncate: cannot open '/etc/hosts' for writing: Read-only file system",
        ["/etc/hosts"],
        id="truncate",
    ),
    pytest.param("dd: failed to open '/root/dd': Read-only file system", ["/root/dd"], id="dd"),
    pytest.param(
        "mktemp: failed to create file via template ‘/root/tmp.XXXXXXXXXX’: Read-only file system",
        ["/root/tmp.XXXXXXXXXX"],
        id="mktemp",
    ),
    pytest.param(
        "sed: couldn't open temporary file /etc/sedQ3SO8k: Read-only file system",
        ["/etc/sedQ3SO8k"],
        id="sed-i",
    ),
    pytest.param("OSError: [Errno 30] Read-only file system: '/root/x'", ["/root/x"], id="python"),
    pytest.param(
        "OSError: [Errno 30] Read-only file system: '/etc/hosts' -> '/etc/h2'",
        ["/etc/hosts", "/etc/h2"],
        id="python-rename",
    ),
    pytest.param(
        "OSError: [Errno 30] Read-only file system: 'a' -> '/root/s'",
        ["/root/s"],
        id="python-symlink",
    ),
    pytest.param(
        "OSError: [Errno 30] Read-only file system: 'nodesource.sources.disabled-by-farm'",
        [],
        id="python-rmtree-relative",
    ),
    pytest.param(
        'PermissionError: [Errno 30] Read-only file system: "/root/it\'s"',
        ["/root/it's"],
        id="python-permissionerror-shape",
    ),
    pytest.param(
        "ERROR: Could not install packages due to an OSError: [Errno 30] Read-only file "
        "system: '/usr/lib/python3/dist-packages/six.py'",
        ["/usr/lib/python3/dist-packages/six.py"],
        id="pip-shape",
    ),
    pytest.param(
        "Error: EROFS: read-only file system, open '/root/x'", ["/root/x"], id="node-open"
    ),
    pytest.param(
        "Error: EROFS: read-only file system, mkdir '/root/d'", ["/root/d"], id="node-mkdir"
    ),
    pytest.param(
        "Error: EROFS: read-only file system, unlink '/etc/hosts'",
        ["/etc/hosts"],
        id="node-unlink",
    ),
    pytest.param(
        "Error: EROFS: read-only file system, rename '/etc/hosts' -> '/etc/h2'",
        ["/etc/hosts", "/etc/h2"],
        id="node-rename",
    ),
    pytest.param(
        "Error: EROFS: read-only file system, symlink 'a' -> '/root/s'",
        ["/root/s"],
        id="node-symlink",
    ),
    pytest.param(
        "Error: EROFS: read-only file system, copyfile '/etc/hostname' -> '/root/c'",
        ["/etc/hostname", "/root/c"],
        id="node-copyfile",
    ),
    pytest.param(
        "Error: EROFS: read-only file system, open '/root/it's'", ["/root/it's"], id="node-quote"
    ),
    pytest.param(
        "npm error rofs EROFS: read-only file system, open '/root/.npmrc'",
        ["/root/.npmrc"],
        id="npm",
    ),
    pytest.param(
        "error: could not lock config file /root/.gitconfig: Read-only file system",
        ["/root/.gitconfig"],
        id="git-config",
    ),
    pytest.param(
        "fatal: could not create work tree dir '/usr/x': Read-only file system",
        ["/usr/x"],
        id="git-clone",
    ),
    pytest.param(
        "fatal: Unable to create '/work/main/.git/index.lock': Read-only file system",
        ["/work/main/.git/index.lock"],
        id="git-lock",
    ),
    pytest.param(
        "fatal: cannot mkdir /root/newrepo: Read-only file system", ["/root/newrepo"], id="git-init"
    ),
    pytest.param(
        "error: unable to create file src/a.py: Read-only file system", [], id="git-relative"
    ),
    pytest.param("Cannot open /root/pl: Read-only file system", ["/root/pl"], id="perl"),
    pytest.param(
        "Error: failed to write /root/rs: Read-only file system (os error 30)",
        ["/root/rs"],
        id="rust",
    ),
    pytest.param("open /root/go.txt: read-only file system", ["/root/go.txt"], id="go-shape"),
    # Refused for want of a privilege, as root too: under bwrap --cap-drop ALL in a user
    # namespace (coreutils 9.1, e2fsprogs 1.47, util-linux 2.38, CPython, Node.js 20).
    pytest.param("mknod: /ws/dev: Operation not permitted", ["/ws/dev"], id="mknod"),
    pytest.param("mknod: '/ws/my dev': Operation not permitted", ["/ws/my dev"], id="mknod-space"),
    pytest.param(
        "chattr: Operation not permitted while setting flags on /ws/my f",
        ["/ws/my f"],
        id="chattr",
    ),
    pytest.param("mount: /work/repo: must be superuser to use mount.", ["/work/repo"], id="mount"),
    pytest.param(
        "touch: setting times of '/ws/x': Operation not permitted", ["/ws/x"], id="touch-eperm"
    ),
    pytest.param(
        "PermissionError: [Errno 1] Operation not permitted: '/ws/py'",
        ["/ws/py"],
        id="python-eperm",
    ),
    pytest.param(
        "Error: EPERM: operation not permitted, chmod '/ws/js'", ["/ws/js"], id="node-eperm"
    ),
]


@pytest.mark.parametrize(("message", "expected"), MESSAGES)
def test_each_message_shape_names_its_path(message: str, expected: list[str]) -> None:
    assert refused_paths(message) == expected


@pytest.mark.parametrize(("message", "expected"), MESSAGES)
def test_each_message_shape_is_read_from_a_json_transcript(
    message: str, expected: list[str]
) -> None:
    line = json.dumps({"type": "tool_result", "cwd": "/work/ws", "content": message + "\n"})
    twice = json.dumps({"type": "result", "raw": line})

    assert refused_paths(line) == expected
    assert refused_paths(twice) == expected


def test_paths_are_unique_in_order_of_first_appearance_across_texts() -> None:
    stdout = (
        "Writing the config...\n"
        "touch: cannot touch '/root/b': Read-only file system\n"
        "sh: 1: cannot create /root/a: Read-only file system\n"
        "done\n"
    )
    stderr = "bash: /root/b: Read-only file system\nbash: /etc/c: Read-only file system\n"
    transcript = '{"output": "OSError: [Errno 30] Read-only file system: \'/root/a\'"}\n'

    assert refused_paths(stdout, stderr, transcript) == ["/root/b", "/root/a", "/etc/c"]


def test_a_fragment_of_json_text_with_escaped_quotes_and_line_breaks() -> None:
    fragment = (
        r"...\"stderr\":\"PermissionError: [Errno 30] Read-only file system: \"/root/it's\""
        r"\nmkdir: cannot create directory \u2018/root/d\u2019: Read-only file system"
        r"\ntouch: cannot touch '\/root\/esc': Read-only file system\n\",\"cwd\":\"/work/ws\"..."
    )

    assert refused_paths(fragment) == ["/root/it's", "/root/d", "/root/esc"]


def test_punctuation_after_a_path_is_not_part_of_it() -> None:
    text = (
        "The write failed (Read-only file system: /root/x).\n"
        "Read-only file system: /root/y, so I stopped.\n"
        "[Errno 30] Read-only file system: '/root/z'.\n"
    )

    assert refused_paths(text) == ["/root/x", "/root/y", "/root/z"]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "all good\n",
        "touch: cannot touch '/root/x': Permission denied",
        "OSError: [Errno 30] Read-only file system",
        "OSError(30, 'Read-only file system')",
        "Read-only file system: ''",
        "Read-only file system: /",
        "cannot create x: Read-only file system",
        "I will write to /root/x even though it is a read-only file system",
        "PermissionError: [Errno 1] Operation not permitted",
        "kill: (1234) - Operation not permitted",
        "hostname: you must be root to change the host name",
    ],
    ids=[
        "empty",
        "no-error",
        "other-errno",
        "no-path",
        "repr",
        "empty-name",
        "bare-slash",
        "relative",
        "prose",
        "eperm-no-path",
        "kill",
        "hostname",
    ],
)
def test_no_path_is_made_up(text: str) -> None:
    assert refused_paths(text) == []


@requires_bwrap
def test_the_messages_of_real_refused_writes(tmp_path: Path) -> None:
    target = tmp_path / "outside"
    script = (
        f"echo x > {target}/sh; touch '{target}/my file'; mkdir {target}/d; "
        f"python3 -c \"open('{target}/py', 'w')\"; "
        "command -v node >/dev/null && "
        f"node -e \"require('fs').writeFileSync('{target}/js', '')\"; "
        "true"
    )
    target.mkdir()
    # The run's own sandbox, with the target visible read-only (below /tmp it would be
    # hidden, which makes no EROFS message).
    box = sandbox.choose("bwrap", read_only=[target])
    done = process.run(box.wrap(script, cwd=tmp_path), cwd=tmp_path, timeout=60)

    expected = [f"{target}/sh", f"{target}/my file", f"{target}/d", f"{target}/py"]
    if shutil.which("node"):
        expected.append(f"{target}/js")
    assert refused_paths(done.stdout, done.stderr) == expected


@requires_bwrap
def test_the_messages_of_real_privileged_operations_refused_in_the_sandbox(
    tmp_path: Path,
) -> None:
    # Refused as root too: the sandbox drops every capability (docs/sandbox.md).
    (tmp_path / "f.txt").write_text("f")
    tools = {
        "mknod": (f"mknod '{tmp_path}/my dev' c 1 3", f"{tmp_path}/my dev"),
        "chattr": (f"chattr +i {tmp_path}/f.txt", f"{tmp_path}/f.txt"),
        "mount": (f"mount -o remount,rw,bind {tmp_path}", str(tmp_path)),
    }
    present = [name for name in tools if shutil.which(name)]
    script = "; ".join(tools[name][0] for name in present) + "; true"
    box = sandbox.choose("bwrap")
    argv = box.wrap(script, cwd=tmp_path, writable=(tmp_path,))
    try:
        done = process.run(argv, cwd=tmp_path, timeout=60)
    finally:
        clear_immutable(tmp_path)

    assert refused_paths(done.stdout, done.stderr) == [tools[name][1] for name in present]
    assert not (tmp_path / "my dev").exists()
