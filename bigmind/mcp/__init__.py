"""The MCP surface: the server, its tools and what they render for the agent."""
