"""The HTTP gateway: MCP over streamable HTTP, the REST API and the pages, for many users."""
