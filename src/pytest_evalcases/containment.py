"""Whether a run stayed in its workspace: the repository (its working tree and what git
keeps beside it) before and after a run, and the paths a sandboxed run was refused.

Without the sandbox, :func:`tree_state` is taken before and after each run and
:func:`changed_files` names what the run changed in the repository: files, commits,
refs, the index, the configuration git reads, hooks, excludes (the run is then an error
of kind ``escaped-workspace``). Under the sandbox everything outside the workspace
is read-only, so a write there fails with ``EROFS``, and what needs a privilege (a
device node, a file attribute, a mount) with ``EPERM``; :func:`refused_paths` reads the
paths from the messages the agent's tools printed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_evalcases import git
from pytest_evalcases.process import ProcessResult

#: The digest markers of entries that are not regular files.
DELETED = "deleted"
DIRECTORY = "dir"
SYMLINK = "symlink:"
OTHER = "other"

_CHUNK = 1 << 20


@dataclass(frozen=True)
class TreeState:
    """The repository as a run could change it: the working tree as git sees it, each
    path ``git status`` lists (modified, added, deleted, untracked; ignored files are not
    listed) with the sha256 of its content at the time, or a marker: ``deleted``, ``dir``
    (a submodule or nested repository), ``symlink:<target>``, ``other`` (a FIFO, socket
    or device); and what git keeps beside it (:attr:`git`): the commit checked out, the
    refs, the index, the configuration git reads, the hooks and the ``info`` files
    (excludes, attributes), which a run could change without ``git status`` showing it."""

    root: Path  # the work tree's top level
    entries: Mapping[str, str]  # repo-relative posix path -> digest or marker
    #: ``HEAD``'s commit; empty before the first commit.
    head: str = ""
    #: What steers git, by a name to report (``.git/config``, ``~/.gitconfig``,
    #: ``.git/hooks/pre-commit``, ``.git/info/exclude``) -> a digest: the settings of each
    #: configuration file git reads, the hooks, the ``info`` files and alternates.
    configuration: Mapping[str, str] = field(default_factory=dict)
    #: Where git records history, by name (``.git/HEAD``, ``.git/refs/heads/main``,
    #: ``.git/packed-refs``, ``.git/index``) -> a digest (the index's of its entries and
    #: their flags, not of the file, which git rewrites when it refreshes timestamps).
    refs: Mapping[str, str] = field(default_factory=dict)
    #: The files the commits since the state before changed (see :func:`tree_state`).
    committed: tuple[str, ...] = ()


def tree_state(path: Path, *, since: TreeState | None = None) -> TreeState | None:
    """The state of the git work tree containing ``path``; ``None`` when ``path`` is not in
    a work tree (a bare repository, no repository, one git refuses to read) or git is
    missing.

    With ``since`` (the state before a run): when the configuration git reads, its hooks
    or its ``info`` files changed, git is not asked about the working tree (the run's
    configuration could make it run a program), and the state names what changed; when
    ``HEAD`` moved, ``committed`` names the files the new commits changed; when git can
    no longer read the repository (a broken configuration, a deleted ``.git``), the state
    says so as a change (never ``None``, which would leave the run unchecked).

    Four git commands (the top level and ``HEAD``, the configuration, the index, one
    ``git status``), none of which runs a program the configuration names (:mod:`git`),
    and a hash of each listed file and of the files of the git directory named above.
    ``git status`` cannot refresh the index without its optional lock, so in a tree whose
    files were touched since the index was written it re-reads them. Raises
    :class:`git.GitTimedOut` when git hangs.
    """
    taken = _taken(path, since)
    if isinstance(taken, TreeState) or since is None:
        return taken if isinstance(taken, TreeState) else None
    return TreeState(
        since.root,
        since.entries,
        "",
        {**since.configuration, f"git cannot read it: {taken}": ""},
        since.refs,
    )


def _taken(path: Path, since: TreeState | None) -> TreeState | str:
    """The state of :func:`tree_state`, or why git could not tell it."""
    try:
        top = git.run(
            path, ["rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir", "HEAD"]
        )
    except (git.GitNotFound, OSError) as exc:
        return str(exc)
    lines = top.stdout.split("\n")
    if len(lines) < 3 or not lines[0] or not lines[1]:
        return _said(top)
    root, git_dir = Path(lines[0]), Path(lines[1])
    # Relative to the directory git ran in, where it is below it.
    common = Path(os.path.normpath(path / lines[2])) if lines[2] else git_dir
    head = lines[3] if len(lines) > 3 and _HEX.fullmatch(lines[3]) else ""
    config = git.run(root, git.CONFIG_LIST)
    if config.returncode != 0:
        return _said(config)
    configuration = _configuration(root, git_dir, common, config.stdout)
    refs = _refs(root, git_dir, common)
    index_name = _shown(root, git_dir / "index")
    if since is not None and configuration != since.configuration:
        # What git would say now is not to be trusted, nor asked for: the working tree
        # and the index count as they were.
        if index_name in since.refs:
            refs[index_name] = since.refs[index_name]
        return TreeState(root, since.entries, head, configuration, refs)
    index = git.run(root, ["ls-files", "--stage", "-v", "-z"])
    if index.returncode != 0:
        return _said(index)
    refs[index_name] = _sha(index.stdout.encode("utf-8", "surrogateescape"))
    with tempfile.TemporaryDirectory(prefix="evalcases-status-") as scratch:
        out = Path(scratch) / "status"
        try:
            # Through a file: the listing is bytes, names need not be UTF-8. Submodules
            # count by their commit only: their working trees are theirs.
            done = git.run_to_file(
                root,
                [
                    "status",
                    "--porcelain=v1",
                    "-z",
                    "--untracked-files=all",
                    "--ignore-submodules=dirty",
                ],
                out,
                filters=git.filters_in(config.stdout),
            )
        except git.GitNotFound as exc:
            return str(exc)
        if done.returncode != 0:
            return _said(done)
        listing = out.read_bytes()
    root_bytes = os.fsencode(root)
    entries = {
        name.decode("utf-8", errors="replace"): _digest(os.path.join(root_bytes, name))
        for name in _status_paths(listing)
    }
    committed: tuple[str, ...] = ()
    if since is not None and since.head and head and since.head != head:
        diff = git.run(
            root,
            ["diff", "--name-only", "--no-renames", "-z", since.head, head, "--"],
            filters=git.filters_in(config.stdout),
        )
        committed = tuple(n for n in diff.stdout.split("\0") if n)
    return TreeState(root, entries, head, configuration, refs, committed)


def _said(result: ProcessResult) -> str:
    """What a git command that failed said: the first line of its error."""
    lines = result.stderr.strip().splitlines()
    return lines[0] if lines else f"exit status {result.returncode}"


def changed_files(before: TreeState, after: TreeState, *, ignore: Sequence[Path] = ()) -> list[str]:
    """Repo-relative paths that differ between the two states (appeared in the status,
    disappeared from it, or whose content changed; committed since), sorted, then what
    git keeps that changed (``.git/config``, ``.git/refs/heads/main``...); paths at or
    under any of ``ignore`` (absolute paths: the session's temporary directory, the
    workspace, the results directory...) are left out."""
    prefixes = _ignored_prefixes(after.root, ignore) | _ignored_prefixes(before.root, ignore)
    changed = set(after.committed)
    for name in before.entries.keys() | after.entries.keys():
        if before.entries.get(name) != after.entries.get(name):
            changed.add(name)
    tree = [
        name
        for name in changed
        if not any(p == "" or name == p or name.startswith(p + "/") for p in prefixes)
    ]
    kept = [
        name
        for old, new in ((before.configuration, after.configuration), (before.refs, after.refs))
        for name in old.keys() | new.keys()
        if old.get(name) != new.get(name)
    ]
    return sorted(tree) + sorted(kept)


#: A commit's name (SHA-1 or SHA-256).
_HEX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
#: What of the git directory is read: a run that writes there can change what a commit,
#: a hook or the excludes do. Objects are left out (they only grow, and are many), and
#: so is what git's upkeep rewrites on its own (``objects/info/commit-graph``, logs).
_STEERING_FILES = ("commondir", "shallow", "objects/info/alternates")
_STEERING_TREES = ("hooks", "info")
_REF_FILES = ("HEAD",)
_REF_TREES = ("refs", "reftable")
#: Remote-tracking refs are left out: an editor's automatic fetch moves them.
_REMOTES = "refs/remotes/"


def _configuration(root: Path, git_dir: Path, common: Path, config: str) -> dict[str, str]:
    """Digests of what steers git: the settings of each configuration file that ``git
    config --list -z --show-origin`` (``config``) names, whichever file it is (the
    repository's, the user's ``~/.gitconfig``, an included one), and the files of
    :data:`_STEERING_FILES` and below :data:`_STEERING_TREES`."""
    kept: dict[str, str] = {}
    fields = config.split("\0")
    by_file: dict[str, list[str]] = {}
    for origin, setting in zip(fields[::2], fields[1::2], strict=False):
        if origin.startswith("file:"):
            by_file.setdefault(_shown(root, root / origin[5:]), []).append(setting)
    for name, settings in by_file.items():
        kept[name] = _sha("\0".join(settings).encode("utf-8", "surrogateescape"))
    _read(kept, root, (git_dir, common), _STEERING_FILES, _STEERING_TREES)
    return kept


def _refs(root: Path, git_dir: Path, common: Path) -> dict[str, str]:
    """Digests of the files that record history: ``HEAD``, the refs, ``packed-refs``
    and ``reftable``, but remote-tracking refs."""
    kept: dict[str, str] = {}
    _read(kept, root, (git_dir, common), _REF_FILES, _REF_TREES)
    packed = common / "packed-refs"
    try:
        lines = packed.read_bytes().splitlines()
    except OSError:
        return kept
    mine = [line for line in lines if not line.partition(b" ")[2].startswith(_REMOTES.encode())]
    kept[_shown(root, packed)] = _sha(b"\n".join(mine))
    return kept


def _read(
    kept: dict[str, str],
    root: Path,
    bases: Sequence[Path],
    files: Sequence[str],
    trees: Sequence[str],
) -> None:
    for base in dict.fromkeys(bases):
        for name in files:
            _add(kept, root, base / name)
        for name in trees:
            tree = base / name
            if tree.is_dir():
                for found in sorted(tree.rglob("*")):
                    if not found.relative_to(base).as_posix().startswith(_REMOTES):
                        _add(kept, root, found)


def _add(kept: dict[str, str], root: Path, path: Path) -> None:
    digest = _digest(os.fsencode(path))
    if digest not in (DELETED, DIRECTORY):
        kept[_shown(root, path)] = digest


def _shown(root: Path, path: Path) -> str:
    """``path`` relative to the work tree's top level where it is below it (``.git/x``),
    else as it is (a worktree's git directory elsewhere, ``~/.gitconfig``)."""
    path = Path(os.path.normpath(path))
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _status_paths(listing: bytes) -> Iterator[bytes]:
    """Every path of a ``git status --porcelain=v1 -z`` listing: ``XY path``, and for a
    rename or copy a second field, the original path."""
    fields = listing.split(b"\0")
    i = 0
    while i < len(fields):
        field = fields[i]
        i += 1
        if len(field) < 4:
            continue
        code = field[:2]
        yield field[3:].rstrip(b"/")
        if b"R" in code or b"C" in code:
            if i < len(fields) and fields[i]:
                yield fields[i].rstrip(b"/")
            i += 1


def _digest(path: bytes) -> str:
    """The sha256 of a file's content, or the marker of what else is there."""
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            return SYMLINK + os.fsdecode(os.readlink(path))
        if stat.S_ISDIR(info.st_mode):
            return DIRECTORY
        if not stat.S_ISREG(info.st_mode):
            return OTHER
        # O_NONBLOCK: a file swapped for a FIFO since the lstat must not block the open.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return DELETED
    except OSError:
        return OTHER
    with open(fd, "rb", buffering=0) as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return OTHER
        digest = hashlib.sha256()
        buffer = bytearray(_CHUNK)
        view = memoryview(buffer)
        while n := f.readinto(buffer):
            digest.update(view[:n])
    return digest.hexdigest()


def _ignored_prefixes(root: Path, ignore: Sequence[Path]) -> set[str]:
    """The repo-relative posix forms of the ``ignore`` paths inside ``root`` (``""`` for
    the root itself), both as given and with symlinks resolved (git reports the real
    top level; a temporary directory may be named through a symlink)."""
    prefixes: set[str] = set()
    roots = {Path(os.path.abspath(root)), root.resolve()}
    for path in ignore:
        for candidate in {Path(os.path.abspath(path)), path.resolve()}:
            for top in roots:
                try:
                    rel = candidate.relative_to(top)
                except ValueError:
                    continue
                prefixes.add("" if rel == Path() else rel.as_posix())
    return prefixes


# --- refused paths ---------------------------------------------------------------------

#: The messages of a refused write: a read-only filesystem (``EROFS``), an operation
#: that needs a privilege the sandbox took away (``EPERM``: mknod, chattr, chown), and
#: util-linux's mount refusing a user who is not root.
_PHRASE = re.compile(
    r"read-only file system|operation not permitted|must be superuser to use mount",
    re.IGNORECASE,
)
#: e2fsprogs' chattr names the file last, unquoted, to the end of the line.
_FLAGS_ON = re.compile(r"\s+while setting flags on (/.*?)\s*$")
#: A word as coreutils quotes a file name (shell-escape style): ``'...'``, ``"..."``,
#: ``$'...'`` and ``\'`` pieces, run together, or a name in locale quotes (‘...’ or
#: `...'), ending the text before the message.
_QUOTED_BEFORE = re.compile(
    r"(?<![^\s(\[{=,:])"
    r"(?:(?P<shell>(?:'[^'\n]*'|\"[^\"\n]*\"|\$'(?:[^'\\\n]|\\.)*'|\\')+)"
    r"|‘(?P<locale>[^’\n]*)’|`(?P<backtick>[^'\n]*)')\Z"
)
#: What may follow a closing quote: a delimiter, or a full stop ending the sentence.
_END = r"(?:[\s,;:)\]}\"]|\.(?:\s|\Z)|\Z)"
#: A name quoted as Python's repr or Node.js prints it. A single quote not followed by
#: what may follow a closing one is part of the name: Node does not escape ``'/it's'``.
_QUOTED_AFTER = re.compile(
    rf"'(?P<single>(?:[^'\\\n]|\\.|'(?!{_END}|->))*)'(?={_END})"
    r"|\"(?P<double>(?:[^\"\\\n]|\\.)*)\""
    r"|(?P<bare>/[^\s'\"]+)"
)
#: What leads from the phrase to a name after it: ``: NAME`` (Python) or ``, VERB NAME``
#: (Node.js).
_AFTER_LEAD = re.compile(r"\s*(?::|,\s*[a-z_]+)\s*")
_ARROW = re.compile(r"\s*->\s*")
_PYTHON_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|[\\'\"ntr])")
_ANSI_ESCAPE = re.compile(rb"\\([0-7]{1,3}|x[0-9a-fA-F]{1,2}|.)", re.DOTALL)
_ANSI_NAMED = {b"n": b"\n", b"t": b"\t", b"r": b"\r", b"a": b"\a", b"b": b"\b", b"e": b"\x1b"}
_TRAILING = ".,;:!?)]}>'\""
#: How far before the phrase a name is looked for.
_HEAD = 1024


def refused_paths(*texts: str) -> list[str]:
    """Absolute paths named in the errors of refused writes in ``texts`` (an agent's
    output, stderr, transcript), unique, in order of first appearance: read-only
    filesystem, operation not permitted, and mount's ``must be superuser``.

    Reads the shapes of shells (``sh: 1: cannot create /x: Read-only file system``),
    coreutils (``touch: cannot touch '/x': ...``, shell-escaped or locale-quoted names),
    git and Go (``... /x: read-only file system``), Python (``[Errno 30] Read-only file
    system: '/x'``) and Node.js (``EROFS: read-only file system, open '/x'``), also in
    JSON-escaped text. Relative names are left out.
    """
    found: dict[str, None] = {}
    seen: set[str] = set()
    for text in texts:
        for plain in _plain_texts(text):
            for line in plain.splitlines():
                # A transcript repeats what the tools said; each line is read once.
                if line in seen:
                    continue
                seen.add(line)
                for match in _PHRASE.finditer(line):
                    for name in (
                        *_names_before(line[max(0, match.start() - _HEAD) : match.start()]),
                        *_names_after(line, match.end()),
                    ):
                        if len(name) > 1 and name.startswith("/"):
                            found.setdefault(name, None)
    return list(found)


def _plain_texts(text: str) -> Iterator[str]:
    """``text`` as the tools printed it: the strings of a JSON document or of each JSON
    line (a transcript), also JSON inside them; other lines with the escapes of a JSON
    fragment undone."""
    if not _PHRASE.search(text):
        return
    document = _json(text)
    if document is not _NOT_JSON:
        yield from _strings(document)
        return
    for line in text.splitlines():
        if not _PHRASE.search(line):
            continue
        document = _json(line)
        if document is not _NOT_JSON:
            yield from _strings(document)
        else:
            yield _unescape(line)


_NOT_JSON = object()


def _json(text: str) -> object:
    stripped = text.strip()
    if not stripped or stripped[0] not in '{["':
        return _NOT_JSON
    try:
        return json.loads(stripped)
    except ValueError:
        return _NOT_JSON


def _strings(document: object) -> Iterator[str]:
    """The strings in a JSON value that mention the phrase, JSON within them unpacked."""
    if isinstance(document, str):
        if _PHRASE.search(document):
            inner = _json(document)
            if inner is _NOT_JSON:
                yield document
            else:
                yield from _strings(inner)
    elif isinstance(document, dict):
        for value in document.values():
            yield from _strings(value)
    elif isinstance(document, list):
        for value in document:
            yield from _strings(value)


def _unescape(line: str) -> str:
    r"""Undo the escapes of a line cut from JSON text. With an escaped quote in it, the
    line is the inside of a JSON string (or of one within another): its escapes are
    decoded. Otherwise only escaped slashes, ``\uXXXX`` characters and ``\n`` line breaks
    (not those of a shell's ``$'...'``) are."""
    if "\\" not in line:
        return line
    for _ in range(3):
        if '\\"' not in line:
            break
        line = _JSON_ESCAPE.sub(_json_escape, line)
    line = line.replace("\\/", "/")
    line = _UNICODE_ESCAPE.sub(_json_escape, line)
    return _BREAK_ESCAPE.sub(lambda m: m.group(1) or "\n", line)


_JSON_ESCAPE = re.compile(
    r'\\(u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|["\\/bfnrt])'
)
_UNICODE_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}(?:\\u[0-9a-fA-F]{4})?)")
_BREAK_ESCAPE = re.compile(r"(\$'(?:[^'\\\n]|\\.)*')|\\+[nr]")
_JSON_NAMED = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _json_escape(match: re.Match[str]) -> str:
    code = match.group(1)
    if code[0] != "u":
        return _JSON_NAMED.get(code, code)
    units = [int(unit, 16) for unit in code[1:].split("\\u")]
    if len(units) == 2 and 0xD800 <= units[0] < 0xDC00 <= units[1] < 0xE000:
        return chr(0x10000 + ((units[0] - 0xD800) << 10) + units[1] - 0xDC00)
    chars = [chr(u) if not 0xD800 <= u < 0xE000 else f"\\u{u:04x}" for u in units]
    return "".join(chars)


