"""MCP tools: typed arguments, a docstring the agent reads, one call into the features.

Each ``*_tools`` module defines a group of tools as functions in its ``catalog``; the runtime
comes as the parameter ``rt`` (:data:`bigmind.mcp.tools.base.RUNTIME`).
:func:`bigmind.mcp.server.build_server` serves the catalogs of the profile.
"""
