"""From the paths a user names to documents: files, folders (walked, with their
ignore files), globs and standard input; each file read, checked and turned
into text by its format. A path that cannot be read is reported, and the rest
goes on.

Nothing is read from outside the root (docs/ingest.md, "What is read"): a path
named on the command line, or matched by a glob, is resolved (its symbolic
links followed) and must lie under the root; a folder's walk enters no linked
folder and reads no linked file that leads out of the folder. Only regular
files are read, and none over MAX_BYTES (checked on the open file, before it is
read; standard input is read up to one byte past it)."""

from __future__ import annotations

import glob
import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from pybrain.ingest import code, ignore, markdown, text

FORMATS: tuple[ModuleType, ...] = (markdown, text, code)
# Directories no walk enters: version control.
SKIP_DIRS = frozenset({".git", ".hg", ".svn"})
# The largest document (a file, or standard input): what one call of brain.ingest_documents
# chunks and writes within the application role's statement timeout (10 s) with room to spare
# (docs/ingest.md, "How large").
MAX_BYTES = 2_000_000
STDIN = "-"
TOO_LARGE = "BR030"


@dataclass
class Document:
    ref: str  # the stable external id: the path relative to the root, POSIX style
    format: str
    text: str
    hash: str  # sha256 of text
    path: str  # as named, for messages
    # The chunks as the reader cut them ([{headline, section, body}]), else None: the
    # database cuts the text (brain.chunk_text).
    chunks: list[dict[str, str]] | None = None

    def as_json(self, with_text: bool) -> dict[str, Any]:
        doc: dict[str, Any] = {"ref": self.ref, "hash": self.hash, "format": self.format}
        if with_text:
            doc["text"] = self.text
            if self.chunks is not None:
                doc["chunks"] = self.chunks
        return doc


@dataclass
class Problem:
    path: str
    message: str
    code: str | None = None  # BR030 (pybrain.errors.InputTooLarge): over MAX_BYTES


def _too_large(what: str) -> str:
    return f"{what} is over the {MAX_BYTES / 1_000_000:g} MB a document may be: split it or leave it out"


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


@dataclass
class Listing:
    documents: list[Document] = field(default_factory=list)
    # Where the listing is complete: '' (all of the root), 'dir/' (everything under dir)
    scopes: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # files in walked folders with no format of ours, or no text
    skipped: list[str] = field(default_factory=list)


def format_of(name: str) -> ModuleType | None:
    lower = name.lower()
    for f in FORMATS:
        if lower.endswith(f.SUFFIXES):
            return f
    return None


def _decode(raw: bytes) -> str:
    """UTF-8 text, or ValueError saying why the bytes are not text."""
    if b"\0" in raw[:8192]:
        raise ValueError("binary file (it holds NUL bytes)")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


