"""Kept workspaces (docs/agents.md, "Kept workspaces"): moved or copied out of pytest's
temporary directory, within a size limit, symlinks and FIFOs never followed or opened."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from pytest_evalcases.redact import Redactor
from pytest_evalcases.run import keep
from pytest_evalcases.run.keep import KeepPlace
from tests.plugin.test_hostile_workspaces import as_unprivileged_user

SHM = Path("/dev/shm")
#: Redacts credential shapes only: these workspaces hold none.
NO_SECRETS = Redactor({})


def place(root: Path, stem: str = "now", max_bytes: int = 10_000_000) -> KeepPlace:
    return KeepPlace(root=root, directory=root / f"{stem}{keep.SUFFIX}", max_bytes=max_bytes)


def hostile_workspace(path: Path) -> Path:
    """A workspace an agent left: a file, a link to /, a link loop, a FIFO, a read-only
    directory, and a directory nobody may list."""
    path.mkdir(parents=True)
    (path / "answer.txt").write_text("done")
    (path / "sub").mkdir()
    (path / "sub" / "deep.txt").write_text("deep")
    os.symlink("/", path / "r")
    os.symlink(".", path / "loop")
    os.mkfifo(path / "pipe")
    (path / "frozen").mkdir()
    (path / "frozen" / "in.txt").write_text("in")
    (path / "frozen").chmod(0o555)
    (path / "closed").mkdir()
    (path / "closed").chmod(0)
    return path


def sized(path: Path, size: int) -> Path:
    """A workspace holding one file of ``size`` bytes."""
    path.mkdir(parents=True)
    (path / "blob").write_bytes(b"x" * size)
    return path


def age(path: Path, seconds_ago: float) -> None:
    moment = time.time() - seconds_ago
    os.utime(path, (moment, moment))


def test_entry_names_keep_variant_and_repetition_apart_without_brackets() -> None:
    assert keep.entry_name("fix-bug", "", None) == "fix-bug"
    assert keep.entry_name("fix-bug", "main", None) == "fix-bug.main"
    assert keep.entry_name("fix-bug", "", 1) == "fix-bug.r1"
    assert keep.entry_name("fix-bug", "feature/x y", 0) == "fix-bug.feature-x-y.r0"


def test_a_workspace_is_moved_into_the_directory_named_after_the_results_file(
    tmp_path: Path,
) -> None:
    workspace = hostile_workspace(tmp_path / "tmp" / "fails0")
    where = place(tmp_path / "results", "2026-12-01T09-30-00.123Z")

    kept = keep.keep(workspace, "fails", where, NO_SECRETS)

    assert kept == keep.Kept(where.directory / "fails")
    assert not workspace.exists()
    assert (kept.path / "answer.txt").read_text() == "done"
    assert os.readlink(kept.path / "r") == "/"
    assert keep.is_kept_dir(where.directory)
    assert (where.directory / ".gitignore").read_text().endswith("\n*\n")


def test_copy_keeps_links_as_links_and_leaves_fifos_and_unreadable_dirs_out(
    tmp_path: Path,
) -> None:
    source = hostile_workspace(tmp_path / "ws")
    target = tmp_path / "copy"
    target.mkdir()

    keep.copy_tree(source, target, 1_000_000)

    assert (target / "answer.txt").read_text() == "done"
    assert (target / "sub" / "deep.txt").read_text() == "deep"
    assert os.readlink(target / "r") == "/"
    assert os.readlink(target / "loop") == "."
    assert not os.path.lexists(target / "pipe")
    assert (target / "frozen" / "in.txt").read_text() == "in"
    assert stat.S_IMODE((target / "frozen").stat().st_mode) == 0o555
    if os.geteuid() != 0:  # root lists any directory
        assert os.listdir(target / "closed") == []


def test_copy_stops_at_the_limit(tmp_path: Path) -> None:
    source = sized(tmp_path / "ws", 3000)
    target = tmp_path / "copy"
    target.mkdir()

    with pytest.raises(keep.TooBig):
        keep.copy_tree(source, target, 2000)


def test_a_huge_sparse_file_is_measured_not_copied(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with open(workspace / "huge", "wb") as f:
        f.truncate(50 * 1024**3)

    kept = keep.keep(
        workspace, "huge", place(tmp_path / "results", max_bytes=1_000_000_000), NO_SECRETS
    )

    assert kept.path == workspace
    assert kept.note.endswith("its 53,687 MB exceed eval_keep_max_mb = 1000")
    assert not (tmp_path / "results").exists()


@pytest.mark.skipif(not SHM.is_dir() or not os.access(SHM, os.W_OK), reason="no writable /dev/shm")
def test_across_filesystems_a_hostile_workspace_is_copied_then_removed(tmp_path: Path) -> None:
    root = SHM / f"evalcases-keep-{os.getpid()}-{tmp_path.name}"
    if os.stat(SHM).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("/dev/shm is on the same filesystem as the temporary directory")
    workspace = hostile_workspace(tmp_path / "fails0")
    try:
        kept = keep.keep(workspace, "fails", place(root), NO_SECRETS)

        assert kept.path == root / f"now{keep.SUFFIX}" / "fails"
        assert kept.note == ""
        assert (kept.path / "answer.txt").read_text() == "done"
        assert os.readlink(kept.path / "r") == "/"
        assert not os.path.lexists(kept.path / "pipe")
        assert not workspace.exists()
    finally:
        keep.remove_tree(root)


def test_the_oldest_workspaces_of_earlier_runs_make_room_first(tmp_path: Path) -> None:
    root = tmp_path / "results"
    for stem, seconds_ago in (("old", 300), ("older", 600)):
        earlier = place(root, stem)
        keep.keep(sized(tmp_path / stem, 600_000), "case", earlier, NO_SECRETS)
        age(earlier.directory / "case", seconds_ago)

    kept = keep.keep(
        sized(tmp_path / "new", 600_000), "case", place(root, max_bytes=1_500_000), NO_SECRETS
    )

    assert kept.note == ""
    assert [p.name for p in keep.sessions(root)] == ["old.workspaces", "now.workspaces"]
    assert not (root / "older.workspaces").exists()


def test_this_runs_own_kept_workspaces_are_never_removed_to_make_room(tmp_path: Path) -> None:
    where = place(tmp_path / "results", max_bytes=1_500_000)
    keep.keep(sized(tmp_path / "first", 1_000_000), "first", where, NO_SECRETS)

    kept = keep.keep(sized(tmp_path / "second", 600_000), "second", where, NO_SECRETS)

    assert kept.path == tmp_path / "second"
    assert "the workspaces this run kept there already take eval_keep_max_mb" in kept.note
    assert (where.directory / "first" / "blob").stat().st_size == 1_000_000


def test_clean_removes_all_but_the_newest_runs_and_nothing_that_is_not_ours(
    tmp_path: Path,
) -> None:
    root = tmp_path / "results"
    for index, stem in enumerate(("a", "b", "c")):
        keep.keep(sized(tmp_path / stem, 10), "case", place(root, stem), NO_SECRETS)
        age(root / f"{stem}{keep.SUFFIX}", 100 - index)
    mine = root / f"mine{keep.SUFFIX}"
    mine.mkdir()
    (root / "a.json").write_text("{}")
    each = keep.tree_size(root / f"c{keep.SUFFIX}")
    assert each >= 10 + len(keep.GITIGNORE.encode())

    removed, freed = keep.clean(root, keep_last=1)

    assert [p.name for p in removed] == ["a.workspaces", "b.workspaces"]
    # What each took on disk (the same as the one kept): its directories and files.
    assert freed == 2 * each
    assert sorted(p.name for p in root.iterdir()) == ["a.json", "c.workspaces", "mine.workspaces"]


def test_removing_a_kept_workspace_opens_closed_directories_but_never_follows_links(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    outside.chmod(0o555)
    workspace = hostile_workspace(tmp_path / "ws")
    os.symlink(outside, workspace / "sub" / "out")

    keep.remove_tree(workspace)

    assert not os.path.lexists(workspace)
    assert stat.S_IMODE(outside.stat().st_mode) == 0o555


SECRET = "hunter2-is-the-password"


def test_scrub_redacts_files_and_links_and_leaves_out_what_it_cannot_read(
    tmp_path: Path,
) -> None:
    redact = Redactor({"DB_PASSWORD": SECRET})
    outside = tmp_path / "outside.txt"
    outside.write_text(f"pw={SECRET}\n")
    ws = tmp_path / "ws"
    (ws / "frozen").mkdir(parents=True)
    (ws / "clean.txt").write_text("nothing here\n")
    (ws / "frozen" / "env.txt").write_bytes(f"DB_PASSWORD={SECRET}\n".encode() + b"\xff")
    (ws / "frozen" / "env.txt").chmod(0o444)
    (ws / "frozen").chmod(0o555)
    os.link(outside, ws / "hard.txt")
    os.symlink(f"/tmp/{SECRET}", ws / "link")
    (ws / f"{SECRET}.log").write_text("named after it\n")
    (ws / "big.bin").write_bytes(b"x" * 2000)
    os.mkfifo(ws / "pipe")

    scrubbed = keep.scrub(ws, redact, max_bytes=1000)

    assert scrubbed.redacted == ("frozen/env.txt", "hard.txt", "link")
    assert scrubbed.left_out == (
        ("[REDACTED].log", "its name holds a secret"),
        ("big.bin", "past the 1 kB searched for secrets"),
    )
    assert (ws / "frozen" / "env.txt").read_bytes() == b"DB_PASSWORD=[REDACTED]\n\xff"
    # Modes as the agent left them; a hard link's other name is not written.
    assert stat.S_IMODE((ws / "frozen").stat().st_mode) == 0o555
    assert stat.S_IMODE((ws / "frozen" / "env.txt").stat().st_mode) == 0o444
    assert outside.read_text() == f"pw={SECRET}\n"
    assert (ws / "hard.txt").read_text() == "pw=[REDACTED]\n"
    assert os.readlink(ws / "link") == "/tmp/[REDACTED]"
    assert sorted(p.name for p in ws.iterdir()) == [
        "clean.txt",
        "frozen",
        "hard.txt",
        "link",
        "pipe",
    ]
    assert scrubbed.note() == (
        "secrets redacted in frozen/env.txt, hard.txt, link; left out: [REDACTED].log "
        "(its name holds a secret), big.bin (past the 1 kB searched for secrets)"
    )
    (ws / "frozen").chmod(0o755)


def test_tiny_files_count_their_blocks_when_measured_and_when_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(100):
        (ws / f"f{i}").write_text("x")
    block = os.lstat(ws / "f0").st_blocks * 512
    if block < 4096:
        pytest.skip("this filesystem keeps a one-byte file in less than 4 KiB")

    assert keep.tree_size(ws) >= 100 * block
    (tmp_path / "copy").mkdir()
    with pytest.raises(keep.TooBig):
        keep.copy_tree(ws, tmp_path / "copy", 100 * 1000)
    # And more entries than a kept workspace may hold are counted no further.
    monkeypatch.setattr(keep.defaults, "KEEP_MAX_ENTRIES", 50)
    kept = keep.keep(ws, "tiny", place(tmp_path / "results"), NO_SECRETS)
    assert kept.path == ws
    assert kept.note.endswith(
        "it holds more than 50 files and directories, the most a kept workspace may"
    )


#: Scrubs the workspace named by its argument with the environment's secrets.
SCRUB = """
import sys
from pathlib import Path
from pytest_evalcases.redact import Redactor
from pytest_evalcases.run import keep
print(keep.scrub(Path(sys.argv[1]), Redactor()).note())
"""


def test_scrub_opens_a_directory_the_agent_closed_before_it_searches_it() -> None:
    # Not below pytest's directory, which the unprivileged user could not reach.
    root = Path(tempfile.mkdtemp(prefix="evalcases-closed-"))
    try:
        root.chmod(0o755)
        ws = root / "ws"
        (ws / "closed").mkdir(parents=True)
        (ws / "closed" / "env.txt").write_text(f"DB_PASSWORD={SECRET}\n")
        # As root, whom a mode stops from nothing, it runs as nobody.
        prefix = as_unprivileged_user(root)
        (ws / "closed").chmod(0)
        done = subprocess.run(
            [*prefix, sys.executable, "-c", SCRUB, str(ws)],
            env={**os.environ, "DB_PASSWORD": SECRET},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "secrets redacted in closed/env.txt"
        assert (ws / "closed" / "env.txt").read_text() == "DB_PASSWORD=[REDACTED]\n"
    finally:
        keep.remove_tree(root)


@pytest.mark.parametrize(
    ("name", "repetition"),
    [("a", 0), ("a.r0", 0), ("a.r3", 3), ("a.strict.r1", 1), ("a.r1x", 0)],
)
def test_a_runs_repetition_from_its_name(name: str, repetition: int) -> None:
    variant = "strict" if "strict" in name else ""
    assert keep.repetition_of(name, "a", variant) == repetition
