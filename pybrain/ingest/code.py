"""Source code: only what people wrote for people, its docstrings and comments.

Python files are read with `ast` and `tokenize`: the module docstring and
comments first, then one section per class and function (headed by its
qualified name, so a section keeps its heading when code above it moves)
with its docstring and the comments in its body. Other languages give their
comment blocks (`//`, `/* */`, `#`, `--`) in order. Short remarks (fewer
than three words) and pragmas (`noqa`, `type:`, `pragma`, shebangs) are left
out: they say nothing a reader searches for. The file's name is not part of
the text, so a renamed file keeps its hash and is recognised as renamed.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

NAME = "code"

_HASH = (".py", ".pyi", ".sh", ".bash", ".zsh", ".rb", ".pl", ".r", ".toml", ".yaml", ".yml", ".tf", ".nix")
_SLASH = (".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".go", ".rs", ".java", ".kt", ".scala", ".swift")
_C = (".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".php", ".css", ".scss", ".dart", ".zig")
_DASH = (".sql", ".lua", ".hs")
SUFFIXES = tuple(sorted(set(_HASH + _SLASH + _C + _DASH)))

_PRAGMA = re.compile(r"^(!|\s*(noqa|type:|pragma|pylint:|fmt:|eslint|ts-|@ts-|nolint|-\*-))", re.I)


def _keep(comment: str) -> bool:
    return len(comment.split()) >= 3 and not _PRAGMA.match(comment)


def _blocks(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Comment lines on consecutive source lines joined into blocks: (first line, text)."""
    out: list[tuple[int, list[str]]] = []
    for line, text in lines:
        if out and line == out[-1][0] + len(out[-1][1]):
            out[-1][1].append(text)
        else:
            out.append((line, [text]))
    blocks = []
    for line, texts in out:
        text = "\n".join(texts).strip()
        if _keep(text):
            blocks.append((line, text))
    return blocks


def _python(text: str, ref: str) -> str:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return _generic(text, ref, ".py")
    comments: list[tuple[int, str]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                comments.append((tok.start[0], tok.string.lstrip("#").strip()))
    except (tokenize.TokenError, SyntaxError):
        pass
    # the definitions, each with its line range and qualified name (innermost last)
    defs: list[tuple[int, int, str, str, str | None]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                what = "class" if isinstance(child, ast.ClassDef) else "def"
                defs.append(
                    (child.lineno, child.end_lineno or child.lineno, name, what, ast.get_docstring(child))
                )
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")

    def owner(line: int) -> str | None:
        best = None
        for start, end, name, _, _ in defs:
            if start <= line <= end and (best is None or start >= best[0]):
                best = (start, name)
        return best[1] if best else None

    by_owner: dict[str | None, list[str]] = {}
    for line, block in _blocks(comments):
        by_owner.setdefault(owner(line), []).append(block)
    parts = []
    doc = ast.get_docstring(tree)
    if doc:
        parts.append(doc.strip())
    parts += by_owner.get(None, [])
    for _, _, name, what, docstring in sorted(defs):
        body = ([docstring.strip()] if docstring and docstring.strip() else []) + by_owner.get(name, [])
        if body:
            parts.append(f"## {what} {name}")
            parts += body
    return "\n\n".join(parts)


def _generic(text: str, ref: str, suffix: str) -> str:
    lines: list[tuple[int, str]] = []
    blocks: list[tuple[int, str]] = []
    if suffix in _SLASH or suffix in _C:
        for m in re.finditer(r"/\*(.*?)\*/", text, re.S):
            body = "\n".join(re.sub(r"^\s*\*+ ?", "", x).rstrip() for x in m.group(1).splitlines()).strip()
            if _keep(body):
                blocks.append((text.count("\n", 0, m.start()) + 1, body))
        marker = r"//+!?"
    elif suffix in _DASH:
        marker = r"--+"
    else:
        marker = r"#+"
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(rf"\s*{marker}\s?(.*)$", line)
        if m:
            lines.append((n, m.group(1).rstrip()))
    blocks += _blocks(lines)
    blocks.sort()
    return "\n\n".join(b for _, b in blocks)


def extract(text: str, ref: str) -> str:
    suffix = "." + ref.rsplit(".", 1)[-1].lower() if "." in ref.rsplit("/", 1)[-1] else ""
    if suffix in (".py", ".pyi"):
        return _python(text, ref)
    return _generic(text, ref, suffix)