def _names_before(head: str) -> list[str]:
    """The name ending ``head``, the text before ``: Read-only file system``; with the
    source too when it reads ``'SRC' to 'DEST'`` (mv)."""
    head = head.rstrip()
    if not head.endswith(":"):
        return []
    head = head[:-1].rstrip()
    quoted = _QUOTED_BEFORE.search(head) if head.endswith(("'", '"', "’")) else None
    if quoted is None:
        return _bare_before(head)
    name = _decode_before(quoted)
    rest = head[: quoted.start()]
    if rest.endswith(" to "):
        source = _QUOTED_BEFORE.search(rest[:-4])
        if source is not None:
            return [_decode_before(source), name]
    return [name]


def _bare_before(head: str) -> list[str]:
    """An unquoted name at the end of ``head``, after the message's last ``: ``: from the
    first ``/`` that starts a word and leaves no double quote after it (``sh: 1: cannot
    create /my file``, not the ``/work"`` of a JSON key before). Failing that, the last
    quoted name before words (``cannot open '/x' for writing``)."""
    region = head.rpartition(": ")[2]
    for start in re.finditer(r"(?:^|(?<=[\s\"]))/", region):
        if '"' not in region[start.start() :]:
            return [region[start.start() :]]
    inner = re.findall(r"(?<![^\s(\[{=,:])'(/[^'\n]*)'(?=\s)", region)
    return inner[-1:]


