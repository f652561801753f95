"""The dashboard (`brain ui`): server-rendered pages over the brain.* SQL functions."""

from pybrain.serve.ui.app import Dashboard, create_app

__all__ = ["Dashboard", "create_app"]
