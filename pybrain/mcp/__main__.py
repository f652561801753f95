"""`python -m pybrain.mcp [--profile full]`: `brain mcp`, the server on stdio."""

import sys

from pybrain.entry import main

sys.argv[1:1] = ["mcp"]
main()
