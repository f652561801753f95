"""The generated parts of the documentation: `make docs` rewrites them, tests/test_docgen.py checks them.

A generated part stands between two HTML comments, in the manner of
sqlite-utils' cog blocks, and everything between them is replaced:

    <!-- signature: brain.pin brain.unpin -->
    ```sql
    brain.pin(id bigint, source text DEFAULT NULL) RETURNS boolean
    ...
    ```
    <!-- /signature -->

- `signature: NAME ...`: a fenced block with every overload of each public
  function named (pg_get_function_arguments, pg_get_function_result), or the
  columns of a view, as the migrated database has them.
- `errors`: the range of error codes pybrain.errors maps (`BR001`…`BR0NN`).
- `words: LIST`: a word list of the database, read from the CHECK constraint
  of its column (pybrain.words names them).
- `environment: GROUP`: the table of a group of pybrain.config.ENVIRONMENT.
- `mcp: PROFILE tools|tokens`: how many tools `brain mcp --profile PROFILE` lists,
  and what their schemas cost an agent (pybrain.mcp.schema_tokens), in prose
  (`1,846`); inline, between its comments.

Run as a script it starts a throwaway embedded server, migrates an empty
database and rewrites the files in place.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import psycopg
from schema_dump import scratch_url

from pybrain import config, db, words
from pybrain.errors import _BY_SQLSTATE

ROOT = Path(__file__).resolve().parent.parent
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

BLOCK = re.compile(
    r"<!-- (?P<kind>[a-z]+)(?:: (?P<args>[^>]*?))? -->(?P<body>.*?)<!-- /(?P=kind) -->",
    re.DOTALL,
)
# A signature on one line up to this width, else one argument a line.
WIDTH = 100
# pg_get_function_arguments spells types out; the docs use PostgreSQL's shorter names.
SHORT_TYPES = {"timestamp with time zone": "timestamptz"}


def _short(text: str) -> str:
    for long, short in SHORT_TYPES.items():
        text = text.replace(long, short)
    return text


def _split(items: str) -> list[str]:
    """A list `a, b, c` split at its top-level commas (not inside quotes or brackets)."""
    parts, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(items):
        if ch == "'":
            quoted = not quoted
        elif quoted:
            continue
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(items[start:i].strip())
            start = i + 1
    tail = items[start:].strip()
    return [*parts, tail] if tail else parts


def _lines(head: str, items: list[str], tail: str) -> str:
    """`head(items)tail` on one line when it fits, else one item a line."""
    one = f"{head}({', '.join(items)}){tail}"
    if len(one) <= WIDTH or not items:
        return one
    inner = ",\n".join(f"    {item}" for item in items)
    return f"{head}(\n{inner}\n){tail}"


def _argument(arg: str) -> str:
    """`name type DEFAULT value`, without the cast to its own type PostgreSQL adds to the value."""
    declared, _, default = arg.partition(" DEFAULT ")
    kind = declared.split(" ", 1)[-1]
    return f"{declared} DEFAULT {default.removesuffix('::' + kind)}" if default else declared


def _packed(head: str, items: list[str], tail: str) -> str:
    """`head(items)tail`, the items filling lines up to WIDTH under the first one."""
    indent = " " * (len(head) + 1)
    lines, line = [], f"{head}("
    for i, item in enumerate(items):
        piece = item + ("," if i < len(items) - 1 else tail)
        if len(line) + len(piece) + 1 > WIDTH and line.strip():
            lines.append(line.rstrip())
            line = indent
        line += piece + " "
    return "\n".join([*lines, line.rstrip()])


def signature(name: str, arguments: str, result: str) -> str:
    args = [_argument(a) for a in _split(_short(arguments))]
    result = _short(result)
    table = re.fullmatch(r"TABLE\((.*)\)", result, re.DOTALL)
    columns = _split(table.group(1)) if table else []
    returns = f"RETURNS TABLE ({', '.join(columns)})" if table else f"RETURNS {result}"
    one = f"brain.{name}({', '.join(args)}) {returns}"
    if len(one) <= WIDTH:
        return one
    head = _lines(f"brain.{name}", args, "")
    if len(head.rsplit("\n", 1)[-1]) + 1 + len(returns) <= WIDTH:
        return f"{head} {returns}"
    if not table:
        return f"{head}\n{returns}"
    if "\n" in head:  # `) RETURNS TABLE (...` under the arguments
        return head.rsplit("\n", 1)[0] + "\n" + _packed(") RETURNS TABLE ", columns, ")")
    return head + "\n" + (returns if len(returns) <= WIDTH else _packed("RETURNS TABLE ", columns, ")"))


def catalog(conn: psycopg.Connection) -> dict[str, list[str]]:
    """Each public function of schema brain (overloads in order of arity) and view, as the docs show it."""
    out: dict[str, list[str]] = {}
    for name, arguments, result in conn.execute(
        """
        SELECT p.proname, pg_get_function_arguments(p.oid), pg_get_function_result(p.oid)
          FROM pg_proc p
         WHERE p.pronamespace = 'brain'::regnamespace AND p.proname !~ '^_' AND p.prokind = 'f'
         ORDER BY p.proname, p.pronargs, pg_get_function_arguments(p.oid)
        """
    ):
        out.setdefault(name, []).append(signature(name, arguments, result))
    for name, columns in conn.execute(
        """
        SELECT c.relname, string_agg(a.attname, ', ' ORDER BY a.attnum)
          FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
         WHERE c.relnamespace = 'brain'::regnamespace AND c.relkind = 'v' AND c.relname !~ '^_'
         GROUP BY c.relname
        """
    ):
        out[name] = [f"VIEW brain.{name} ({columns})"]
    return out


def check_constraint(conn: psycopg.Connection, table: str, column: str) -> tuple[str, ...]:
    """The values a `CHECK (column IN (...))` of brain.<table> allows, in the order it lists them."""
    row = conn.execute(
        """
        SELECT pg_get_constraintdef(c.oid)
          FROM pg_constraint c
         WHERE c.conrelid = %s::regclass AND c.contype = 'c'
           AND c.conkey = ARRAY[(SELECT attnum FROM pg_attribute
                                  WHERE attrelid = %s::regclass AND attname = %s)]
           AND pg_get_constraintdef(c.oid) ~ 'ANY \\(ARRAY\\['
        """,
        (f"brain.{table}", f"brain.{table}", column),
    ).fetchone()
    if row is None:
        raise LookupError(f"brain.{table}.{column} has no CHECK (... IN (...)) constraint")
    return tuple(re.findall(r"'([^']*)'::text", row[0]))


def word_lists(conn: psycopg.Connection) -> dict[str, tuple[str, ...]]:
    """Each word list pybrain.words names, as the database's constraints have it."""
    return {name: check_constraint(conn, table, column) for name, (table, column) in words.SOURCES.items()}


