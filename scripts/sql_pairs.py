"""Duplicate pairs in sql/functions: places that share 6 or more lines.

    python scripts/sql_pairs.py [--list] [--min-lines N] [DIR]

Counts the pairs of files (a file may pair with itself) that share a run of 6
or more lines, each function's `CREATE ... AS $$` header collapsed to one line
first (a header is a signature, and signatures alike are not code written
twice). Two places share a run when its lines are the same, or have the same
shape: the same words and punctuation with other names, strings and numbers.
What is passed over:
- blank lines, comments (--, /* and the lines of a block comment), lines of
  punctuation alone, lines shorter than 3 characters;
- a run too thin to be code written twice, by shape: fewer than 4 tokens a
  line on average, or fewer than 2 statements (a line that assigns, starts
  with a statement word, or has 8 tokens or more); the same run to the letter
  still counts;
- a run found in more than 8 places: a pattern of the house (a loop's END
  LOOP; RETURN NEXT; ...), not one piece of code written again.

tests/test_sql_pairs.py runs it and holds the count at 12 or fewer. With
--list, each pair and the lines of its longest run. Exit status 0.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from collections import defaultdict
from pathlib import Path

WINDOW = 6  # lines a run has at least
MOST_PLACES = 8  # a run in more places than this is a pattern, not a duplicate
MIN_TOKENS = 4  # a shape-only run: tokens a line on average, at least
MIN_STATEMENTS = 2  # a shape-only run: statements, at least

HEADER_START = re.compile(r"^\s*CREATE\s+(OR\s+REPLACE\s+)?(FUNCTION|PROCEDURE)\b", re.IGNORECASE)
HEADER_END = re.compile(r"\bAS\s+\$[A-Za-z_]*\$", re.IGNORECASE)
COMMENT = ("--", "/*", "*", "'''", '"""')
PUNCTUATION = re.compile(r"[\s{}()\[\];,:.]*")
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9][0-9a-fA-FxX_.]*|\S")
STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
STATEMENT_WORDS = {
    "if", "for", "while", "loop", "return", "let", "var", "const", "else", "elif", "try", "except", "catch",
    "with", "raise", "throw", "yield", "await", "defer", "go", "do", "unsafe", "assert", "del", "goto",
    "continue", "break",
}  # fmt: skip
DECLARATION_WORDS = {
    "impl",
    "class",
    "struct",
    "enum",
    "interface",
    "trait",
    "union",
    "typedef",
    "pub",
    "export",
}
# a line like `x => y,` or `x: y,` (an argument by name, a map entry): not a statement
ARM_OPERAND = r"(?:[sx0_](?: [:.] [:.]? ?x)*(?: \( [sx0_ .:,]*\)?)?)"
ARM = re.compile(rf"^(?:x )?{ARM_OPERAND} (?:= >|:|- >) (?:x )?{ARM_OPERAND} [,;]?$")


def collapsed(text: str) -> list[str]:
    """The file's lines, each CREATE ... AS $$ header joined onto its first line (the lines
    it took stay, blank, so that line numbers are the file's)."""
    out: list[str] = []
    header: list[str] | None = None
    for line in text.split("\n"):
        if header is None and HEADER_START.match(line):
            header = []
        if header is None:
            out.append(line)
            continue
        header.append(line.strip())
        if HEADER_END.search(line):
            out.append(" ".join(header))
            out.extend([""] * (len(header) - 1))
            header = None
    if header is not None:  # a header that never reaches AS $$: left as it was
        out.extend(header)
    return out


def normal(line: str) -> str:
    """The line with its white space folded; empty when it does not count."""
    s = " ".join(line.split())
    if len(s) < 3 or PUNCTUATION.fullmatch(s):
        return ""
    if s.startswith(COMMENT) and not s.startswith("*/"):
        return ""
    return s


def tokens(line: str) -> list[str]:
    """Words, numbers, closed strings and single punctuation marks."""
    out: list[str] = []
    at = 0
    for m in STRING.finditer(line):
        out += TOKEN.findall(line[at : m.start()])
        out.append(m.group())
        at = m.end()
    return out + TOKEN.findall(line[at:])


