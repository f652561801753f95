"""pybrain: long-term memory for AI agents, inside PostgreSQL."""

from pybrain.build import RELEASE as __version__

__all__ = ["__version__"]
