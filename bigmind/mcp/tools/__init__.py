"""MCP tools: typed arguments, a docstring the agent reads, one call into the features.

Each module registers a group of tools (:func:`bigmind.mcp.server.build_server` calls them).
"""