def prose_list(values: tuple[str, ...]) -> str:
    quoted = [f"`{v}`" for v in values]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def error_range() -> str:
    codes = sorted(_BY_SQLSTATE)
    return f"`{codes[0]}`…`{codes[-1]}`"


def mcp_figure(args: str) -> str:
    """A figure of an MCP profile, as tools/list gives it: its tool count, or its schemas' tokens."""
    import anyio

    from pybrain.mcp import Service, build_server, schema_tokens

    profile, what = args.split()
    tools = anyio.run(build_server(Service(brain=None), profile).list_tools)  # type: ignore[arg-type]
    if what == "tools":
        return str(len(tools))
    if what == "tokens":
        return f"{schema_tokens(tools):,}"
    raise LookupError(f"<!-- mcp: {args} -->: say tools or tokens")


def environment_table(group: str) -> str:
    rows = [v for v in config.ENVIRONMENT if v.group == group]
    if not rows:
        raise LookupError(f"pybrain.config.ENVIRONMENT has no variable of group {group!r}")
    if group == "embedder":
        lines = ["| variable | default | meaning |", "|---|---|---|"]
        lines += [f"| `{v.name}` | {v.default} | {v.meaning} |" for v in rows]
    else:
        lines = ["| variable | meaning |", "|---|---|"]
        lines += [f"| `{v.name}` | {v.meaning} |" for v in rows]
    return "\n" + "\n".join(lines) + "\n"


class Generator:
    """Fills the blocks of a text from one database's catalog."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.functions = catalog(conn)
        self.words = word_lists(conn)
        self.used: set[str] = set()

    def body(self, kind: str, args: str) -> str:
        if kind == "signature":
            names = [n.removeprefix("brain.") for n in args.split()]
            missing = [n for n in names if n not in self.functions]
            if missing:
                raise LookupError(f"no public function or view brain.{missing[0]} in the database")
            self.used.update(names)
            out, previous = "", ""
            for name in names:  # a signature of several lines stands apart
                block = "\n".join(self.functions[name])
                if previous and ("\n" in block or "\n" in previous):
                    out += "\n"
                out, previous = out + block + "\n", block
            return "\n```sql\n" + out + "```\n"
        if kind == "errors":
            return error_range()
        if kind == "words":
            return prose_list(self.words[args])
        if kind == "environment":
            return environment_table(args)
        if kind == "mcp":
            return mcp_figure(args)
        raise LookupError(f"unknown generated block <!-- {kind} -->")

    def fill(self, text: str) -> str:
        def one(m: re.Match[str]) -> str:
            kind, args = m["kind"], m["args"] or ""
            head = f"<!-- {kind}: {args} -->" if args else f"<!-- {kind} -->"
            return f"{head}{self.body(kind, args)}<!-- /{kind} -->"

        return BLOCK.sub(one, text)


def main() -> None:
    with scratch_url() as url, psycopg.connect(url, autocommit=True) as conn:
        db.migrate(conn)
        gen = Generator(conn)
        for path in FILES:
            text = path.read_text(encoding="utf-8")
            new = gen.fill(text)
            if new != text:
                path.write_text(new, encoding="utf-8")
                print(f"rewrote {path.relative_to(ROOT)}", file=sys.stderr)
        undocumented = sorted(set(gen.functions) - gen.used)
        if undocumented:
            print("no signature block: " + ", ".join(f"brain.{n}" for n in undocumented), file=sys.stderr)


if __name__ == "__main__":
    main()
