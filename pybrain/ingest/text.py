"""Plain text documents: stored as written (brain.chunk_text cuts them at paragraphs,
then sentences)."""

from __future__ import annotations

NAME = "text"
SUFFIXES = (".txt", ".text", ".rst", ".adoc", ".org", ".log")


def extract(text: str, ref: str) -> str:
    return text
