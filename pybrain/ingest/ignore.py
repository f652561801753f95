"""`.gitignore`-style ignore files: the patterns of one file, matched as git matches them.

Supported: blank lines and `#` comments, `!` to re-include, a trailing `/`
for directories only, a `/` at the start or in the middle anchoring the
pattern to the file's directory, `*`, `?`, `[...]` and `**` (any number of
directories). The last matching pattern decides; as in git, a file inside an
ignored directory stays ignored (the walk does not enter the directory).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# The ignore files a walk reads in every directory it enters.
IGNORE_FILES = (".gitignore", ".brainignore")


@dataclass(frozen=True)
class Rule:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


def _translate(glob: str) -> str:
    """A gitignore glob (without its anchoring slash) as a regular expression over a relative path."""
    out = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = glob.find("]", i + 2)
            if end == -1:
                out.append(re.escape(c))
                i += 1
            else:
                body = glob[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
                i = end + 1
        elif c == "\\" and i + 1 < len(glob):
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def parse(lines: list[str]) -> list[Rule]:
    rules = []
    for raw in lines:
        line = raw.rstrip("\n").rstrip("\r")
        # trailing spaces are ignored unless escaped
        if not line.endswith("\\ "):
            line = line.rstrip(" ")
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate or line.startswith("\\"):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        pattern = _translate(line)
        if not anchored:
            pattern = "(?:.*/)?" + pattern
        rules.append(Rule(re.compile(f"^{pattern}$"), negate, dir_only))
    return rules


@dataclass
class IgnoreFile:
    """The rules of one ignore file, relative to the directory that holds it."""

    base: Path
    rules: list[Rule]

    def decide(self, path: Path, is_dir: bool) -> bool | None:
        """True (ignored), False (re-included) or None (no rule matches)."""
        try:
            rel = path.relative_to(self.base).as_posix()
        except ValueError:
            return None
        decision = None
        for rule in self.rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.match(rel):
                decision = not rule.negate
        return decision


def load(directory: Path) -> list[IgnoreFile]:
    """The ignore files of one directory (those that exist and can be read)."""
    found = []
    for name in IGNORE_FILES:
        f = directory / name
        if f.is_file():
            try:
                rules = parse(f.read_text(encoding="utf-8", errors="replace").splitlines())
            except OSError:
                continue
            found.append(IgnoreFile(directory, rules))
    return found


def ignored(path: Path, is_dir: bool, stack: list[IgnoreFile]) -> bool:
    """Whether the ignore files in force (outermost first) ignore path: the deepest that decides wins."""
    decision = False
    for f in stack:
        d = f.decide(path, is_dir)
        if d is not None:
            decision = d
    return decision
