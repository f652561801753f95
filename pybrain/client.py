"""The Python client: each method of a Brain is one call of a brain.* SQL function.

A face: the Brain and its values live in pybrain.api (the seam between SQL and
Python: the catalogue, the transport, the typed methods and the one place a Brain
is built); the imports docs/python.md shows keep working from here.
"""

from __future__ import annotations

from pybrain.api.brain import Brain, open_brain
from pybrain.api.core import CATEGORIES, Space, WriteResult
from pybrain.api.transport import new_request_key
from pybrain.render import render_boot

__all__ = ["CATEGORIES", "Brain", "Space", "WriteResult", "new_request_key", "open_brain", "render_boot"]
