"""Where pybrain keeps its files, without importing more than the standard library (the
hook process's side reads it before anything else is imported)."""

from __future__ import annotations

import os


def home() -> str:
    """BRAIN_HOME as pybrain.config reads it, without importing it (psycopg comes with it)."""
    value = os.environ.get("BRAIN_HOME")
    if value:
        return os.path.realpath(os.path.expanduser(value))
    if os.name == "posix" and os.geteuid() == 0:
        return "/var/lib/pybrain"
    import platformdirs

    return platformdirs.user_data_dir("pybrain")