def _decode_before(match: re.Match[str]) -> str:
    if match.group("shell") is not None:
        return _shell_word(match.group("shell"))
    return match.group("locale") if match.group("locale") is not None else match["backtick"]


def _shell_word(word: str) -> str:
    """The name a shell-escaped word stands for: ``'/a'$'\\n''b'`` is ``/a`` newline ``b``."""
    out = bytearray()
    for piece in re.finditer(r"'([^']*)'|\"([^\"]*)\"|\$'((?:[^'\\]|\\.)*)'|\\(')", word):
        plain, double, ansi, quote = piece.groups()
        if ansi is not None:
            out += _ANSI_ESCAPE.sub(_ansi, ansi.encode("utf-8"))
        else:
            out += (plain if plain is not None else double if double is not None else quote).encode(
                "utf-8"
            )
    return out.decode("utf-8", errors="replace")


def _ansi(match: re.Match[bytes]) -> bytes:
    code = match.group(1)
    if code[:1].isdigit():
        return bytes([int(code, 8) & 0xFF])
    if code[:1] == b"x" and len(code) > 1:
        return bytes([int(code[1:], 16)])
    return _ANSI_NAMED.get(code, code)


def _names_after(line: str, end: int) -> list[str]:
    """The names after the phrase: ``: '/x'`` (Python) or ``, open '/x'`` (Node.js), and
    the second of ``'/a' -> '/b'`` (a rename, copy or link); ``while setting flags on
    /x`` (chattr)."""
    flags = _FLAGS_ON.match(line, end)
    if flags is not None:
        return [flags.group(1)]
    lead = _AFTER_LEAD.match(line, end)
    if lead is None:
        return []
    names = []
    pos = lead.end()
    while True:
        quoted = _QUOTED_AFTER.match(line, pos)
        if quoted is None:
            break
        names.append(_decode_after(quoted))
        arrow = _ARROW.match(line, quoted.end())
        if arrow is None or len(names) > 1:
            break
        pos = arrow.end()
    return names


def _decode_after(match: re.Match[str]) -> str:
    if match.group("bare") is not None:
        return match.group("bare").rstrip(_TRAILING)
    body = match.group("single") if match.group("single") is not None else match["double"]
    return _PYTHON_ESCAPE.sub(_python_escape, body)


def _python_escape(match: re.Match[str]) -> str:
    code = match.group(1)
    if code[0] == "x":
        return chr(int(code[1:], 16))
    return {"n": "\n", "t": "\t", "r": "\r"}.get(code, code)
