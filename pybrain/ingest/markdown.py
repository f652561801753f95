"""Markdown documents: stored as written (brain.chunk_text cuts them along their headings,
code fences and tables); a YAML front matter block is left out, its title kept as the heading."""

from __future__ import annotations

import re

NAME = "markdown"
SUFFIXES = (".md", ".markdown", ".mdown", ".mkd", ".mdx")

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)
_TITLE = re.compile(r"^title:[ \t]*(.+?)[ \t]*$", re.M)


def extract(text: str, ref: str) -> str:
    m = _FRONT_MATTER.match(text)
    if not m:
        return text
    body = text[m.end() :]
    title = _TITLE.search(m.group(1))
    if title and not re.match(r"\s*#\s", body):
        name = title.group(1).strip().strip("'\"")
        body = f"# {name}\n\n{body}"
    return body
