"""One-off measurements kept for their figures; `make bench` runs none of them (README.md)."""

from __future__ import annotations

import argparse


def parser(module: str, doc: str) -> argparse.ArgumentParser:
    """An experiment's argument parser: `python -m MODULE`, described by its docstring's first paragraph."""
    return argparse.ArgumentParser(prog=f"python -m {module}", description=doc.split("\n\n")[0])