def shape(line: str) -> tuple[str, list[str]]:
    """The line with each name as x, string as s and number as 0; and its names."""
    toks = tokens(line)
    names = [t for t in toks if t[0].isalpha() or t[0] == "_"]

    def letter(t: str) -> str:
        if t[0].isalpha() or t[0] == "_":
            return "x"
        if t[0] in "'\"":
            return "s"
        return "0" if t[0].isdigit() else t

    return " ".join(letter(t) for t in toks), names


def is_statement(shp: str, names: list[str]) -> bool:
    toks = shp.split()
    if not toks or toks[0] == "#" or ARM.match(shp):
        return False
    if names and names[0] in STATEMENT_WORDS:
        return True
    if names and names[0] in DECLARATION_WORDS and toks[-1] in "{(:" and "=" not in toks:
        return False
    for k, t in enumerate(toks):
        alone = k + 1 >= len(toks) or toks[k + 1] not in "=>"
        if t == "=" and alone and (k == 0 or toks[k - 1] not in "=!<>"):
            return True
    return len(toks) >= 8


def _key(parts: list[str]) -> str:
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=10).hexdigest()


def windows(lines: list[str], size: int) -> list[tuple[str, str, int, int]]:
    """Each run of `size` counted lines: (its key to the letter, its shape key or '' when too
    thin to count by shape, its first line, its last line)."""
    rows = []
    for n, line in enumerate(lines, 1):
        s = normal(line)
        if s:
            shp, names = shape(s)
            rows.append((s, shp, n, len(shp.split()), is_statement(shp, names)))
    out = []
    for i in range(len(rows) - size + 1):
        run = rows[i : i + size]
        thin = sum(r[3] for r in run) < MIN_TOKENS * size or sum(r[4] for r in run) < MIN_STATEMENTS
        out.append(
            (_key([r[0] for r in run]), "" if thin else _key([r[1] for r in run]), run[0][2], run[-1][2])
        )
    return out


def pairs(
    texts: dict[str, str], size: int = WINDOW
) -> dict[tuple[str, str], list[tuple[int, int, int, int]]]:
    """The pairs of files that share a run: (file, file) -> the runs' line spans."""
    exact: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    shaped: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for name in sorted(texts):
        for key, shp, first, last in windows(collapsed(texts[name]), size):
            exact[key].append((name, first, last))
            if shp:
                shaped[shp].append((name, first, last))
    found: dict[tuple[str, str], list[tuple[int, int, int, int]]] = defaultdict(list)
    for buckets in (exact, shaped):
        for places in buckets.values():
            places = sorted(set(places))
            if len(places) > MOST_PLACES:
                continue
            for j, (fa, a1, a2) in enumerate(places):
                for fb, b1, b2 in places[j + 1 :]:
                    if fa == fb and b1 <= a2:  # a run overlapping itself
                        continue
                    found[fa, fb].append((a1, a2, b1, b2))
    return dict(found)


def longest(spans: list[tuple[int, int, int, int]]) -> tuple[int, int, int, int]:
    """The longest run of a pair: its overlapping windows joined."""
    runs: list[list[int]] = []
    for a1, a2, b1, b2 in sorted(set(spans)):
        for r in runs[::-1][:4]:
            if r[0] < a1 <= r[1] + 1 and r[2] < b1 <= r[3] + 1:
                r[1], r[3] = max(r[1], a2), max(r[3], b2)
                break
        else:
            runs.append([a1, a2, b1, b2])
    best = max(runs, key=lambda r: (r[1] - r[0], -r[0]))
    return best[0], best[1], best[2], best[3]


def read(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.sql"))}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "folder", nargs="?", default=str(Path(__file__).resolve().parent.parent / "sql/functions")
    )
    parser.add_argument("--list", action="store_true", help="each pair and its longest run")
    parser.add_argument("--min-lines", type=int, default=WINDOW)
    args = parser.parse_args(argv)
    texts = read(Path(args.folder))
    found = pairs(texts, args.min_lines)
    lines = sum(len(t.splitlines()) for t in texts.values())
    print(f"{len(found)} pairs in {len(texts)} files ({lines} lines)")
    if args.list:
        rows = sorted(found.items(), key=lambda kv: (-len(set(kv[1])), kv[0]))
        for (fa, fb), spans in rows:
            a1, a2, b1, b2 = longest(spans)
            print(f"{fa}:{a1}-{a2} ~ {fb}:{b1}-{b2}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:  # (read by head, say)
        sys.exit(0)
