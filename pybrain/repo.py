"""The project a folder belongs to, for the hooks: a repository is a project."""

from __future__ import annotations

from pathlib import Path


def project_of(folder: str | Path) -> str:
    """The name of the git repository's root that holds folder (the nearest folder upward
    with a .git directory or file: a worktree's too), else the folder's own name. Every
    session started anywhere in one repository gets the same project; '' only for the
    filesystem's root."""
    start = Path(folder).expanduser().resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate.name
    return start.name
