"""Thin launcher: ``python src/server.py`` starts the BigMind MCP server on stdio."""

import sys
from pathlib import Path

# Run from a checkout without installing: make the sibling `bigmind` package importable.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bigmind.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["serve", *sys.argv[1:]]))