class Collector:
    def __init__(
        self, root: Path, stdin_ref: str, read_stdin: Callable[[], bytes], *, named_root: bool = True
    ) -> None:
        self.root = Path(os.path.abspath(root))
        self.real_root = os.path.realpath(root)
        # False: the root is the current folder by default, and a folder named outside it
        # is its own root (as tar and rsync take a folder named from anywhere)
        self.named_root = named_root
        self.stdin_ref = stdin_ref
        self.read_stdin = read_stdin
        self.listing = Listing()
        self._refs: set[str] = set()

    def ref_of(self, path: Path) -> str:
        absolute = Path(os.path.abspath(path))
        try:
            return absolute.relative_to(self.root).as_posix()
        except ValueError:
            return absolute.as_posix()

    def _problem(self, path: str, message: str, code: str | None = None) -> None:
        self.listing.problems.append(Problem(path, message, code))

    def _outside(self, path: Path | str, shown: str) -> bool:
        """Whether path, resolved, lies outside the root (then it is reported, not read)."""
        target = os.path.realpath(path)
        if _under(target, self.real_root):
            return False
        self._problem(
            shown,
            f"resolves to {target}, outside the root {self.real_root}: not read "
            "(name the folder to ingest, run from it, or give --root)",
        )
        return True

    def _read(self, path: Path, named: str) -> bytes | None:
        """The bytes of a regular file of at most MAX_BYTES, or None (the problem reported).
        The type and size are checked on the open file before anything is read."""
        try:
            fd = os.open(os.path.realpath(path), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            self._problem(named, f"cannot be read ({exc.strerror or exc})")
            return None
        with os.fdopen(fd, "rb") as stream:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                self._problem(named, "not a regular file or folder")
                return None
            if info.st_size > MAX_BYTES:
                self._problem(named, _too_large(f"{info.st_size:,} bytes"), TOO_LARGE)
                return None
            try:
                raw = stream.read(MAX_BYTES + 1)
            except OSError as exc:
                self._problem(named, f"cannot be read ({exc.strerror or exc})")
                return None
        if len(raw) > MAX_BYTES:  # it grew since
            self._problem(named, _too_large("it"), TOO_LARGE)
            return None
        return raw

    def _add(self, named: str, ref: str, raw: bytes, fmt: ModuleType, walked: bool) -> None:
        if ref in self._refs:
            return
        try:
            content = _decode(raw)
        except ValueError as exc:
            self._problem(named, str(exc))
            return
        extracted = fmt.extract(content, ref)
        if not extracted.strip():
            if walked:
                self.listing.skipped.append(named)
            else:
                self._problem(named, f"no {fmt.NAME} text to ingest")
            return
        self._refs.add(ref)
        digest = hashlib.sha256(extracted.encode("utf-8")).hexdigest()
        self.listing.documents.append(Document(ref, fmt.NAME, extracted, digest, named))

    def file(self, path: Path, named: str, walked: bool) -> None:
        fmt = format_of(path.name)
        if fmt is None:
            if walked:
                self.listing.skipped.append(named)
                return
            fmt = text  # a file named on its own is read as plain text
        if self._outside(path, named):
            return
        raw = self._read(path, named)
        if raw is None:
            return
        self._add(named, self.ref_of(path), raw, fmt, walked)

    def _ignore_stack(self, directory: Path) -> list[ignore.IgnoreFile]:
        """The ignore files of the root and of each folder from it down to directory."""
        absolute = Path(os.path.abspath(directory))
        chain = [absolute]
        if absolute != self.root and self.root in absolute.parents:
            chain = [p for p in reversed(absolute.parents) if p == self.root or self.root in p.parents]
            chain.append(absolute)
        stack: list[ignore.IgnoreFile] = []
        for d in chain[:-1]:
            stack += ignore.load(d)
        return stack

    def directory(self, path: Path, named: str) -> None:
        if self._outside(path, named):
            return
        ref = self.ref_of(path)
        self.listing.scopes.append("" if ref in ("", ".") else ref.rstrip("/") + "/")
        self._walk(Path(os.path.abspath(path)), self._ignore_stack(path), named, os.path.realpath(path))

    def _leaves(self, path: str, tree: str, shown: str) -> bool:
        """Whether a symbolic link points outside `tree` (then it is reported, not read)."""
        target = os.path.realpath(path)
        if target == tree or target.startswith(tree.rstrip(os.sep) + os.sep):
            return False
        self._problem(shown, "a symbolic link to a file outside the folder ingested: skipped")
        return True

    def _walk(self, directory: Path, stack: list[ignore.IgnoreFile], named: str, tree: str) -> None:
        stack = stack + ignore.load(directory)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            self._problem(str(directory), f"cannot be listed ({exc.strerror or exc})")
            return
        for entry in entries:
            path = Path(entry.path)
            shown = os.path.join(named, os.path.relpath(entry.path, directory)) if named else entry.path
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if entry.name in SKIP_DIRS or ignore.ignored(path, True, stack):
                    continue
                self._walk(path, stack, shown, tree)
            elif (
                entry.is_file()
                and entry.name not in ignore.IGNORE_FILES
                and not ignore.ignored(path, False, stack)
                and not (entry.is_symlink() and self._leaves(entry.path, tree, shown))
            ):
                self.file(path, shown, walked=True)

    def stdin(self) -> None:
        try:
            raw = self.read_stdin()
        except OSError as exc:
            self._problem(STDIN, f"standard input cannot be read ({exc.strerror or exc})")
            return
        if len(raw) > MAX_BYTES:  # the same bound as a file's
            self._problem(STDIN, _too_large("standard input"), TOO_LARGE)
            return
        self._add(STDIN, self.stdin_ref, raw, format_of(self.stdin_ref) or markdown, walked=False)

    def path(self, arg: str) -> None:
        if arg == STDIN:
            self.stdin()
            return
        p = Path(arg)
        if (
            p.is_dir()
            and not self.named_root
            and not p.is_symlink()
            and not _under(os.path.realpath(p), self.real_root)
        ):
            # the root of its walk: its refs start with its name (notes/guide.md, as from
            # its parent; a scope of its own, so no other document is taken as removed),
            # and nothing of it that leads out of it (a link) is read
            outer = (self.root, self.real_root)
            self.root = Path(os.path.realpath(p)).parent
            self.real_root = str(self.root)
            try:
                self.directory(p, arg)
            finally:
                self.root, self.real_root = outer
        elif p.is_dir():
            self.directory(p, arg)
        elif p.is_file():
            self.file(p, arg, walked=False)
        elif p.exists():
            self._problem(arg, "not a regular file or folder")
        elif glob.has_magic(arg):
            matches = sorted(glob.glob(arg, recursive=True))
            if not matches:
                self._problem(arg, "matches no file")
            for m in matches:
                mp = Path(m)
                if mp.is_dir():
                    self.directory(mp, m)
                elif mp.is_file():
                    self.file(mp, m, walked=True)  # (a match that resolves outside the root is not read)
        else:
            self._problem(arg, "no such file or folder")


def collect(
    paths: list[str],
    root: Path | str | None = None,
    stdin_ref: str = "stdin",
    read_stdin: Callable[[], bytes] | None = None,
) -> Listing:
    """The documents under paths, the scopes whose listing they complete, and the problems met.
    root None: the current folder, and a folder named outside it is its own root."""
    import sys

    # Standard input is read up to one byte past the bound, so a larger one is refused unread.
    collector = Collector(
        Path(root if root is not None else "."),
        stdin_ref,
        read_stdin or (lambda: sys.stdin.buffer.read(MAX_BYTES + 1)),
        named_root=root is not None,
    )
    for arg in paths:
        collector.path(arg)
    return collector.listing
