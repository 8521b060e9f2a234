"""Use cases: what one request does, written once for every surface (the MCP tools, the REST
API, the CLI), with its bookkeeping (the background embedder woken, notices told). Surfaces
parse arguments, call one function here, and render what it returns."""
