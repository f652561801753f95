"""The project a folder belongs to: its repository's, named by what the repository proves.

The folder's repository is the nearest folder upward with a .git directory or file (a
worktree's too), else the folder itself. What it proves is read here: each remote's URL
(from its git config, origin first) and, when no remote is filed yet, its root commits
(`git rev-list --max-parents=0 HEAD`, with a git found outside the repository); a folder
outside git, or a repository with neither, is its host and path. Which project those name,
the database decides (brain.repository_project): the folder's name for the first
repository seen with it, name@<short id> for another of the same name.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# A section of a git config file that names a remote, and a key's line.
_REMOTE_SECTION = re.compile(r'^\s*\[\s*remote\s+"((?:[^"\\]|\\.)*)"\s*\]\s*(.*)$')
_SECTION = re.compile(r"^\s*\[")
_URL = re.compile(r'^\s*url\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;#]*?))\s*(?:[;#].*)?$', re.IGNORECASE)
# git's environment that would point it at another repository than the folder's
_GIT_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
)


@dataclass(frozen=True)
class Repository:
    folder: Path  # the repository's root, or the folder outside git
    label: str  # the folder's name, as people read it
    git: Path | None  # its git directory (a worktree's: the common one), None outside git
    remotes: tuple[str, ...]  # the remotes' URLs, origin's first

    @property
    def place(self) -> str:
        """The folder as an identity: this host and its path."""
        return f"path:{socket.gethostname()}:{self.folder}"


def find(folder: str | Path) -> Repository:
    """The repository that holds folder (the nearest folder upward with .git), else the
    folder itself, with its remotes' URLs."""
    start = Path(folder).expanduser().resolve()
    for candidate in (start, *start.parents):
        dot = candidate / ".git"
        if dot.exists():
            common = _common_dir(dot)
            return Repository(candidate, candidate.name, common, tuple(_remotes(common)) if common else ())
    return Repository(start, start.name, None, ())


def _common_dir(dot: Path) -> Path | None:
    """The git directory whose config holds the remotes: .git itself, or for a worktree
    (.git a file naming its gitdir) the one its commondir names."""
    try:
        if dot.is_dir():
            return dot
        line = dot.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    gitdir = (dot.parent / line[len("gitdir:") :].strip()).resolve()
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return gitdir
    return (gitdir / common).resolve()


def _remotes(git: Path) -> list[str]:
    """The URL of each remote in a git directory's config, origin's first."""
    try:
        text = (git / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found: list[tuple[str, str]] = []
    remote = None
    for line in text.splitlines():
        section = _REMOTE_SECTION.match(line)
        if section:
            remote, line = section.group(1), section.group(2)
        elif _SECTION.match(line):
            remote = None
            continue
        url = _URL.match(line) if remote is not None else None
        if url and (url.group(1) or url.group(2)):
            found.append((remote or "", (url.group(1) or url.group(2)).strip()))
    found.sort(key=lambda r: r[0] != "origin")  # stable: the others in the file's order
    return [u for _, u in found]


def _git(repository: Path) -> str | None:
    """A git outside the repository: PATH's absolute folders, none under the repository."""
    folders = []
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isabs(entry):
            continue
        try:
            real = Path(entry).resolve()
        except OSError:
            continue
        if real == repository or repository in real.parents:
            continue
        folders.append(entry)
    return shutil.which("git", path=os.pathsep.join(folders)) if folders else None


def root_commits(repository: Repository) -> list[str]:
    """The commits without a parent that HEAD descends from; none without git or commits."""
    if repository.git is None:
        return []
    git = _git(repository.folder)
    if git is None:
        return []
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV}
    try:
        out = subprocess.run(
            [git, "-C", str(repository.folder), "rev-list", "--max-parents=0", "HEAD"],
            capture_output=True,
            text=True,
            env=env,
            timeout=10,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if out.returncode != 0:
        return []
    return [c for c in out.stdout.split() if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", c)]


def project_of(folder: str | Path, brain: Any) -> str:
    """The project of folder's repository (brain.repository_project): found by its remotes
    when one is filed, else by its root commits too, else filed now."""
    repository = find(folder)
    remotes = [f"remote:{u}" for u in repository.remotes]
    place = repository.place
    if remotes:
        known = brain.value(
            "repository_project", identities=remotes, label=repository.label, fallback=place, claim=False
        )
        if known:
            return str(known)
    identities = remotes + [f"root:{c}" for c in root_commits(repository)]
    return str(
        brain.value("repository_project", identities=identities, label=repository.label, fallback=place)
    )


def refile_global_sessions(brain: Any) -> dict[str, Any]:
    """File the folders an older release's sessions ran in (brain.unfiled_folders, oldest
    first) under their repositories' projects, then move its global sessions, their handoffs
    and captured turns there (brain.refile_sessions). Folders gone from this machine are
    left as they are. What moved, and the folders filed."""
    host = socket.gethostname()
    folders = []
    for row in brain.call("unfiled_folders", host=host):
        cwd = row["cwd"]
        if not os.path.isdir(cwd):
            continue
        folders.append({"cwd": cwd, "project": project_of(cwd, brain)})
    moved: dict[str, Any] = {"sessions": 0, "handoffs": 0, "turns": 0, "kept": 0}
    if folders:
        moved = dict(brain.value("refile_sessions", folders=_jsonb(folders), host=host))
    moved["folders"] = folders
    return moved


def _jsonb(value: Any) -> Any:
    from psycopg.types.json import Jsonb

    return Jsonb(value)
