"""Baseline for the cold-start benchmark: a bare FastMCP server with one tool, on stdio.

Run with the same interpreter as ``bigmind serve``; the difference between the two
start-up times is what BigMind itself adds on top of FastMCP.
"""

from fastmcp import FastMCP

mcp = FastMCP("bare")


@mcp.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


if __name__ == "__main__":
    mcp.run(transport="stdio", show_banner=False)
